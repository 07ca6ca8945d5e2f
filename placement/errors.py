"""Errors raised by placement's services and rendered by its API as
``{"errors": [{"status", "title", "detail", "code", "request_id"}]}``.

``code`` values are upstream Placement's (shown from microversion 1.23)."""

from collections.abc import Mapping

DEFAULT = "placement.undefined_code"
INVENTORY_INUSE = "placement.inventory.inuse"
CONCURRENT_UPDATE = "placement.concurrent_update"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_CANNOT_DELETE_PARENT = "placement.resource_provider.cannot_delete_parent"
RESOURCE_PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
ILLEGAL_DUPLICATE_QUERYPARAM = "placement.query.duplicate_key"
QUERYPARAM_BAD_VALUE = "placement.query.bad_value"
QUERYPARAM_MISSING_VALUE = "placement.query.missing_value"


class PlacementError(Exception):
    status = 500

    def __init__(self, detail: str, code: str = DEFAULT, headers: Mapping[str, str] | None = None) -> None:

        super().__init__(detail)
        self.detail = detail
        self.code = code
        self.headers = headers or {}


class Invalid(PlacementError):
    status = 400


class Unauthorized(PlacementError):
    status = 401


class Forbidden(PlacementError):
    status = 403


class NotFound(PlacementError):
    status = 404


class MethodNotAllowed(PlacementError):
    status = 405


class NotAcceptable(PlacementError):
    status = 406


class Conflict(PlacementError):
    status = 409


class UnsupportedMediaType(PlacementError):
    status = 415


class ServiceUnavailable(PlacementError):
    status = 503
