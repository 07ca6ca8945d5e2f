"""The placement API's request pipeline, in upstream's order: authenticate
(401), negotiate the microversion (400/406), route by method (404/405),
check the body's content type, run the handler, and render any error as
``{"errors": [...]}``. Handlers get ``request.version`` (a Version tuple) and
``request.caller``, and return a Django response."""

import functools
import json
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import jsonschema
import orjson
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, UnreadablePostError
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.http import http_date
from django.utils.module_loading import import_string
from django.views.decorators.csrf import csrf_exempt

from config import json_bodies, policy, request_context
from config.policy import TokenCheckUnavailable
from config.public_url import keystone_uri
from placement import errors
from placement.standards import ensure_standard_names

from . import microversion

log = logging.getLogger(__name__)

if TYPE_CHECKING:

    class PipelineRequest(HttpRequest):
        """A request in placement's pipeline (for type checking only): the
        request id the middleware gave it, the microversion once negotiated
        (None before) and the caller once authenticated."""

        request_id: str
        version: microversion.Version | None
        caller: "Caller | None"

    class PlacementRequest(HttpRequest):
        """A request as a handler receives it (for type checking only): its
        microversion negotiated, its caller authenticated (None on open routes)."""

        request_id: str
        version: microversion.Version
        caller: "Caller | None"

else:
    PipelineRequest = PlacementRequest = HttpRequest

# A handler: (request, the path's values) -> the response.
Handler = Callable[..., HttpResponse]
H = TypeVar("H", bound=Handler)

ERROR_CODE_VERSION = (1, 23)
CACHE_HEADERS_VERSION = (1, 15)
JSON = "application/json"

TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    413: "Request Entity Too Large",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
}
EXPLANATIONS = {
    400: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
    401: "This server could not verify that you are authorized to access the document you requested.",
    403: "Access was denied to this resource.",
    404: "The resource could not be found.",
    409: "There was a conflict when trying to complete your request.",
}
NOT_FOUND = ""
UNEXPECTED = "An unexpected error occurred; the request id identifies it in the service's log."


# --- who is calling ---------------------------------------------------------


@dataclass
class Caller:
    user_id: str = ""
    project_id: str = ""
    roles: frozenset[str] = field(default_factory=frozenset)

    @property
    def is_admin(self) -> bool:
        return bool(self.roles & {"admin", "service"})


def _noauth_caller(request: HttpRequest, token: str) -> Caller:
    user_id, _sep, project_id = token.partition(":")
    if "X-Roles" in request.headers:
        roles = {r.strip() for r in request.headers["X-Roles"].split(",") if r.strip()}
    else:
        roles = {"admin"} if user_id == "admin" else set()
    return Caller(user_id=user_id, project_id=project_id or user_id, roles=frozenset(roles))


def _challenge(request: HttpRequest) -> dict[str, str]:
    """A 401's ``WWW-Authenticate``, as keystonemiddleware sends it: where to
    get a token (this server's Keystone surface). Placement served alone
    (CORRAL_SERVICE=placement) has no Keystone surface to name: none."""
    if settings.CORRAL_SERVICE == "placement" and settings.AUTH_STRATEGY != "external-keystone":
        return {}
    return {"WWW-Authenticate": f'Keystone uri="{keystone_uri(request)}"'}


def authenticate(request: PipelineRequest, open_route: bool) -> Caller | None:
    """The caller a request's token stands for (also in the log context);
    None on open routes without one."""
    caller = _caller_of_token(request, open_route)
    if caller is not None:
        request_context.update(user=caller.user_id, project=caller.project_id)
    return caller


def _caller_of_token(request: PipelineRequest, open_route: bool) -> Caller | None:
    token = request.headers.get("X-Auth-Token")
    if not token:
        if open_route:
            return None
        raise errors.Unauthorized("Authentication required.", headers=_challenge(request))
    if settings.AUTH_STRATEGY == "noauth2":
        return _noauth_caller(request, token)
    service_token = request.headers.get("X-Service-Token")
    validator = import_string(settings.PLACEMENT_TOKEN_VALIDATOR)
    try:
        if service_token:
            validated = validator(token, request.request_id, service_token=service_token)
        else:
            validated = validator(token, request.request_id)
    except TokenCheckUnavailable:
        raise errors.ServiceUnavailable("The identity service is unavailable: the token could not be checked.")
    if validated is None:
        if open_route:
            return None
        raise errors.Unauthorized("The request you have made requires authentication.", headers=_challenge(request))
    return Caller(
        user_id=getattr(validated, "user_id", "") or getattr(validated, "username", ""),
        project_id=getattr(validated, "project_id", ""),
        roles=frozenset(validated.roles),
    )


def authorize(request: PlacementRequest, rule: str, project_id: str | None = None) -> None:
    """403 unless config/policy.py's ``rule`` lets the caller act (by
    default admins and services; a project's readers read its usages:
    ``project_id`` is the target's project)."""
    caller = request.caller
    if caller is not None:
        creds = policy.creds(caller.roles, caller.project_id, caller.user_id)
        target = {"project_id": project_id if project_id is not None else caller.project_id}
        if policy.allowed(rule, creds, target):
            return
    raise errors.Forbidden(f"Policy does not allow {rule} to be performed.")


# --- request helpers --------------------------------------------------------


def is_uuid_like(value: str) -> bool:
    """Whether ``value`` parses as a UUID (dashes, braces and case optional)."""
    try:
        normalized = value.lower().replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "")
        return uuid.UUID(value).hex == normalized
    except (TypeError, ValueError, AttributeError):
        return False


FORMAT_CHECKER = jsonschema.FormatChecker()


def _check_uuid(instance: object) -> bool:
    return not isinstance(instance, str) or is_uuid_like(instance)


# (registered by a call: jsonschema ships no types for its decorator)
FORMAT_CHECKER.checks("uuid")(_check_uuid)


def _accepts(accept_header: str, media_type: str) -> bool:
    """Whether an Accept header allows ``media_type`` (q > 0 on the most
    specific matching range)."""
    major = media_type.split("/")[0]
    best: tuple[int, float] | None = None
    for part in accept_header.split(","):
        pieces = [p.strip() for p in part.split(";")]
        if not pieces[0]:
            continue
        quality = 1.0
        for param in pieces[1:]:
            if param.startswith("q="):
                try:
                    quality = float(param[2:])
                except ValueError:
                    quality = 0.0
        rank = {media_type: 3, f"{major}/*": 2, "*/*": 1}.get(pieces[0].lower())
        if rank and (best is None or rank > best[0]):
            best = (rank, quality)
    return best is not None and best[1] > 0


def check_accept(request: HttpRequest) -> None:
    accept = request.headers.get("Accept")
    if accept and not _accepts(accept, JSON):
        raise errors.NotAcceptable(f"Only {JSON} is provided")


def check_content_type(request: HttpRequest) -> None:
    if request.headers.get("Content-Type", "").split(";")[0].strip().lower() != JSON:
        shown = request.headers.get("Content-Type") or "None"
        raise errors.UnsupportedMediaType(f"The media type {shown} is not supported, use {JSON}")


def json_body(request: HttpRequest, schema: Mapping[str, Any]) -> Any:
    """The request body as JSON, checked against ``schema`` (400)."""
    try:
        data = json_bodies.loads(request.body)
    except json_bodies.BodyRefused as exc:
        raise errors.Invalid(f"Malformed JSON: {exc.message}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.Invalid(f"Malformed JSON: {json_bodies.escape(exc, 200)}") from None
    validate(data, schema, "JSON does not validate: {error}")
    return data


def handler(
    since: tuple[int, int] | None = None,
    until: tuple[int, int] | None = None,
    absent_status: int = 404,
    returns_json: bool = False,
    takes_json: bool = False,
) -> Callable[[H], H]:
    """Decorate a handler: the microversions it exists in (404, or 405, outside
    them), whether it answers JSON (406 unless Accept allows it) and whether it
    reads a JSON body (415 unless Content-Type says so)."""

    def decorate(function: H) -> H:
        @functools.wraps(function)
        def wrapper(request: PlacementRequest, **kwargs: Any) -> HttpResponse:
            if since is not None:
                require_version(request, since, until, absent_status)
            if returns_json:
                check_accept(request)
            if takes_json:
                check_content_type(request)
            return function(request, **kwargs)

        return cast(H, wrapper)

    return decorate


# id(schema) -> (schema, its validator): the schemas are module constants, and
# checking one and building its validator on every request costs more than
# the validation itself.
_validators: dict[int, tuple[Mapping[str, Any], Any]] = {}  # the validators are jsonschema's (untyped)


def _validator(schema: Mapping[str, Any]) -> Any:
    cached = _validators.get(id(schema))
    if cached is None or cached[0] is not schema:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        cached = _validators[id(schema)] = (schema, cls(schema, format_checker=FORMAT_CHECKER))
    return cached[1]


def validate(data: object, schema: Mapping[str, Any], message: str) -> None:
    """As jsonschema.validate (the same error is reported), with the
    validator built once per schema."""
    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(data))
    if error is not None:
        raise errors.Invalid(message.format(error=error))


def validate_query(request: HttpRequest, schema: Mapping[str, Any]) -> None:
    """Check the query string (last value of each key) against ``schema``."""
    validate(request.GET.dict(), schema, "Invalid query string parameters: {error}")


def require_version(
    request: PlacementRequest, minimum: tuple[int, int], maximum: tuple[int, int] | None = None, status: int = 404
) -> None:
    """Answer as if the route did not exist outside [minimum, maximum]."""
    if request.version < minimum or (maximum is not None and request.version > maximum):
        if status == 405:
            raise errors.MethodNotAllowed(f"The method {request.method} is not allowed for this resource.")
        raise errors.NotFound(NOT_FOUND)


# --- responses ---------------------------------------------------------------


def service_prefix() -> str:
    """Where placement is mounted ("" at the root, "/placement" in all-in-one)."""
    return reverse("placement-root").rstrip("/")


def service_path(*parts: str) -> str:
    return "/".join([service_prefix(), *parts])


def absolute_url(request: HttpRequest, *parts: str) -> str:
    return request.build_absolute_uri(service_path(*parts))


def json_response(
    request: PlacementRequest, data: Any, status: int = 200, last_modified: datetime | None | Literal[False] = None
) -> HttpResponse:
    response = HttpResponse(encode_json(data), status=status, content_type=JSON)
    if last_modified is not False:
        set_cache_headers(request, response, last_modified)
    return response


def encode_json(data: Any) -> bytes:
    """``data`` (plain trees: dicts, lists, strings, numbers) as JSON text.
    orjson writes a large body (10,000 allocation candidates, several MB)
    in a tenth of the standard library's time; what it cannot write
    (integers beyond 64 bits, keys that are not strings: no body of
    placement's has any, and orjson checks every key's type when asked to
    accept them, 0.70 against 0.29 ms for 1,000 candidates) the standard
    library does."""
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return json.dumps(data, check_circular=False).encode()


def empty_response(status: int = 204, location: str | None = None) -> HttpResponse:
    response = HttpResponse(status=status)
    del response["Content-Type"]
    if location:
        response["Location"] = location
    return response


def set_cache_headers(
    request: PlacementRequest, response: HttpResponse, last_modified: datetime | None = None
) -> HttpResponse:
    """From 1.15 on: ``Cache-Control: no-cache`` and ``Last-Modified`` (now
    when the data has no better time)."""
    if request.version >= CACHE_HEADERS_VERSION:
        when = last_modified or timezone.now()
        response["Last-Modified"] = http_date(when.timestamp())
        response["Cache-Control"] = "no-cache"
    return response


def latest(objects: Iterable[Any]) -> datetime | None:  # objects with a last_modified
    """The most recent change among objects with a ``last_modified``."""
    times = [o.last_modified for o in objects if o.last_modified]
    return max(times) if times else None


def _error_content_type(request: HttpRequest) -> str:
    accept = request.headers.get("Accept")
    if accept and not _accepts(accept, JSON) and _accepts(accept, "text/html"):
        return "text/html"
    return JSON


def error_response(
    request: PipelineRequest,
    status: int,
    detail: object,
    code: str = errors.DEFAULT,
    headers: Mapping[str, str] | None = None,
) -> HttpResponse:
    detail = json_bodies.escape(detail)  # it may echo user values: keep the body encodable
    explanation = EXPLANATIONS.get(status)
    if status == 405:
        explanation = None
    text = f"{explanation}\n\n {detail}  " if explanation else detail
    error: dict[str, Any] = {"status": status, "title": TITLES.get(status, "Error"), "detail": text}
    version = getattr(request, "version", None)
    if version is not None and version >= ERROR_CODE_VERSION:
        error["code"] = code
    if getattr(request, "request_id", None):
        error["request_id"] = request.request_id
    if status == 406 and version is None:
        error["max_version"] = microversion.MAX_VERSION
        error["min_version"] = microversion.MIN_VERSION
    content_type = _error_content_type(request)
    if content_type == JSON:
        body = json.dumps({"errors": [error]})
    else:
        body = f"<html><head><title>{status} {error['title']}</title></head><body>{text}</body></html>"
    response = HttpResponse(body, status=status, content_type=content_type)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


# --- routing ---------------------------------------------------------------


def _check_content_length(request: HttpRequest) -> None:
    length = request.META.get("CONTENT_LENGTH")
    try:
        if length and int(length) > 0 and not request.META.get("CONTENT_TYPE"):
            raise errors.Invalid("content-type header required when content-length > 0")
    except ValueError:
        raise errors.Invalid("content-length header must be an integer") from None


def _run(
    request: PipelineRequest, handlers: Mapping[str, Handler], open_route: bool, kwargs: dict[str, Any]
) -> HttpResponse:
    request.version = None
    try:
        problem = json_bodies.problem_of(request)
        if problem:
            raise errors.Invalid(problem)
        request.caller = authenticate(request, open_route)
        try:
            request.version = microversion.requested_version(request.headers.get(microversion.HEADER))
        except microversion.BadVersion as exc:
            raise errors.Invalid(f"Invalid microversion: {exc}") from None
        except microversion.UnacceptableVersion as exc:
            raise errors.NotAcceptable(f"Invalid microversion: {exc}") from None
        _check_content_length(request)
        handler = handlers.get(request.method or "")
        if handler is None:
            if not handlers:
                raise errors.NotFound(NOT_FOUND)
            raise errors.MethodNotAllowed(
                f"The method {request.method} is not allowed for this resource.",
                headers={"Allow": ", ".join(handlers)},
            )
        ensure_standard_names()
        return handler(request, **kwargs)
    except errors.PlacementError as exc:
        return error_response(request, exc.status, exc.detail, exc.code, exc.headers)
    except RequestDataTooBig:
        return error_response(request, 413, "The request body is larger than this service accepts.")
    except UnreadablePostError:
        return error_response(request, 400, "The request body could not be read.")
    except Exception:  # an unexpected failure is still an API error, without its internals
        log.exception("placement API unexpected error (request %s)", getattr(request, "request_id", None) or "-")
        return error_response(request, 500, UNEXPECTED)


class Route:
    """One URL of the service and the handler for each method."""

    def __init__(self, pattern: str, name: str | None = None, open_route: bool = False, **handlers: Handler) -> None:
        self.pattern = pattern
        self.name = name
        self.open_route = open_route
        self.handlers = handlers

    def view(self, request: PipelineRequest, **kwargs: Any) -> HttpResponse:
        response = _run(request, self.handlers, self.open_route, kwargs)
        if request.version is not None:
            response[microversion.HEADER] = f"{microversion.SERVICE_TYPE} {request.version}"
            response["Vary"] = microversion.HEADER.lower()
        # One line a request, as upstream's request log (the log context adds
        # the request id and the caller's global request id).
        log.info(
            '"%s %s" status: %s len: %s microversion: %s',
            request.method,
            request.get_full_path(),
            response.status_code,
            len(response.content),
            request.version or "-",
        )
        return response

    def urlpattern(self) -> URLPattern:
        return path(self.pattern, csrf_exempt(self.view), name=self.name)
