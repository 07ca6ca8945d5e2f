"""Who may do what: the one rule table of every API (compute, placement,
image, identity) and of Corral's own operations, keyed by upstream's rule
names with upstream's check-string language, enforced by oslo.policy and
overridable by an operator policy file in oslo.policy's YAML format
(``POLICY_FILE``). Both identity modes use these rules; ``manage.py
show_policy`` prints the effective policy.

A view (or a service function) names its rule and asks ``allowed`` /
``check``; a new endpoint adds its rule to ``RULES`` below (in its API's
block) and names it. Credentials are a plain mapping (``creds``: roles,
project_id, user_id), so that placement, which imports nothing of the
compute side, enforces through the same table.

The one rule whose default depends on the identity mode is
``admin_reader_api``: with Corral's own identity the ``reader`` role is a
read-only admin (no member holds it); with an external Keystone every
member's token carries ``reader`` (the bootstrap roles imply downwards), so
there it is the admin alone, as upstream's admin-only reads are."""

import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from oslo_config import cfg
from oslo_policy import policy as oslo_policy

# --- base rules (Nova's, Placement's and Glance's names) ---------------------
ADMIN = "rule:context_is_admin"
ADMIN_READER = "rule:admin_reader_api"
ANY = "@"
ADMIN_OR_SERVICE = "rule:admin_or_service_api"
PROJECT_READER_OR_ADMIN = "rule:project_reader_or_admin"
PROJECT_MEMBER_OR_ADMIN = "rule:project_member_or_admin"
PROJECT_MANAGER_OR_ADMIN = "rule:project_manager_or_admin"


def _base_rules() -> list[tuple[str, str, str]]:
    own_identity = settings.AUTH_STRATEGY != "external-keystone"
    return [
        ("context_is_admin", "role:admin", "The cloud's administrator."),
        ("admin_api", "role:admin", "Nova's and Placement's name for the administrator."),
        ("service_api", "role:service", "A service user (Nova, Corral's own service user)."),
        ("admin_or_service_api", "role:admin or role:service", "Placement's default: an admin or a service."),
        ("project_reader_api", "role:reader and project_id:%(project_id)s", "A reader of the target's project."),
        ("project_member_api", "role:member and project_id:%(project_id)s", "A member of the target's project."),
        ("project_manager_api", "role:manager and project_id:%(project_id)s", "A manager of the target's project."),
        ("project_reader_or_admin", "rule:project_reader_api or rule:context_is_admin", "Nova's default."),
        ("project_member_or_admin", "rule:project_member_api or rule:context_is_admin", "Nova's default."),
        ("project_manager_or_admin", "rule:project_manager_api or rule:context_is_admin", "Nova's default."),
        (
            "admin_reader_api",
            "role:admin or role:reader" if own_identity else "role:admin",
            "Who reads the administrators' views: with Corral's own identity its reader role (a read-only "
            "admin), with an external Keystone the admin only (every member's token carries reader there).",
        ),
    ]


# --- the table: rule name -> default check string -----------------------------
# Compute (Nova's names; Corral's own routes as corral:...).
COMPUTE_RULES: dict[str, str] = {
    "os_compute_api:os-aggregates:index": ADMIN_READER,
    "os_compute_api:os-aggregates:show": ADMIN_READER,
    "os_compute_api:os-aggregates:create": ADMIN,
    "os_compute_api:os-aggregates:update": ADMIN,
    "os_compute_api:os-aggregates:delete": ADMIN,
    "os_compute_api:os-aggregates:add_host": ADMIN,
    "os_compute_api:os-aggregates:remove_host": ADMIN,
    "os_compute_api:os-aggregates:set_metadata": ADMIN,
    "compute:aggregates:images": ADMIN,
    "corral:image-cache-jobs:list": ADMIN,
    "corral:image-cache-jobs:show": ADMIN,
    "os_compute_api:os-scheduler-explain": ADMIN,
    "os_compute_api:os-availability-zone:list": ANY,
    "os_compute_api:os-availability-zone:detail": ADMIN_READER,
    "os_compute_api:os-services:list": ADMIN_READER,
    "os_compute_api:os-services:update": ADMIN,
    "os_compute_api:os-services:delete": ADMIN,
    "os_compute_api:os-hypervisors:list": ADMIN_READER,
    "os_compute_api:os-hypervisors:list-detail": ADMIN_READER,
    "os_compute_api:os-hypervisors:show": ADMIN_READER,
    "os_compute_api:os-hypervisors:statistics": ADMIN_READER,
    "os_compute_api:os-hypervisors:uptime": ADMIN_READER,
    "os_compute_api:os-hypervisors:search": ADMIN_READER,
    "os_compute_api:os-hypervisors:servers": ADMIN_READER,
    "os_compute_api:os-flavor-manage:create": ADMIN,
    "os_compute_api:os-flavor-manage:update": ADMIN,
    "os_compute_api:os-flavor-manage:delete": ADMIN,
    "os_compute_api:os-flavor-access": ADMIN_READER,
    "os_compute_api:os-flavor-access:add_tenant_access": ADMIN,
    "os_compute_api:os-flavor-access:remove_tenant_access": ADMIN,
    "os_compute_api:os-flavor-extra-specs:index": ANY,
    "os_compute_api:os-flavor-extra-specs:show": ANY,
    "os_compute_api:os-flavor-extra-specs:create": ADMIN,
    "os_compute_api:os-flavor-extra-specs:update": ADMIN,
    "os_compute_api:os-flavor-extra-specs:delete": ADMIN,
    "os_compute_api:os-host-registrations:create": ADMIN,
    "os_compute_api:extensions": ANY,
    "os_compute_api:os-hosts:list": ADMIN,
    "os_compute_api:os-hosts:show": ADMIN,
    "os_compute_api:os-hosts:update": ADMIN,
    "corral:os-hosts:maintenance": ADMIN,
    "corral:os-maintenance-jobs": ADMIN,
    "corral:os-capacity-headroom": ADMIN,
    "corral:os-capacity": ADMIN,
    # Servers: a project's members create, update and delete its servers (the
    # services keep each caller to its own project's servers, admins to all).
    "os_compute_api:servers:create": PROJECT_MEMBER_OR_ADMIN,
    "os_compute_api:servers:update": PROJECT_MEMBER_OR_ADMIN,
    "os_compute_api:servers:delete": PROJECT_MEMBER_OR_ADMIN,
    # Nova's: every project's servers in a list, a host or node named at
    # create, os-resetState are the admin's.
    "os_compute_api:servers:index:get_all_tenants": ADMIN,
    "os_compute_api:servers:detail:get_all_tenants": ADMIN,
    "os_compute_api:servers:create:forced_host": ADMIN,
    "compute:servers:create:requested_destination": ADMIN,
    "os_compute_api:os-admin-actions:reset_state": ADMIN,
    # Locks and power actions (Nova's defaults): a project's members lock,
    # unlock, stop, start and reboot its servers; only an admin unlocks a
    # lock taken by the other side (an admin's lock, for the owner).
    "os_compute_api:os-lock-server:lock": PROJECT_MEMBER_OR_ADMIN,
    "os_compute_api:os-lock-server:unlock": PROJECT_MEMBER_OR_ADMIN,
    "os_compute_api:os-lock-server:unlock:unlock_override": ADMIN,
    "os_compute_api:servers:start": PROJECT_MEMBER_OR_ADMIN,
    "os_compute_api:servers:stop": PROJECT_MEMBER_OR_ADMIN,
    "os_compute_api:servers:reboot": PROJECT_MEMBER_OR_ADMIN,
    # Usage: Nova's defaults are the admin (list, audit log) and a project's
    # reader or the admin (show); here admin_reader_api (Corral's own readers
    # read them too) and any caller of the project itself.
    "os_compute_api:os-simple-tenant-usage:list": ADMIN_READER,
    "os_compute_api:os-simple-tenant-usage:show": f"{ADMIN_READER} or project_id:%(project_id)s",
    "os_compute_api:os-instance-usage-audit-log:list": ADMIN_READER,
    "os_compute_api:os-instance-usage-audit-log:show": ADMIN_READER,
    # Server moves: Nova gives project managers the moves without a host.
    "os_compute_api:os-migrate-server:migrate": PROJECT_MANAGER_OR_ADMIN,
    "os_compute_api:os-migrate-server:migrate:host": ADMIN,
    "os_compute_api:os-migrate-server:migrate_live": PROJECT_MANAGER_OR_ADMIN,
    "os_compute_api:os-migrate-server:migrate_live:host": ADMIN,
    "os_compute_api:os-evacuate": ADMIN,
    "os_compute_api:servers:confirm_resize": ANY,
    "os_compute_api:os-migrations:index": ADMIN,
    "os_compute_api:servers:migrations:index": ADMIN,
    "os_compute_api:servers:migrations:show": ADMIN,
    "os_compute_api:servers:resize": PROJECT_MEMBER_OR_ADMIN,
    "os_compute_api:servers:revert_resize": PROJECT_MEMBER_OR_ADMIN,
    # Quotas and limits: a project's own users read its quotas (Corral's
    # read-only admins and a reader of the project too); admins change them.
    "os_compute_api:os-quota-sets:show": f"{ADMIN_READER} or rule:project_member_api or rule:project_reader_api",
    "os_compute_api:os-quota-sets:detail": f"{ADMIN_READER} or rule:project_member_api or rule:project_reader_api",
    "os_compute_api:os-quota-sets:update": ADMIN,
    "os_compute_api:os-quota-sets:delete": ADMIN,
    "os_compute_api:os-quota-sets:defaults": ANY,
    "os_compute_api:os-quota-class-sets:show": ADMIN,
    "os_compute_api:os-quota-class-sets:update": ADMIN,
    "os_compute_api:limits": ANY,
    "os_compute_api:limits:other_project": ADMIN,
    # Server groups: the services keep each caller to its own project's
    # groups (all_projects lists every project's for admins only).
    "os_compute_api:os-server-groups:index": ANY,
    "os_compute_api:os-server-groups:show": ANY,
    "os_compute_api:os-server-groups:create": ANY,
    "os_compute_api:os-server-groups:delete": ANY,
    # Corral's own: address pools, pinned images.
    "corral:os-address-pools": ADMIN,
    "corral:pinned-images:list": ADMIN,
    "corral:pinned-images:create": ADMIN,
    "corral:pinned-images:delete": ADMIN,
    "corral:pinned-images:recheck": ADMIN,
}

# Keystone's (Corral's own identity only: an external Keystone applies its own).
IDENTITY_RULES: dict[str, str] = {
    **{
        f"identity:{name}": ADMIN_READER
        for name in (
            "list_projects",
            "get_project",
            "list_users",
            "get_user",
            "list_user_projects",
            "list_roles",
            "get_role",
            "list_grants",
            "check_grant",
            "list_role_assignments",
            "list_domains",
            "get_domain",
            "validate_token",
        )
    },
    **{
        f"identity:{name}": ADMIN
        for name in (
            "create_project",
            "update_project",
            "delete_project",
            "create_user",
            "update_user",
            "delete_user",
            "create_grant",
            "revoke_grant",
            "revoke_token",
        )
    },
}

# Placement's: an admin or a service; a project's usages also to its readers.
PLACEMENT_RULES: dict[str, str] = {
    **{
        f"placement:{name}": ADMIN_OR_SERVICE
        for name in (
            "reshaper:reshape",
            "resource_providers:list",
            "resource_providers:create",
            "resource_providers:show",
            "resource_providers:update",
            "resource_providers:delete",
            "resource_providers:inventories:list",
            "resource_providers:inventories:show",
            "resource_providers:inventories:create",
            "resource_providers:inventories:update",
            "resource_providers:inventories:delete",
            "resource_providers:aggregates:list",
            "resource_providers:aggregates:update",
            "resource_providers:traits:list",
            "resource_providers:traits:update",
            "resource_providers:traits:delete",
            "resource_providers:usages",
            "resource_providers:allocations:list",
            "resource_classes:list",
            "resource_classes:create",
            "resource_classes:show",
            "resource_classes:update",
            "resource_classes:delete",
            "traits:list",
            "traits:show",
            "traits:update",
            "traits:delete",
            "allocation_candidates:list",
            "allocations:list",
            "allocations:update",
            "allocations:manage",
            "allocations:delete",
        )
    },
    "placement:usages": f"{ADMIN_OR_SERVICE} or rule:project_reader_api",
}

# Glance's: writes to an admin, or a member acting on its own project's image
# (the target's project_id is the image's owner). Reads to an admin (and
# Corral's own readers) or a reader or member of the caller's own project
# (the target); which images that caller sees (its own, public, community,
# shared with it) is the image service's query, as Glance's default check
# string spells it out.
IMAGE_READ = f"{ADMIN_READER} or rule:project_reader_api or rule:project_member_api"
IMAGE_RULES: dict[str, str] = {
    **{
        name: PROJECT_MEMBER_OR_ADMIN
        for name in ("add_image", "modify_image", "delete_image", "upload_image", "deactivate", "reactivate")
    },
    **{name: IMAGE_READ for name in ("get_images", "get_image", "download_image")},
}

RULES: dict[str, str] = {**COMPUTE_RULES, **IDENTITY_RULES, **PLACEMENT_RULES, **IMAGE_RULES}

_lock = threading.Lock()
_enforcer: oslo_policy.Enforcer | None = None
# Decisions already taken, by (rule, target, credentials, the policy file's
# state): oslo.policy re-reads the file's state and inspects every check's
# signature on each call, a third of a millisecond per API request. Cleared
# with the enforcer; a changed policy file is another key.
_decisions: dict[tuple[Any, ...], bool] = {}
MAX_DECISIONS = 10_000


def _policy_file() -> str:
    """POLICY_FILE, which must exist when named (oslo.policy would ignore a
    missing one); none named: an empty file, so that no file on the
    configuration search path is picked up."""
    named = settings.POLICY_FILE
    if not named:
        return os.devnull
    if not os.path.isfile(named):
        raise ImproperlyConfigured(f"POLICY_FILE={named!r} is not a file")
    return os.path.abspath(named)


def enforcer() -> oslo_policy.Enforcer:
    """This process's enforcer (built on first use; oslo.policy reloads the
    policy file when it changes)."""
    global _enforcer
    with _lock:
        if _enforcer is None:
            conf = cfg.ConfigOpts()
            conf([], project="corral", default_config_files=[], default_config_dirs=[])
            built = oslo_policy.Enforcer(conf, policy_file=_policy_file(), use_conf=True)
            conf.set_override("policy_dirs", [], "oslo_policy")
            defaults = [oslo_policy.RuleDefault(name, check, description) for name, check, description in _base_rules()]
            defaults += [oslo_policy.RuleDefault(name, check) for name, check in RULES.items()]
            built.register_defaults(defaults)
            built.load_rules()
            _enforcer = built
        return _enforcer


def reset(**kwargs: Any) -> None:
    """Forget the enforcer: the next check builds it from the settings."""
    global _enforcer
    with _lock:
        _enforcer = None
        _decisions.clear()


def _on_setting_changed(setting: str, **kwargs: Any) -> None:
    if setting in ("POLICY_FILE", "AUTH_STRATEGY"):
        reset()


setting_changed.connect(_on_setting_changed)


def creds(roles: Iterable[str], project_id: str = "", user_id: str = "") -> dict[str, Any]:
    """The credentials a rule is checked against."""
    return {"roles": sorted(roles), "project_id": project_id or None, "user_id": user_id or None}


def allowed(rule: str, credentials: Mapping[str, Any], target: Mapping[str, Any] | None = None) -> bool:
    """Whether ``credentials`` pass ``rule`` (a name of the table: an unknown
    name raises, so a typo is no silent refusal) on ``target`` (by default
    the caller's own project, as Nova checks rules of no particular resource)."""
    if target is None:
        target = {"project_id": credentials.get("project_id"), "user_id": credentials.get("user_id")}
    built = enforcer()
    key = _decision_key(rule, credentials, target, built)
    if key is not None:
        decision = _decisions.get(key)
        if decision is not None:
            return decision
    decision = bool(built.authorize(rule, dict(target), dict(credentials), do_raise=False))
    if key is not None:
        if len(_decisions) >= MAX_DECISIONS:
            _decisions.clear()
        _decisions[key] = decision
    return decision


def _decision_key(
    rule: str, credentials: Mapping[str, Any], target: Mapping[str, Any], built: oslo_policy.Enforcer
) -> tuple[Any, ...] | None:
    """What a decision depends on, or None when a value cannot be a key."""
    try:
        values = (
            rule,
            tuple(sorted((name, _hashable(value)) for name, value in target.items())),
            tuple(sorted((name, _hashable(value)) for name, value in credentials.items())),
            _file_state(built.policy_file),
        )
        hash(values)
    except TypeError:
        return None
    return values


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _file_state(path: str) -> tuple[int, int, int] | None:
    if path == os.devnull:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def effective() -> dict[str, str]:
    """Every rule as it is enforced now: the defaults with the policy file's overrides."""
    built = enforcer()
    built.load_rules()
    return {name: str(check) for name, check in sorted(built.rules.items())}


class TokenCheckUnavailable(Exception):
    """A token could not be checked: the identity service (an external
    Keystone) did not answer in time, or answered with a server error. Each
    API answers 503 in its own format."""
