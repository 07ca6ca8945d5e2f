"""The Keystone v3 compatible identity API, mounted at ``/identity``.

Enough of Keystone for the stock clients to log in with a password and for
admins to manage who may use the cloud: version documents,
``/v3/auth/tokens`` (issue, validate, revoke), projects, users, roles, role
assignments on projects and the one domain. Errors use Keystone's format,
``{"error": {"code": N, "title": "...", "message": "..."}}``, not Nova's.
"""

import http
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn

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
from aggregates.errors import ServiceError
from aggregates.identity import services as identity
from aggregates.identity.caller import Caller, roles_on_project
from aggregates.identity.models import Project, Token

if TYPE_CHECKING:
    from django.contrib.auth.models import _User as User
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
    if error.validator == "minProperties":
        return "give at least one attribute to change."
    if error.validator == "pattern":
        return "must not be blank."
    if error.validator == "additionalProperties":
        return (
            error.message.replace(" were unexpected", " are not supported by Corral").replace(
                " was unexpected", " is not supported by Corral"
            )
            + "."
        )
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
    if isinstance(exc, ServiceError):
        return keystone_error(exc.status, exc.message)
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
        if settings.AUTH_STRATEGY == "external-keystone":
            # The cloud's Keystone is the identity service (and its catalog).
            raise ApiError(404, "The identity service is the cloud's Keystone: Corral serves none.")
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


# --- request schemas of the admin routes (checked on the entity object, so
# error paths read as Keystone's: ``Invalid input for field 'name'``) -----------

_OPTIONAL_TEXT = {"type": ["string", "null"], "maxLength": 65535}
_ENTITY_NAME = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"[\S]+"}

PROJECT_PROPERTIES: dict[str, Any] = {
    "name": {**_ENTITY_NAME, "maxLength": identity.PROJECT_NAME_MAX},
    "description": _OPTIONAL_TEXT,
    "domain_id": {"type": ["string", "null"], "minLength": 1, "maxLength": 64},
    "enabled": {"type": "boolean"},
    "is_domain": {"type": "boolean"},
    "parent_id": {"type": ["string", "null"], "minLength": 1, "maxLength": 64},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 255}, "maxItems": 80},
    "options": {"type": "object"},
}
PROJECT_CREATE = {
    "type": "object",
    "properties": PROJECT_PROPERTIES,
    "required": ["name"],
    "additionalProperties": False,
}
PROJECT_UPDATE = {"type": "object", "properties": PROJECT_PROPERTIES, "minProperties": 1, "additionalProperties": False}

USER_PROPERTIES: dict[str, Any] = {
    "name": _ENTITY_NAME,
    "password": {"type": ["string", "null"], "maxLength": 4096},
    "default_project_id": {"type": ["string", "null"], "maxLength": 64},
    "domain_id": {"type": "string", "minLength": 1, "maxLength": 64},
    "enabled": {"type": "boolean"},
    "email": {"type": ["string", "null"], "maxLength": 254},
    "description": _OPTIONAL_TEXT,
    "options": {"type": "object"},
}
# Keystone's user schema allows other attributes (it keeps them as extras):
# Corral takes them and keeps none (docs/compatibility.md).
USER_CREATE = {"type": "object", "properties": USER_PROPERTIES, "required": ["name"]}
USER_UPDATE = {"type": "object", "properties": USER_PROPERTIES, "minProperties": 1}


def entity_of(request: Request, key: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``key`` object of the request body, checked against ``schema``
    (errors name fields as Keystone does: ``project/name``)."""
    body = request.data
    if not isinstance(body, dict) or not isinstance(body.get(key), dict):
        raise ApiError(400, f"Expecting to find {key} in request body." + CLIENT_ERROR)
    validate(body, {"type": "object", "properties": {key: schema}, "additionalProperties": False})
    entity: dict[str, Any] = body[key]
    if entity.get("options"):
        raise ApiError(400, f"Invalid input for field '{key}/options': Corral supports no {key} options.")
    return entity


def _project_extras(entity: Mapping[str, Any], creating: bool) -> None:
    """Refuse what Corral's flat projects cannot hold: projects acting as
    domains, parents other than the domain, tags."""
    if entity.get("is_domain"):
        message = "Corral has one domain, Default: a project cannot act as a domain."
        raise ApiError(400, message if creating else "Update of `is_domain` is not allowed.")
    parent = entity.get("parent_id")
    if parent not in (None, identity.DEFAULT_DOMAIN["id"]):
        message = "Corral has no project hierarchy: parent_id may only name the domain."
        raise ApiError(400, message if creating else "Update of `parent_id` is not allowed.")
    if entity.get("tags"):
        raise ApiError(400, "Invalid input for field 'project/tags': Corral keeps no project tags.")


# --- bodies of the admin routes ---------------------------------------------------


def collection_links(request: Request, path: str) -> dict[str, Any]:
    query = request.META.get("QUERY_STRING", "")
    return {"self": identity_url(request, path) + (f"?{query}" if query else ""), "previous": None, "next": None}


def user_body(request: Request, user: "User") -> dict[str, Any]:
    user_id = identity.user_id_of(user)
    attributes = identity.attributes_of(user)
    body: dict[str, Any] = {
        "id": user_id,
        "name": user.get_username(),
        "domain_id": identity.DEFAULT_DOMAIN["id"],
        "enabled": user.is_active,
        "password_expires_at": None,
        "options": {},
        "links": {"self": identity_url(request, f"/v3/users/{user_id}")},
    }
    # Keystone shows these only when they were set.
    if attributes.default_project_id is not None:
        body["default_project_id"] = attributes.default_project_id
    if attributes.description is not None:
        body["description"] = attributes.description
    if user.email:
        body["email"] = user.email
    return body


def role_body(request: Request, name: str) -> dict[str, Any]:
    role_id = identity.role_id_of(name)
    return {
        "id": role_id,
        "name": name,
        "domain_id": None,
        "description": None,
        "options": {},
        "links": {"self": identity_url(request, f"/v3/roles/{role_id}")},
    }


def domain_body(request: Request) -> dict[str, Any]:
    domain_id = identity.DEFAULT_DOMAIN["id"]
    return {
        "id": domain_id,
        "name": identity.DEFAULT_DOMAIN["name"],
        "description": "The default domain",
        "enabled": True,
        "tags": [],
        "options": {},
        "links": {"self": identity_url(request, f"/v3/domains/{domain_id}")},
    }


def assignment_body(request: Request, assignment: identity.Assignment, include_names: bool) -> dict[str, Any]:
    user, project = assignment.user, assignment.project
    user_id, role_id = identity.user_id_of(user), identity.role_id_of(assignment.role)
    domain = dict(identity.DEFAULT_DOMAIN)
    if include_names:
        scope = {"project": {"id": project.id, "name": project.name, "domain": domain}}
        user_ref = {"id": user_id, "name": user.get_username(), "domain": dict(domain)}
        role_ref = {"id": role_id, "name": assignment.role}
    else:
        scope, user_ref, role_ref = {"project": {"id": project.id}}, {"id": user_id}, {"id": role_id}
    links = {}
    if assignment.prior_role is None:
        links["assignment"] = identity_url(request, f"/v3/projects/{project.id}/users/{user_id}/roles/{role_id}")
    else:
        prior_id = identity.role_id_of(assignment.prior_role)
        links["assignment"] = identity_url(request, f"/v3/projects/{project.id}/users/{user_id}/roles/{prior_id}")
        links["prior_role"] = identity_url(request, f"/v3/prior_role/{role_id}/implies/{prior_id}")
    return {"scope": scope, "user": user_ref, "role": role_ref, "links": links}


# --- projects -------------------------------------------------------------------


def enabled_filter(request: Request) -> bool | None:
    value = request.query_params.get("enabled")
    if value is None:
        return None
    if value.strip().lower() in TRUE_STRINGS:
        return True
    if value.strip().lower() in FALSE_STRINGS:
        return False
    raise ApiError(400, f"Invalid value for query parameter 'enabled': {value[:64]}. Use true or false.")


def query_flag(request: Request, name: str) -> bool:
    """Keystone's boolean query flags: present and not ``0`` means true."""
    value = request.query_params.get(name)
    return value is not None and value != "0"


def domain_filter(request: Request) -> str | None:
    """``?domain_id=``, None when absent (any id but ``default`` matches nothing)."""
    return request.query_params.get("domain_id")


def request_id_of(request: Request) -> str:
    return getattr(request._request, "request_id", "")


class ProjectListView(IdentityAPIView):
    def get(self, request: Request) -> Response:
        enforce(request, "identity:list_projects")
        projects = identity.list_projects(
            name=request.query_params.get("name"), enabled=enabled_filter(request), domain_id=domain_filter(request)
        )
        if query_flag(request, "is_domain"):
            projects = []
        parent = request.query_params.get("parent_id")
        if parent is not None:
            projects = [project for project in projects if project.domain_id == parent]
        return Response(
            {
                "projects": [project_body(request, project) for project in projects],
                "links": collection_links(request, "/v3/projects"),
            }
        )

    def post(self, request: Request) -> Response:
        caller = enforce(request, "identity:create_project")
        entity = entity_of(request, "project", PROJECT_CREATE)
        _project_extras(entity, creating=True)
        project = identity.create_project(
            caller,
            entity["name"],
            description=entity.get("description"),
            enabled=entity.get("enabled", True),
            domain_id=entity.get("domain_id"),
        )
        return Response({"project": project_body(request, project)}, status=201)


class ProjectDetailView(IdentityAPIView):
    def get(self, request: Request, project_id: str) -> Response:
        caller = caller_of(request)
        enforce(request, "identity:get_project", owner_allowed=caller.project_id == project_id)
        project = identity.get_project(project_id)
        if project is None:
            raise ApiError(404, f"Could not find project: {project_id[:64]}.")
        return Response({"project": project_body(request, project)})

    def patch(self, request: Request, project_id: str) -> Response:
        caller = enforce(request, "identity:update_project")
        entity = entity_of(request, "project", PROJECT_UPDATE)
        _project_extras(entity, creating=False)
        changes = {key: entity[key] for key in ("name", "description", "enabled", "domain_id") if key in entity}
        project = identity.update_project(caller, project_id, **changes)
        return Response({"project": project_body(request, project)})

    def delete(self, request: Request, project_id: str) -> Response:
        caller = enforce(request, "identity:delete_project")
        identity.delete_project(caller, project_id)
        return Response(status=204)


# --- users ------------------------------------------------------------------------


def _is_self(request: Request, user_id: str) -> bool:
    caller = caller_of(request)
    return caller.user is not None and identity.user_id_of(caller.user) == user_id


class UserListView(IdentityAPIView):
    def get(self, request: Request) -> Response:
        enforce(request, "identity:list_users")
        domain = domain_filter(request)
        users = identity.list_users(name=request.query_params.get("name"), enabled=enabled_filter(request))
        if domain is not None and domain != identity.DEFAULT_DOMAIN["id"]:
            users = []
        return Response(
            {"users": [user_body(request, user) for user in users], "links": collection_links(request, "/v3/users")}
        )

    def post(self, request: Request) -> Response:
        caller = enforce(request, "identity:create_user")
        entity = entity_of(request, "user", USER_CREATE)
        user = identity.create_user(
            caller,
            entity["name"],
            password=entity.get("password"),
            email=entity.get("email"),
            description=entity.get("description"),
            default_project_id=entity.get("default_project_id"),
            enabled=entity.get("enabled", True),
            domain_id=entity.get("domain_id"),
        )
        return Response({"user": user_body(request, user)}, status=201)


class UserDetailView(IdentityAPIView):
    def get(self, request: Request, user_id: str) -> Response:
        enforce(request, "identity:get_user", owner_allowed=_is_self(request, user_id))
        user = identity.get_user(user_id)
        if user is None:
            raise ApiError(404, f"Could not find user: {user_id[:64]}.")
        return Response({"user": user_body(request, user)})

    def patch(self, request: Request, user_id: str) -> Response:
        caller = enforce(request, "identity:update_user")
        entity = entity_of(request, "user", USER_UPDATE)
        fields = ("name", "password", "email", "description", "default_project_id", "enabled", "domain_id")
        user = identity.update_user(caller, user_id, **{key: entity[key] for key in fields if key in entity})
        return Response({"user": user_body(request, user)})

    def delete(self, request: Request, user_id: str) -> Response:
        caller = enforce(request, "identity:delete_user")
        identity.delete_user(caller, user_id)
        return Response(status=204)


PASSWORD_CHANGE = {
    "type": "object",
    "properties": {"original_password": {"type": "string"}, "password": {"type": "string", "maxLength": 4096}},
    "required": ["original_password", "password"],
    "additionalProperties": False,
}


class UserPasswordView(IdentityAPIView):
    """``POST /v3/users/{id}/password``: a user changes its own password
    (204); no token is needed, the current password is the proof."""

    def post(self, request: Request, user_id: str) -> Response:
        entity = entity_of(request, "user", PASSWORD_CHANGE)
        identity.change_own_password(
            user_id,
            entity["original_password"],
            entity["password"],
            address=request.META.get("REMOTE_ADDR"),
            request_id=request_id_of(request),
        )
        return Response(status=204)


class UserProjectsView(IdentityAPIView):
    """``GET /v3/users/{id}/projects``: the projects the user holds a role on."""

    def get(self, request: Request, user_id: str) -> Response:
        enforce(request, "identity:list_user_projects", owner_allowed=_is_self(request, user_id))
        projects = identity.projects_of_user(
            user_id,
            name=request.query_params.get("name"),
            enabled=enabled_filter(request),
            domain_id=domain_filter(request),
        )
        return Response(
            {
                "projects": [project_body(request, project) for project in projects],
                "links": collection_links(request, f"/v3/users/{user_id}/projects"),
            }
        )


# --- roles, grants and role assignments --------------------------------------------


class RoleListView(IdentityAPIView):
    def get(self, request: Request) -> Response:
        enforce(request, "identity:list_roles")
        names = identity.ROLE_NAMES
        wanted = request.query_params.get("name")
        if wanted is not None:
            names = tuple(name for name in names if name == wanted)
        if request.query_params.get("domain_id"):
            names = ()  # every role of Corral's is global
        return Response(
            {"roles": [role_body(request, name) for name in names], "links": collection_links(request, "/v3/roles")}
        )


class RoleDetailView(IdentityAPIView):
    def get(self, request: Request, role_id: str) -> Response:
        enforce(request, "identity:get_role")
        name = identity.role_named(role_id)
        if name is None:
            raise ApiError(404, f"Could not find role: {role_id[:64]}.")
        return Response({"role": role_body(request, name)})


class ProjectUserRolesView(IdentityAPIView):
    """``/v3/projects/{p}/users/{u}/roles``: the roles granted there."""

    def get(self, request: Request, project_id: str, user_id: str) -> Response:
        enforce(request, "identity:list_grants")
        names = identity.roles_granted(project_id, user_id)
        path = f"/v3/projects/{project_id}/users/{user_id}/roles"
        return Response(
            {"roles": [role_body(request, name) for name in names], "links": collection_links(request, path)}
        )


class ProjectUserRoleView(IdentityAPIView):
    """``/v3/projects/{p}/users/{u}/roles/{r}``: grant (PUT), check (GET,
    HEAD), revoke (DELETE); each answers 204."""

    def put(self, request: Request, project_id: str, user_id: str, role_id: str) -> Response:
        caller = enforce(request, "identity:create_grant")
        identity.grant_role(caller, project_id, user_id, role_id)
        return Response(status=204)

    def get(self, request: Request, project_id: str, user_id: str, role_id: str) -> Response:
        enforce(request, "identity:check_grant")
        identity.has_role(project_id, user_id, role_id)
        return Response(status=204)

    def delete(self, request: Request, project_id: str, user_id: str, role_id: str) -> Response:
        caller = enforce(request, "identity:revoke_grant")
        identity.revoke_role(caller, project_id, user_id, role_id)
        return Response(status=204)


def _not_both(request: Request, first: str, second: str, message: str) -> None:
    if request.query_params.get(first) and request.query_params.get(second):
        raise ApiError(400, message)


class RoleAssignmentListView(IdentityAPIView):
    """``/v3/role_assignments``: assignments on projects (Corral has no
    groups, no domain or system assignments and no inheritance, so filters
    asking for those match nothing)."""

    def get(self, request: Request) -> Response:
        enforce(request, "identity:list_role_assignments")
        params = request.query_params
        _not_both(request, "scope.domain.id", "scope.project.id", "Specify a domain or project, not both")
        _not_both(request, "scope.domain.id", "scope.system", "Specify system or domain, not both")
        _not_both(request, "scope.project.id", "scope.system", "Specify system or project, not both")
        _not_both(request, "user.id", "group.id", "Specify a user or group, not both")
        effective = query_flag(request, "effective")
        if effective and params.get("group.id"):
            raise ApiError(400, "Combining effective and group filter will always result in an empty list.")
        if query_flag(request, "include_subtree") and not params.get("scope.project.id"):
            raise ApiError(400, "scope.project.id must be specified if include_subtree is also specified")
        only_others = any(
            params.get(key) for key in ("group.id", "scope.domain.id", "scope.system", "scope.OS-INHERIT:inherited_to")
        )
        assignments = (
            []
            if only_others
            else identity.list_role_assignments(
                user_id=params.get("user.id"),
                project_id=params.get("scope.project.id"),
                role_id=params.get("role.id"),
                effective=effective,
            )
        )
        include_names = query_flag(request, "include_names")
        return Response(
            {
                "role_assignments": [assignment_body(request, one, include_names) for one in assignments],
                "links": collection_links(request, "/v3/role_assignments"),
            }
        )


# --- domains ----------------------------------------------------------------------


class DomainListView(IdentityAPIView):
    def get(self, request: Request) -> Response:
        enforce(request, "identity:list_domains")
        matches = True
        name, enabled = request.query_params.get("name"), enabled_filter(request)
        if name is not None and name != identity.DEFAULT_DOMAIN["name"]:
            matches = False
        if enabled is False:
            matches = False
        return Response(
            {"domains": [domain_body(request)] if matches else [], "links": collection_links(request, "/v3/domains")}
        )


class DomainDetailView(IdentityAPIView):
    def get(self, request: Request, domain_id: str) -> Response:
        # As Keystone's default policy: readers, and any caller whose token's
        # project is in the domain (every project is in Default).
        caller = caller_of(request)
        is_default = domain_id == identity.DEFAULT_DOMAIN["id"]
        enforce(request, "identity:get_domain", owner_allowed=is_default and bool(caller.project_id))
        if not is_default:
            raise ApiError(404, f"Could not find domain: {domain_id[:64]}.")
        return Response({"domain": domain_body(request)})


class NotFoundView(IdentityAPIView):
    """Every other path under /identity: a 404 in Keystone's format."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> NoReturn:
        raise drf.NotFound()
