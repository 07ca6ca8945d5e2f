"""Token authentication for the compute and identity APIs, and the policy table."""

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated
from rest_framework.request import Request

from aggregates.identity import services as identity
from aggregates.identity.caller import ADMIN, MEMBER, READER, Caller
from config import request_context

from .errors import ApiError

if TYPE_CHECKING:
    from django.contrib.auth.models import _User as User


class TokenAuthentication(BaseAuthentication):
    """Reads ``X-Auth-Token``. With AUTH_STRATEGY=keystone it must be a token
    issued by /identity/v3/auth/tokens that has not expired; with noauth2
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
        found = identity.caller_for_token(token, request_id)
        if found is None:
            raise AuthenticationFailed("The request you have made requires authentication.")
        request_context.update(user=found.username, project=found.project_id)
        return found.user, found

    def authenticate_header(self, request: Request) -> str:
        return 'Keystone uri="/identity"'


def noauth2_caller(token: str, request_id: str = "") -> Caller:
    if token == "admin":
        return Caller(
            username="admin", project_id="admin", roles=frozenset({ADMIN, READER, MEMBER}), request_id=request_id
        )
    user, _, project = token.partition(":")
    return Caller(username=user, project_id=project or user, roles=frozenset({MEMBER}), request_id=request_id)


# Who may do what. "admin": the admin role; "reader": admin or reader;
# "any": every authenticated caller.
POLICIES = {
    "os_compute_api:os-aggregates:index": "reader",
    "os_compute_api:os-aggregates:show": "reader",
    "os_compute_api:os-aggregates:create": "admin",
    "os_compute_api:os-aggregates:update": "admin",
    "os_compute_api:os-aggregates:delete": "admin",
    "os_compute_api:os-aggregates:add_host": "admin",
    "os_compute_api:os-aggregates:remove_host": "admin",
    "os_compute_api:os-aggregates:set_metadata": "admin",
    "compute:aggregates:images": "admin",
    # the pre-caching job routes are Corral's own: admins only
    "corral:image-cache-jobs:list": "admin",
    "corral:image-cache-jobs:show": "admin",
    "corral:pinned-images:list": "admin",
    "corral:pinned-images:create": "admin",
    "corral:pinned-images:delete": "admin",
    "corral:pinned-images:recheck": "admin",
    "os_compute_api:os-scheduler-explain": "admin",
    # server groups: every project member its project's; all_projects lists for admins only
    "os_compute_api:os-server-groups:index": "any",
    "os_compute_api:os-server-groups:show": "any",
    "os_compute_api:os-server-groups:create": "any",
    "os_compute_api:os-server-groups:delete": "any",
    "os_compute_api:os-availability-zone:list": "any",
    "os_compute_api:os-availability-zone:detail": "reader",
    "os_compute_api:os-services:list": "reader",
    "os_compute_api:os-services:update": "admin",
    "os_compute_api:os-services:delete": "admin",
    "os_compute_api:os-hypervisors:list": "reader",
    "os_compute_api:os-hypervisors:list-detail": "reader",
    "os_compute_api:os-hypervisors:show": "reader",
    "os_compute_api:os-hypervisors:statistics": "reader",
    "os_compute_api:os-hypervisors:uptime": "reader",
    "os_compute_api:os-hypervisors:search": "reader",
    "os_compute_api:os-hypervisors:servers": "reader",
    "os_compute_api:os-flavor-manage:create": "admin",
    "os_compute_api:os-flavor-manage:update": "admin",
    "os_compute_api:os-flavor-manage:delete": "admin",
    "os_compute_api:os-flavor-access": "reader",
    "os_compute_api:os-flavor-access:add_tenant_access": "admin",
    "os_compute_api:os-flavor-access:remove_tenant_access": "admin",
    "os_compute_api:os-flavor-extra-specs:index": "any",
    "os_compute_api:os-flavor-extra-specs:show": "any",
    "os_compute_api:os-flavor-extra-specs:create": "admin",
    "os_compute_api:os-flavor-extra-specs:update": "admin",
    "os_compute_api:os-flavor-extra-specs:delete": "admin",
    "os_compute_api:os-host-registrations:create": "admin",
    "os_compute_api:extensions": "any",
    "os_compute_api:os-hosts:list": "admin",
    "os_compute_api:os-hosts:show": "admin",
    "os_compute_api:os-hosts:update": "admin",
    "corral:os-hosts:maintenance": "admin",
    "corral:os-maintenance-jobs": "admin",
    "corral:os-capacity-headroom": "admin",
    # server moves (Nova's project-manager-or-admin rules are admin here: no manager role)
    "os_compute_api:os-migrate-server:migrate": "admin",
    "os_compute_api:os-migrate-server:migrate:host": "admin",
    "os_compute_api:os-migrate-server:migrate_live": "admin",
    "os_compute_api:os-migrate-server:migrate_live:host": "admin",
    "os_compute_api:os-evacuate": "admin",
    "os_compute_api:servers:confirm_resize": "any",
    "os_compute_api:os-migrations:index": "admin",
    "os_compute_api:servers:migrations:index": "admin",
    "os_compute_api:servers:migrations:show": "admin",
    # Keystone's defaults: admins write; readers (Keystone's system readers) read;
    # a user may read itself, its token's project and that project's domain.
    "identity:list_projects": "reader",
    "identity:get_project": "reader",
    "identity:create_project": "admin",
    "identity:update_project": "admin",
    "identity:delete_project": "admin",
    "identity:list_users": "reader",
    "identity:get_user": "reader",
    "identity:create_user": "admin",
    "identity:update_user": "admin",
    "identity:delete_user": "admin",
    "identity:list_user_projects": "reader",
    "identity:list_roles": "reader",
    "identity:get_role": "reader",
    "identity:list_grants": "reader",
    "identity:check_grant": "reader",
    "identity:create_grant": "admin",
    "identity:revoke_grant": "admin",
    "identity:list_role_assignments": "reader",
    "identity:list_domains": "reader",
    "identity:get_domain": "reader",
    "identity:validate_token": "reader",
    "identity:revoke_token": "admin",
}


def caller_of(request: Request) -> Caller:
    """The authenticated Caller, or 401."""
    caller = request.auth
    if not isinstance(caller, Caller):
        raise NotAuthenticated()
    return caller


def allowed(caller: Caller, policy: str) -> bool:
    rule = POLICIES[policy]
    if rule == "admin":
        return caller.is_admin
    if rule == "reader":
        return caller.can_read_admin_views
    return True


def enforce(request: Request, policy: str) -> Caller:
    """Raise 403 unless the caller may act under ``policy``; return the Caller."""
    caller = caller_of(request)
    if not allowed(caller, policy):
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
    except (AuthenticationFailed, DatabaseError):
        return None
    if found is None or not found[1].is_admin:
        return None
    return found[1]
