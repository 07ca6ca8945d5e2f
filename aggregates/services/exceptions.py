"""Errors raised by service functions. Each surface renders them its own way
(the compute API as Nova faults, the console as form errors)."""


class ServiceError(Exception):
    status = 400

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class Invalid(ServiceError):
    """The request breaks a rule: nothing was changed."""

    status = 400


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


class Forbidden(ServiceError):
    status = 403
