"""Token authentication for the compute and identity APIs, and the policy table."""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated
from rest_framework.request import Request

from aggregates.identity import keystone
from aggregates.identity.caller import ADMIN, MEMBER, READER, Caller
from config import request_context
from config.policy import TokenCheckUnavailable
from config.public_url import keystone_uri

from .errors import ApiError

if TYPE_CHECKING:
    from django.contrib.auth.models import _User as User


class TokenAuthentication(BaseAuthentication):
    """Reads ``X-Auth-Token``. With AUTH_STRATEGY=keystone it must be a token
    issued by /identity/v3/auth/tokens that has not expired; with
    external-keystone one the cloud's Keystone validates (identity/keystone.py,
    with ``X-Service-Token``; 503 when Keystone does not answer); with noauth2
    (tests only) ``admin`` is an admin and any other value a plain member."""

    def authenticate(self, request: Request) -> "tuple[User | None, Caller] | None":
        token = request.headers.get("X-Auth-Token")
        if not token:
            return None
        request_id = getattr(request._request, "request_id", "")
        if settings.AUTH_STRATEGY == "noauth2":
            caller = noauth2_caller(token, request_id)
            request_context.update(user=caller.username, project=caller.project_id)
            return None, caller
        try:
            found = keystone.check_token(token, request_id, request.headers.get("X-Service-Token"))
        except TokenCheckUnavailable:
            raise ApiError(503, "The identity service is unavailable: the token could not be checked.")
        if found is None:
            raise AuthenticationFailed("The request you have made requires authentication.")
        request_context.update(user=found.username, project=found.project_id)
        return found.user, found

    def authenticate_header(self, request: Request) -> str:
        return f'Keystone uri="{keystone_uri(request, "/identity")}"'


def noauth2_caller(token: str, request_id: str = "") -> Caller:
    if token == "admin":
        return Caller(
            username="admin", project_id="admin", roles=frozenset({ADMIN, READER, MEMBER}), request_id=request_id
        )
    user, _, project = token.partition(":")
    return Caller(username=user, project_id=project or user, roles=frozenset({MEMBER}), request_id=request_id)


# Who may do what: config/policy.py's rule table (COMPUTE_RULES and IDENTITY_RULES).


def caller_of(request: Request) -> Caller:
    """The authenticated Caller, or 401."""
    caller = request.auth
    if not isinstance(caller, Caller):
        raise NotAuthenticated()
    return caller


def allowed(caller: Caller, policy: str, target: Mapping[str, Any] | None = None) -> bool:
    """Whether config/policy.py's rule ``policy`` lets ``caller`` act (on ``target``)."""
    return caller.may(policy, target)


def enforce(request: Request, policy: str, target: Mapping[str, Any] | None = None) -> Caller:
    """Raise 403 unless the caller may act under the rule ``policy`` (on
    ``target``, by default its own project); return the Caller."""
    caller = caller_of(request)
    if not allowed(caller, policy, target):
        raise ApiError(403, f"Policy doesn't allow {policy} to be performed.")
    return caller


def admin_caller(request: HttpRequest) -> Caller | None:
    """The admin behind ``request``'s X-Auth-Token, checked as every compute
    API request is; None for no token, an invalid or expired one, or a
    caller without the admin role, or when the token cannot be checked (the
    database is down). For plain Django views that show more to an admin:
    the health check's details, the metrics."""
    try:
        found = TokenAuthentication().authenticate(Request(request))
    except (AuthenticationFailed, ApiError, DatabaseError):
        return None
    if found is None or not found[1].is_admin:
        return None
    return found[1]
