"""Nova-style faults: ``{"<faultName>": {"code": N, "message": "..."}}``."""

import logging
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, UnreadablePostError
from rest_framework import exceptions as drf
from rest_framework.response import Response

from aggregates.errors import ServiceError
from config.json_bodies import escape
from config.public_url import keystone_uri

log = logging.getLogger(__name__)

FAULT_NAMES = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "itemNotFound",
    405: "badMethod",
    409: "conflictingRequest",
    413: "overLimit",
    415: "badMediaType",
    429: "overLimit",
    501: "notImplemented",
    503: "serviceUnavailable",
}


class ApiError(Exception):
    """An HTTP error with a Nova fault body."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class BodyNotAccepted(drf.ParseError):
    """A JSON body the safe parser refused (too deep, NaN, NUL, ...): a 400
    that says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


TOO_LARGE = "Request is too large."
UNEXPECTED = "Unexpected API Error. Please report this at the Corral issue tracker and attach the request id."


def fault_body(status: int, message: str) -> dict[str, dict[str, Any]]:
    # Messages may echo user values: never let one make the body unencodable.
    return {FAULT_NAMES.get(status, "computeFault"): {"code": status, "message": escape(message)}}


def fault_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return Response(fault_body(status, message), status=status, headers=headers)


def compute_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF exception handler for the compute and identity APIs."""
    if isinstance(exc, ApiError):
        return fault_response(exc.status, exc.message, exc.headers)
    if isinstance(exc, ServiceError):
        return fault_response(exc.status, exc.message)
    if isinstance(exc, BodyNotAccepted):
        return fault_response(400, exc.message)
    if isinstance(exc, drf.ParseError):
        return fault_response(400, "Malformed request body")
    if isinstance(exc, RequestDataTooBig):
        return fault_response(413, TOO_LARGE)
    if isinstance(exc, UnreadablePostError):
        return fault_response(400, "The request body could not be read.")
    if isinstance(exc, (drf.NotAuthenticated, drf.AuthenticationFailed)):
        return fault_response(
            401,
            "The request you have made requires authentication.",
            {"WWW-Authenticate": f'Keystone uri="{keystone_uri(context["request"], "/identity")}"'},
        )
    if isinstance(exc, drf.PermissionDenied):
        return fault_response(403, str(exc.detail))
    if isinstance(exc, drf.MethodNotAllowed):
        return fault_response(405, "The method specified is not allowed for this resource.")
    if isinstance(exc, drf.UnsupportedMediaType):
        return fault_response(415, "The request media type is not supported by this server.")
    if isinstance(exc, drf.NotAcceptable):
        return fault_response(406, "The requested media type is not acceptable.")
    if isinstance(exc, (drf.NotFound, Http404)):
        return fault_response(404, "The resource could not be found.")
    if isinstance(exc, drf.APIException):
        return fault_response(exc.status_code, str(exc.detail))
    request = context.get("request")
    log.exception("Unexpected API error (request %s)", getattr(request, "request_id", None) or "-")
    return fault_response(500, UNEXPECTED)
