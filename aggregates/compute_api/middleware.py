"""Request ids, as OpenStack services hand them out, and the last line of
defence of the APIs: a server error Django itself renders (an HTML "Server
Error (500)") becomes a JSON body in the format of the API that was called,
and so does the 411 of a chunked body the server cannot read
(config/chunked.py)."""

import json
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.response import HttpResponseBase

from config import chunked, json_bodies, request_context

from .errors import fault_body

if TYPE_CHECKING:

    class RequestWithId(HttpRequest):
        """A request once RequestIdMiddleware has seen it (for type checking only)."""

        request_id: str
        global_request_id: str

else:
    RequestWithId = HttpRequest

log = logging.getLogger(__name__)
# Where Django itself logs a refused Host header.
security_log = logging.getLogger("django.security.DisallowedHost")

GENERIC = "An unexpected error occurred; the request id identifies it in the service's log."


def _api_of(path: str) -> str | None:
    if settings.CORRAL_SERVICE == "placement" or path.startswith("/placement"):
        return "placement"
    for prefix in ("compute", "identity", "image"):
        if path == f"/{prefix}" or path.startswith(f"/{prefix}/"):
            return prefix
    return None


def _error_body(api: str, status: int, request_id: str, message: str = GENERIC) -> dict[str, Any]:
    """An error (a 400, 411 or 500) in ``api``'s format (Nova: ``badRequest``,
    ``computeFault`` for the others)."""
    title = HTTPStatus(status).phrase
    if api == "compute":
        return fault_body(status, message)
    if api == "identity":
        return {"error": {"code": status, "title": title, "message": message}}
    if api == "image":
        return {"message": f"{message}<br /><br />\n\n\n", "code": f"{status} {title}", "title": title}
    error: dict[str, Any] = {"status": status, "title": title, "detail": message, "request_id": request_id}
    if status < 500:
        error["code"] = "placement.undefined_code"
    return {"errors": [error]}


def _served_at(request: HttpRequest) -> tuple[str, ...]:
    """The base URLs this request reached the server at: its Host header, and
    the address the server listens on (SERVER_NAME and SERVER_PORT)."""
    scheme = "https" if request.META.get("wsgi.url_scheme") == "https" else "http"
    hosts = {
        request.META.get("HTTP_HOST", ""),
        f"{request.META.get('SERVER_NAME', '')}:{request.META.get('SERVER_PORT', '')}",
    }
    return tuple(sorted(f"{scheme}://{host}" for host in hosts if host and not host.startswith(":")))


class RequestIdMiddleware:
    """Gives every request a new ``request.request_id`` and echoes it in the
    ``X-OpenStack-Request-ID`` (and, for compute, ``X-Compute-Request-ID``) headers.
    An inbound ``X-OpenStack-Request-ID`` of oslo's form (``req-`` + UUID) is
    kept as ``request.global_request_id`` (anything else is ignored); both
    are the current request context (config/request_context.py) while the
    request is served, with the resolved route.
    A console form post holding NUL is refused (400), and so is a request on
    an API path naming a host outside ALLOWED_HOSTS (in that API's format).
    A non-JSON 5xx answer on an API path (Django's own error page) is
    replaced by a generic JSON error in that API's format."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: RequestWithId) -> HttpResponseBase:
        request.request_id = request_context.new_request_id()
        request.global_request_id = request_context.valid_global_id(request.headers.get(request_context.HEADER))
        token = request_context.bind(
            request_context.RequestContext(
                request_id=request.request_id,
                global_request_id=request.global_request_id,
                route=f"{request.method} {request.path}",
                served_at=_served_at(request),
            )
        )
        try:
            response = (
                self._refused_host(request)
                or self._refused_length(request)
                or self._refused_form(request)
                or self.get_response(request)
            )
            if response.status_code >= 500:
                response = self._api_error(request, response)
        finally:
            request_context.reset(token)
        response.headers.setdefault("X-OpenStack-Request-ID", request.request_id)
        if request.path.startswith("/compute"):
            response.headers.setdefault("X-Compute-Request-ID", request.request_id)
        return response

    @staticmethod
    def process_view(request: HttpRequest, view: object, args: object, kwargs: object) -> None:
        """The route resolved (its pattern, not the path with its ids) goes in the context."""
        match = request.resolver_match
        if match is not None and match.route:
            request_context.update(route=f"{request.method} /{match.route}")

    @staticmethod
    def _refused_host(request: RequestWithId) -> HttpResponse | None:
        """A request naming a host outside ALLOWED_HOSTS, on an API path: 400
        in that API's JSON format (the console gets Django's own 400 page)."""
        api = _api_of(request.path)
        if api is None:
            return None
        try:
            request.get_host()
        except DisallowedHost as exc:
            security_log.error("%s (request %s)", exc, request.request_id)
            message = "The Host header names a host this server does not answer to."
            body = json.dumps(_error_body(api, 400, request.request_id, message))
            return HttpResponse(body, status=400, content_type="application/json")
        return None

    @staticmethod
    def _refused_length(request: RequestWithId) -> HttpResponse | None:
        """A chunked body this server cannot read to its end (config/chunked.py):
        411 before any view could take it for an empty body, in the called
        API's JSON format."""
        if not request.META.get(chunked.LENGTH_REQUIRED):
            return None
        message = "This server cannot read a chunked request body: send the body with a Content-Length."
        api = _api_of(request.path)
        if api is None:
            return HttpResponse(message, status=411, content_type="text/plain")
        body = json.dumps(_error_body(api, 411, request.request_id, message))
        return HttpResponse(body, status=411, content_type="application/json")

    @staticmethod
    def _refused_form(request: HttpRequest) -> HttpResponse | None:
        """A console form post with NUL or invalid Unicode in a value: 400
        before any view looks a value up (PostgreSQL cannot store NUL)."""
        if request.method != "POST" or _api_of(request.path) is not None:
            return None
        try:
            values = [(key, value) for key, values in request.POST.lists() for value in values]
        except (RequestDataTooBig, TooManyFieldsSent):
            # Once this failed, Django would hand the view an empty form: answer here.
            return HttpResponseBadRequest("Bad request: the form is too large.", content_type="text/plain")
        if any(json_bodies.text_problem(key) or json_bodies.text_problem(value) for key, value in values):
            return HttpResponseBadRequest(
                "Bad request: a form value contains a NUL character or invalid Unicode.", content_type="text/plain"
            )
        return None

    @staticmethod
    def _api_error(request: RequestWithId, response: HttpResponseBase) -> HttpResponseBase:

        api = _api_of(request.path)
        if api is None or "json" in response.get("Content-Type", "") or getattr(response, "streaming", False):
            return response
        log.error(
            "%s API: server error %s rendered by Django (request %s)", api, response.status_code, request.request_id
        )
        body = json.dumps(_error_body(api, response.status_code, request.request_id))
        return HttpResponse(body, status=response.status_code, content_type="application/json")
