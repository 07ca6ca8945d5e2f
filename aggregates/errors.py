"""Errors raised by service functions. Each surface renders them its own way
(the compute API as Nova faults, the console as form errors).

``field`` names the input the error is about (``"name"``, ``"hosts"``,
``"availability_zone"``, ``"key"``...), or is None when the error concerns
the request as a whole; the console shows the error beside that field."""

from __future__ import annotations


class ServiceError(Exception):
    status = 400

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class Invalid(ServiceError):
    """The request breaks a rule: nothing was changed."""

    status = 400


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


class Forbidden(ServiceError):
    status = 403

    @classmethod
    def by_policy(cls, policy: str) -> Forbidden:
        """The refusal of an action ``policy`` does not allow, in Nova's words."""
        return cls(f"Policy doesn't allow {policy} to be performed.")


class Unavailable(ServiceError):
    """A service this one depends on (placement) could not be reached or
    refused unexpectedly: nothing was changed; retrying later may succeed."""

    status = 503
