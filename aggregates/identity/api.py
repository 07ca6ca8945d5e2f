"""The Keystone v3 compatible identity API, mounted at ``/identity``.

Enough of Keystone for the stock clients to log in with a password: version
documents, ``/v3/auth/tokens`` (issue, validate, revoke) and read-only
``/v3/projects``. Errors use Keystone's format,
``{"error": {"code": N, "title": "...", "message": "..."}}``, not Nova's.
"""

import http
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NoReturn

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, UnreadablePostError
from jsonschema import Draft4Validator
from rest_framework import exceptions as drf
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aggregates.compute_api.auth import TokenAuthentication, allowed, caller_of
from aggregates.compute_api.base import SafeJSONParser
from aggregates.compute_api.errors import ApiError, BodyNotAccepted
from aggregates.identity import services as identity
from aggregates.identity.caller import Caller, roles_on_project
from aggregates.identity.models import Project, Token
from aggregates.value_schemas import TRUE_STRINGS
from config import json_bodies
from config.public_url import public_base

log = logging.getLogger(__name__)

IDENTITY_VERSION = "v3.14"
IDENTITY_VERSION_UPDATED = "2020-04-07T00:00:00Z"

# The service catalog: (type, name, path under the public base URL).
CATALOG = (
    ("identity", "keystone", "/identity"),
    ("compute", "nova", "/compute/v2.1"),
    ("placement", "placement", "/placement"),
    ("image", "glance", "/image"),
)
INTERFACES = ("public", "internal", "admin")

FALSE_STRINGS = {"false", "0", "off", "no", "n", "f"}
CLIENT_ERROR = (
    " The server could not comply with the request since it is either malformed"
    " or otherwise incorrect. The client is assumed to be in error."
)

# --- request schema of POST /v3/auth/tokens ----------------------------------

_ID = {"type": "string", "minLength": 1, "maxLength": 64}
_NAME = {"type": "string", "minLength": 1, "maxLength": 255}
_ID_OR_NAME = [{"required": ["id"]}, {"required": ["name"]}]

DOMAIN_REF = {
    "type": "object",
    "properties": {"id": _ID, "name": _NAME},
    "additionalProperties": False,
    "anyOf": _ID_OR_NAME,
}

USER_REF = {
    "type": "object",
    "properties": {
        "id": _ID,
        "name": _NAME,
        "domain": DOMAIN_REF,
        "password": {"type": "string", "maxLength": 4096},
    },
    "required": ["password"],
    "additionalProperties": False,
    "anyOf": _ID_OR_NAME,
    "dependencies": {"name": ["domain"]},
}

PROJECT_REF = {
    "type": "object",
    "properties": {"id": _ID, "name": _NAME, "domain": DOMAIN_REF},
    "additionalProperties": False,
    "anyOf": _ID_OR_NAME,
    "dependencies": {"name": ["domain"]},
}

TOKEN_REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "auth": {
            "type": "object",
            "properties": {
                "identity": {
                    "type": "object",
                    "properties": {
                        "methods": {
                            "type": "array",
                            "items": {"type": "string", "minLength": 1, "maxLength": 64},
                            "minItems": 1,
                        },
                        "password": {
                            "type": "object",
                            "properties": {"user": USER_REF},
                            "required": ["user"],
                            "additionalProperties": False,
                        },
                        "token": {
                            "type": "object",
                            "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 1024}},
                            "required": ["id"],
                            "additionalProperties": False,
                        },
                    },
                    # Payloads of other methods may ride along, as Keystone allows.
                    "required": ["methods"],
                },
                "scope": {
                    "type": ["object", "string"],
                    "properties": {
                        "project": PROJECT_REF,
                        "domain": {"type": "object"},
                        "system": {"type": "object"},
                        "OS-TRUST:trust": {"type": "object"},
                        "unscoped": {"type": "object"},
                    },
                    "additionalProperties": False,
                    "maxProperties": 1,
                },
            },
            "required": ["identity"],
            "additionalProperties": False,
        }
    },
    "required": ["auth"],
    "additionalProperties": False,
}


def validate(body: Any, schema: Mapping[str, Any]) -> Any:
    """Raise a 400 in Keystone's words on the first schema error. Values are
    never echoed back: they may be passwords."""
    errors = sorted(
        Draft4Validator(schema).iter_errors(body), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path)))
    )
    if not errors:
        return body
    error = errors[0]
    field = "/".join(map(str, error.absolute_path))
    where = f"field '{field}'" if field else "the request body"
    raise ApiError(400, f"Invalid input for {where}: {_reason(error)}")


def _reason(error: Any) -> str:  # error: jsonschema's ValidationError (untyped)
    expected = error.validator_value
    if error.validator == "type":
        return "must be of type " + (" or ".join(expected) if isinstance(expected, list) else expected) + "."
    if error.validator == "maxLength":
        return f"must be at most {expected} characters long."
    if error.validator in ("minLength", "minItems"):
        return "must not be empty."
    if error.validator == "anyOf":
        return "id or name must be present."
    if error.validator == "maxProperties":
        return "only one scope may be requested."
    return error.message + "."


# --- errors -------------------------------------------------------------------


def keystone_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    title = http.HTTPStatus(status).phrase
    body = {"error": {"code": status, "title": title, "message": json_bodies.escape(message)}}
    return Response(body, status=status, headers=headers)


def identity_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF exception handler rendering every error in Keystone's format."""
    if isinstance(exc, ApiError):
        return keystone_error(exc.status, exc.message, exc.headers)
    if isinstance(exc, identity.Throttled):
        # Keystone answers 401 to every refused login; 429 with Retry-After tells a
        # client to wait (docs/compatibility.md).
        return keystone_error(429, exc.message, {"Retry-After": str(exc.retry_after)})
    if isinstance(exc, (identity.AuthenticationFailed, drf.NotAuthenticated, drf.AuthenticationFailed)):
        message = exc.message if isinstance(exc, identity.AuthenticationFailed) else identity.UNAUTHORIZED
        challenge = f'Keystone uri="{public_base(context["request"])}/identity"'
        return keystone_error(401, message, {"WWW-Authenticate": challenge})
    if isinstance(exc, BodyNotAccepted):
        return keystone_error(400, exc.message + CLIENT_ERROR)
    if isinstance(exc, drf.ParseError):
        return keystone_error(400, "Expecting to find valid JSON in request body." + CLIENT_ERROR)
    if isinstance(exc, RequestDataTooBig):
        return keystone_error(413, "Request is larger than the server can accept.")
    if isinstance(exc, UnreadablePostError):
        return keystone_error(400, "The request body could not be read." + CLIENT_ERROR)
    if isinstance(exc, drf.UnsupportedMediaType):
        return keystone_error(400, "Expecting to find application/json in Content-Type header." + CLIENT_ERROR)
    if isinstance(exc, drf.MethodNotAllowed):
        return keystone_error(405, "The method is not allowed for the requested URL.")
    if isinstance(exc, (drf.NotFound, Http404)):
        return keystone_error(404, "The resource could not be found.")
    if isinstance(exc, drf.APIException):
        return keystone_error(exc.status_code, str(exc.detail))
    request = context.get("request")
    log.exception("Unexpected identity API error (request %s)", getattr(request, "request_id", None) or "-")
    return keystone_error(500, "An unexpected error prevented the server from fulfilling your request.")


def forbidden(policy: str) -> ApiError:
    return ApiError(403, f"You are not authorized to perform the requested action: {policy}.")


def enforce(request: Request, policy: str, owner_allowed: bool = False) -> Caller:
    """The Caller if it may act under ``policy`` (or ``owner_allowed``); else 403."""
    caller = caller_of(request)
    if not (owner_allowed or allowed(caller, policy)):
        raise forbidden(policy)
    return caller


class IdentityAPIView(APIView):
    authentication_classes = [TokenAuthentication]
    permission_classes = []
    parser_classes = [SafeJSONParser]
    renderer_classes = [JSONRenderer]

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response]:
        return identity_exception_handler

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        problem = json_bodies.problem_of(request)
        if problem:
            raise ApiError(400, problem + CLIENT_ERROR)
        super().initial(request, *args, **kwargs)

    def perform_authentication(self, request: Request) -> None:
        # Lazy: only views that read the caller need a token, so a stale
        # X-Auth-Token sent to the version documents or to a login is ignored.
        pass


# --- serializers --------------------------------------------------------------


def identity_url(request: Request, path: str = "") -> str:
    return f"{public_base(request)}/identity{path}"


def keystone_time(value: datetime) -> str:
    """Keystone's token timestamps: whole seconds, ``.000000Z``."""
    return value.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def version_document(request: Request) -> dict[str, Any]:
    return {
        "id": IDENTITY_VERSION,
        "status": "stable",
        "updated": IDENTITY_VERSION_UPDATED,
        "links": [{"rel": "self", "href": identity_url(request, "/v3/")}],
        "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}],
    }


def catalog(request: Request) -> list[dict[str, Any]]:
    base = public_base(request)
    region = settings.REGION_NAME
    return [
        {
            "type": service_type,
            "name": name,
            "id": identity.derived_id("service", service_type),
            "endpoints": [
                {
                    "id": identity.derived_id("endpoint", f"{service_type}:{interface}"),
                    "interface": interface,
                    "region": region,
                    "region_id": region,
                    "url": base + path,
                }
                for interface in INTERFACES
            ],
        }
        for service_type, name, path in CATALOG
    ]


def token_body(request: Request, row: Token, methods: Iterable[str]) -> dict[str, dict[str, Any]]:
    user = row.user
    body: dict[str, Any] = {
        "methods": list(methods),
        "user": {
            "id": identity.user_id_of(user),
            "name": user.get_username(),
            "domain": dict(identity.DEFAULT_DOMAIN),
            "password_expires_at": None,
        },
        "audit_ids": [identity.audit_id_of(row)],
        "expires_at": keystone_time(row.expires_at),
        "issued_at": keystone_time(row.issued_at),
    }
    if row.project is not None:
        roles = roles_on_project(user, row.project)
        body["project"] = {"id": row.project.id, "name": row.project.name, "domain": dict(identity.DEFAULT_DOMAIN)}
        body["is_domain"] = False
        body["roles"] = [{"id": identity.role_id_of(name), "name": name} for name in sorted(roles)]
        body["catalog"] = catalog(request)
    return {"token": body}


def project_body(request: Request, project: Project) -> dict[str, Any]:
    return {
        "id": project.id,
        "name": project.name,
        "domain_id": project.domain_id,
        "description": project.description,
        "enabled": project.enabled,
        "is_domain": False,
        "parent_id": project.domain_id,
        "tags": [],
        "options": {},
        "links": {"self": identity_url(request, f"/v3/projects/{project.id}")},
    }


# --- views --------------------------------------------------------------------


class VersionListView(IdentityAPIView):
    """``/identity``: Keystone answers 300 Multiple Choices with its versions."""

    def get(self, request: Request) -> Response:
        return Response({"versions": {"values": [version_document(request)]}}, status=300)


class VersionView(IdentityAPIView):
    def get(self, request: Request) -> Response:
        return Response({"version": version_document(request)})


def login_request(
    auth: dict[str, Any],
) -> tuple[Sequence[str], identity.Ref | None, str | None, identity.Ref | None]:
    """(methods, password user, token, project reference) of a validated body."""
    credentials = auth["identity"]
    methods = credentials["methods"]
    for method in identity.SUPPORTED_METHODS:
        if method in methods and method not in credentials:
            raise ApiError(400, f"Expecting to find {method} in identity." + CLIENT_ERROR)
    scope = auth.get("scope", "unscoped")
    if isinstance(scope, str):
        if scope != "unscoped":
            raise ApiError(400, "Invalid input for field 'auth/scope': a string scope must be 'unscoped'.")
        scope = {}
    if set(scope) - {"project", "unscoped"}:
        raise identity.AuthenticationFailed(
            "Corral issues project-scoped and unscoped tokens only; request a project scope "
            "instead of a domain, system or trust scope."
        )
    password_user = credentials.get("password", {}).get("user")
    token = credentials.get("token", {}).get("id")
    return methods, password_user, token, scope.get("project")


class TokensView(IdentityAPIView):
    """``/identity/v3/auth/tokens``: log in (POST), validate (GET/HEAD), revoke (DELETE)."""

    def post(self, request: Request) -> Response:
        auth = validate(request.data, TOKEN_REQUEST_SCHEMA)["auth"]
        methods, password_user, token, project_ref = login_request(auth)
        token, row = identity.authenticate_for_token(
            methods,
            password_user=password_user,
            token=token,
            project_ref=project_ref,
            request_id=getattr(request._request, "request_id", ""),
            address=request.META.get("REMOTE_ADDR"),
        )
        return Response(token_body(request, row, methods), status=201, headers={"X-Subject-Token": token})

    def get(self, request: Request) -> Response:
        subject = request.headers.get("X-Subject-Token", "")
        row = self._subject_token(request, subject, "identity:validate_token")
        return Response(token_body(request, row, ["password"]), headers={"X-Subject-Token": subject})

    def delete(self, request: Request) -> Response:
        subject = request.headers.get("X-Subject-Token", "")
        self._subject_token(request, subject, "identity:revoke_token")
        identity.revoke_token(subject)
        return Response(status=204)

    @staticmethod
    def _subject_token(request: Request, subject: str, policy: str) -> Token:
        """The valid token named by X-Subject-Token (404 otherwise), once the
        caller may act on it: its own token, or under ``policy``."""
        caller = caller_of(request)
        row = identity.valid_token(subject)
        if row is None:
            raise ApiError(404, "Could not find token: the X-Subject-Token header names no valid token.")
        enforce(request, policy, owner_allowed=caller.user is not None and caller.user.pk == row.user_id)
        return row


def enabled_filter(request: Request) -> bool | None:
    value = request.query_params.get("enabled")
    if value is None:
        return None
    if value.strip().lower() in TRUE_STRINGS:
        return True
    if value.strip().lower() in FALSE_STRINGS:
        return False
    raise ApiError(400, f"Invalid value for query parameter 'enabled': {value[:64]}. Use true or false.")


class ProjectListView(IdentityAPIView):
    def get(self, request: Request) -> Response:
        enforce(request, "identity:list_projects")
        projects = identity.list_projects(name=request.query_params.get("name"), enabled=enabled_filter(request))
        query = request.META.get("QUERY_STRING", "")
        return Response(
            {
                "projects": [project_body(request, project) for project in projects],
                "links": {
                    "self": identity_url(request, "/v3/projects") + (f"?{query}" if query else ""),
                    "previous": None,
                    "next": None,
                },
            }
        )


class ProjectDetailView(IdentityAPIView):
    def get(self, request: Request, project_id: str) -> Response:
        caller = caller_of(request)
        enforce(request, "identity:get_project", owner_allowed=caller.project_id == project_id)
        project = identity.get_project(project_id)
        if project is None:
            raise ApiError(404, f"Could not find project: {project_id[:64]}.")
        return Response({"project": project_body(request, project)})


class NotFoundView(IdentityAPIView):
    """Every other path under /identity: a 404 in Keystone's format."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> NoReturn:
        raise drf.NotFound()
