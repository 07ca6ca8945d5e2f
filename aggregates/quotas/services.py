"""Quotas as Nova's DbQuotaDriver keeps them: limits per project, per user
in a project and per quota class over the configured defaults (``QUOTA_*``
settings, Nova's ``[quota]`` options), -1 unlimited; usage counted from
Corral's servers, never stored.

Enforcement: ``check(project_id, user_id, deltas)`` inside the caller's
transaction, before it writes what adds the usage. It locks the project's
``ProjectQuotaLock`` row (on SQLite every write transaction already holds
the database's write lock), counts, and raises ``QuotaExceeded`` (a 403,
worded as Nova words it) when any resource would go over its limit. The
next check of the project waits for the lock and so counts what this
transaction wrote: concurrent boots never go past a limit.

- a boot: ``check_boot`` (the instances, cores and ram of min..max servers;
  it returns how many fit, as Nova lowers max_count to what quota allows);
- a resize: ``check_resize(project_id, user_id, old_flavor, new_flavor)``
  (``resize_deltas``: the upsize of cores and ram only, as Nova);
- a server group: ``check(project_id, user_id, {"server_groups": 1},
  used={"server_groups": <the project's groups>})``;
- a group member: ``check(project_id, user_id, {"server_group_members": n},
  used={"server_group_members": <the group's members>})``;
- metadata: ``check_metadata_items(project_id, count)``.

Resources Corral does not count itself (server groups) are counted by the
``used`` the caller passes, or by a counter its domain registers with
``register_counter`` (shown by the limits and the detailed quota set)."""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, IntegerField, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from aggregates.audit import services as events
from aggregates.errors import Forbidden, Invalid
from aggregates.identity.caller import Caller
from aggregates.identity.models import Project
from aggregates.quotas.models import ProjectQuota, ProjectQuotaLock, QuotaClassLimit
from aggregates.servers.models import Server

UNLIMITED = -1
MAX_LIMIT = 0x7FFFFFFF
DEFAULT_CLASS = "default"

# Every resource Nova knows, sorted (its QuotaEngine.resources), and the
# setting of each one's default (None: no option, unlimited).
RESOURCE_SETTINGS: dict[str, str | None] = {
    "cores": "QUOTA_CORES",
    "fixed_ips": None,
    "floating_ips": None,
    "injected_file_content_bytes": "QUOTA_INJECTED_FILE_CONTENT_BYTES",
    "injected_file_path_bytes": "QUOTA_INJECTED_FILE_PATH_LENGTH",
    "injected_files": "QUOTA_INJECTED_FILES",
    "instances": "QUOTA_INSTANCES",
    "key_pairs": "QUOTA_KEY_PAIRS",
    "metadata_items": "QUOTA_METADATA_ITEMS",
    "ram": "QUOTA_RAM",
    "security_group_rules": None,
    "security_groups": None,
    "server_group_members": "QUOTA_SERVER_GROUP_MEMBERS",
    "server_groups": "QUOTA_SERVER_GROUPS",
}
RESOURCES = tuple(RESOURCE_SETTINGS)
# Counted from the servers, for a project and for a user.
SERVER_RESOURCES = ("instances", "cores", "ram")
# Nova shows these as never used (per-user or per-group counts).
NEVER_SHOWN_USED = ("key_pairs", "server_group_members")
# Nova's resources that have no per-user limit.
PROJECT_ONLY = ("fixed_ips", "floating_ips")

SHOW_POLICY = "os_compute_api:os-quota-sets:show"
DETAIL_POLICY = "os_compute_api:os-quota-sets:detail"
UPDATE_POLICY = "os_compute_api:os-quota-sets:update"
DELETE_POLICY = "os_compute_api:os-quota-sets:delete"
CLASS_SHOW_POLICY = "os_compute_api:os-quota-class-sets:show"
CLASS_UPDATE_POLICY = "os_compute_api:os-quota-class-sets:update"
LIMITS_OTHER_PROJECT_POLICY = "os_compute_api:limits:other_project"

# resource -> counter(project_id, user_id or None) -> the count, for the
# resources another domain keeps (server groups).
Counter = Callable[[str, str | None], int]
_COUNTERS: dict[str, Counter] = {}


def register_counter(resource: str, counter: Counter) -> None:
    """Let the domain that keeps ``resource`` count it for the limits and
    the detailed quota sets: ``counter(project_id, user_id)`` (user_id None:
    the whole project)."""
    if resource not in RESOURCE_SETTINGS:
        raise ValueError(f"unknown quota resource {resource}")
    _COUNTERS[resource] = counter


class QuotaExceeded(Forbidden):
    """A request over quota (Nova's OverQuota family, a 403): nothing changed."""

    def __init__(self, message: str, overs: Iterable[str] = (), field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.overs = sorted(overs)


def enforced() -> bool:
    """False under QUOTA_DRIVER=noop (Nova's NoopQuotaDriver): nothing is
    checked and every limit shows as unlimited."""
    return str(settings.QUOTA_DRIVER) != "noop"


# --- limits ------------------------------------------------------------------------


def configured_defaults() -> dict[str, int]:
    """The defaults of the settings (Nova's [quota] options)."""
    return {
        name: (int(getattr(settings, setting)) if setting else UNLIMITED) for name, setting in RESOURCE_SETTINGS.items()
    }


def _rows(rows: Iterable[tuple[str, int]]) -> dict[str, int]:
    return {resource: limit for resource, limit in rows if resource in RESOURCE_SETTINGS}


def class_limits(class_name: str) -> dict[str, int]:
    """A quota class's limits: its own rows over the configured defaults."""
    if not enforced():
        return dict.fromkeys(RESOURCES, UNLIMITED)
    rows = QuotaClassLimit.objects.filter(class_name=class_name).values_list("resource", "hard_limit")
    return {**configured_defaults(), **_rows(rows)}


def defaults() -> dict[str, int]:
    """Nova's defaults: the ``default`` class over the configured values."""
    return class_limits(DEFAULT_CLASS)


def _project_rows(project_id: str) -> dict[str, int]:
    rows = ProjectQuota.objects.filter(project_id=project_id, user_id="")
    return _rows(rows.values_list("resource", "hard_limit"))


def _user_rows(project_id: str, user_id: str) -> dict[str, int]:
    rows = ProjectQuota.objects.filter(project_id=project_id, user_id=user_id)
    return _rows(rows.values_list("resource", "hard_limit"))


def limits(project_id: str, user_id: str | None = None) -> dict[str, int]:
    """The limits in force: the user's (with ``user_id``) over the project's
    over the defaults."""
    if not enforced():
        return dict.fromkeys(RESOURCES, UNLIMITED)
    found = {**defaults(), **_project_rows(project_id)}
    if user_id:
        found.update(_user_rows(project_id, user_id))
    return found


# --- usage -----------------------------------------------------------------------


def _server_counts(project_id: str, user_id: str | None = None) -> dict[str, int]:
    """instances, cores and ram of the project's (or the user's) servers not deleted."""
    servers = Server.objects.filter(project_id=project_id, deleted_at__isnull=True).exclude(vm_state=Server.DELETED)
    if user_id:
        servers = servers.filter(user_id=user_id)
    totals = servers.order_by().aggregate(
        instances=Count("id"),
        cores=Sum(Cast(KeyTextTransform("vcpus", "flavor"), IntegerField())),
        ram=Sum(Cast(KeyTextTransform("ram", "flavor"), IntegerField())),
    )
    return {name: int(totals[name] or 0) for name in SERVER_RESOURCES}


def usage(project_id: str, user_id: str | None = None) -> dict[str, int]:
    """What the project (or the user in it) uses, as Nova shows it: servers'
    instances, cores and ram; server groups by their domain's counter; key
    pairs and group members never (0), as in Nova's views."""
    used = dict.fromkeys(RESOURCES, 0)
    used.update(_server_counts(project_id, user_id))
    for resource, counter in _COUNTERS.items():
        if resource not in NEVER_SHOWN_USED:
            used[resource] = counter(project_id, user_id)
    return used


def counted_resources() -> frozenset[str]:
    """The resources whose usage Corral counts (the others show as 0, as Nova's key pairs)."""
    return frozenset(SERVER_RESOURCES) | (frozenset(_COUNTERS) - frozenset(NEVER_SHOWN_USED))


@dataclass
class QuotaDetail:
    limit: int
    in_use: int
    reserved: int = 0


def detail(project_id: str, user_id: str | None = None) -> dict[str, QuotaDetail]:
    """Limits and usage of every resource (Nova's os-quota-sets detail, the limits)."""
    found = limits(project_id, user_id)
    used = usage(project_id, user_id)
    return {resource: QuotaDetail(found[resource], used[resource]) for resource in RESOURCES}


# --- reading, with the policies ------------------------------------------------


def _authorize(caller: Caller, policy: str, project_id: str | None = None) -> None:
    """The policy's rule (config/policy.py), on ``project_id``'s quotas when given."""
    if not caller.may(policy, {"project_id": project_id} if project_id is not None else None):
        raise Forbidden.by_policy(policy)


def verify_project(project_id: str) -> None:
    """Nova's verify_project_id: a project Keystone does not know is a 400.
    Under noauth2 (tests) any project id is taken, as Nova does when it
    cannot ask Keystone."""
    if settings.AUTH_STRATEGY == "keystone" and not Project.objects.filter(pk=project_id).exists():
        raise Invalid(f"Project ID {project_id} is not a valid project.", field="project_id")


def show(caller: Caller, project_id: str, user_id: str | None = None) -> dict[str, int]:
    _authorize(caller, SHOW_POLICY, project_id)
    verify_project(project_id)
    return limits(project_id, user_id)


def show_detail(caller: Caller, project_id: str, user_id: str | None = None) -> dict[str, QuotaDetail]:
    _authorize(caller, DETAIL_POLICY, project_id)
    verify_project(project_id)
    return detail(project_id, user_id)


def show_defaults(caller: Caller, project_id: str) -> dict[str, int]:
    """Nova's os-quota-sets/{id}/defaults (any caller)."""
    verify_project(project_id)
    return defaults()


def limits_of(caller: Caller, tenant_id: str | None = None) -> dict[str, QuotaDetail]:
    """GET /limits: the caller's project, or ``tenant_id``'s (admins only)."""
    if tenant_id is not None:
        _authorize(caller, LIMITS_OTHER_PROJECT_POLICY)
    return detail(tenant_id if tenant_id is not None else caller.project_id)


# --- changing limits ---------------------------------------------------------------


def _unlimited(value: int) -> bool:
    return value <= UNLIMITED


def _sum(a: int, b: int) -> int:
    return UNLIMITED if _unlimited(a) or _unlimited(b) else a + b


def _sub(a: int, b: int) -> int:
    return UNLIMITED if _unlimited(a) or _unlimited(b) else a - b


def settable(project_id: str, user_id: str | None = None) -> dict[str, tuple[int, int]]:
    """resource -> (minimum, maximum) a limit may be set to (Nova's
    get_settable_quotas): at least what is used (and, for a project, what
    its users' limits add up to); a user's at most what the project has left."""
    project_limits = limits(project_id)
    user_limits_sum: dict[str, int] = {}
    for resource, limit in (
        ProjectQuota.objects.filter(project_id=project_id).exclude(user_id="").values_list("resource", "hard_limit")
    ):
        user_limits_sum[resource] = user_limits_sum.get(resource, 0) + limit
    remains = {resource: project_limits[resource] - user_limits_sum.get(resource, 0) for resource in RESOURCES}
    found = {}
    if user_id:
        own = _user_rows(project_id, user_id)
        used = usage(project_id, user_id)
        for resource in RESOURCES:
            found[resource] = (used[resource], _sum(remains[resource], own.get(resource, 0)))
    else:
        used = usage(project_id)
        for resource in RESOURCES:
            minimum = max(_sub(project_limits[resource], remains[resource]), used[resource])
            found[resource] = (minimum, UNLIMITED)
    return found


def _check_limit(resource: str, limit: int, minimum: int, maximum: int) -> None:
    def infinite(value: int) -> float:
        return float("inf") if value == UNLIMITED else value

    if infinite(limit) < infinite(minimum):
        raise Invalid(
            f"Quota limit {limit} for {resource} must be greater than or equal to already used and reserved {minimum}.",
            field=resource,
        )
    if infinite(limit) > infinite(maximum):
        raise Invalid(f"Quota limit {limit} for {resource} must be less than or equal to {maximum}.", field=resource)


def _limit_values(values: Mapping[str, Any]) -> dict[str, int]:
    """The limits asked for (Nova skips 'force' and empty values)."""
    found = {}
    for resource, value in values.items():
        if resource == "force" or (not value and value != 0):
            continue
        if resource not in RESOURCE_SETTINGS:
            raise Invalid(f"Unknown quota resources {resource}.", field=resource)
        found[resource] = int(value)
    return found


def update(
    caller: Caller,
    project_id: str,
    values: Mapping[str, Any],
    user_id: str | None = None,
    force: bool = False,
) -> dict[str, int]:
    """Set a project's (or a user's) limits. Unless ``force``, each must be
    at least what is used (and within what the project leaves a user): the
    first that is not refuses the whole change. Returns the limits after."""
    with events.failures_recorded(caller, "update_quota_set", "project", project_id):
        _authorize(caller, UPDATE_POLICY)
        verify_project(project_id)
        with transaction.atomic():
            _lock(project_id)
            wanted = _limit_values(values)
            if not force and wanted:
                ranges = settable(project_id, user_id)
                for resource, limit in wanted.items():
                    _check_limit(resource, limit, *ranges[resource])
            for resource, limit in wanted.items():
                ProjectQuota.objects.update_or_create(
                    project_id=project_id, user_id=user_id or "", resource=resource, defaults={"hard_limit": limit}
                )
            events.record(
                caller,
                "quota.update",
                object_type="project",
                object_id=project_id,
                payload={"user_id": user_id, "quota_set": wanted, "force": force},
            )
    return limits(project_id, user_id)


def delete(caller: Caller, project_id: str, user_id: str | None = None) -> None:
    """Back to the defaults: the project's limits and its users' (or one user's) go."""
    with events.failures_recorded(caller, "delete_quota_set", "project", project_id):
        _authorize(caller, DELETE_POLICY)
        with transaction.atomic():
            rows = ProjectQuota.objects.filter(project_id=project_id)
            if user_id:
                rows = rows.filter(user_id=user_id)
            rows.delete()
            events.record(
                caller, "quota.delete", object_type="project", object_id=project_id, payload={"user_id": user_id}
            )


def show_class(caller: Caller, class_name: str) -> dict[str, int]:
    _authorize(caller, CLASS_SHOW_POLICY)
    return class_limits(class_name)


def update_class(caller: Caller, class_name: str, values: Mapping[str, Any]) -> dict[str, int]:
    """Set a quota class's limits (the ``default`` class: everyone's defaults)."""
    with events.failures_recorded(caller, "update_quota_class_set", "quota_class", class_name):
        _authorize(caller, CLASS_UPDATE_POLICY)
        if not class_name:
            raise Invalid("quota_class_name has a minimum character requirement of 1.", field="id")
        if len(class_name) > 255:
            raise Invalid("quota_class_name has more than 255 characters.", field="id")
        wanted = {resource: int(value) for resource, value in values.items() if resource in RESOURCE_SETTINGS}
        with transaction.atomic():
            for resource, limit in wanted.items():
                QuotaClassLimit.objects.update_or_create(
                    class_name=class_name, resource=resource, defaults={"hard_limit": limit}
                )
            events.record(caller, "quota_class.update", object_type="quota_class", object_id=class_name, payload=wanted)
    return class_limits(class_name)


# --- enforcement -------------------------------------------------------------------


def _lock(project_id: str) -> None:
    """Lock the project's quota row (made on first use) for the rest of the
    transaction: every check of the project queues behind this one."""
    ProjectQuotaLock.objects.bulk_create([ProjectQuotaLock(project_id=project_id)], ignore_conflicts=True)
    list(ProjectQuotaLock.objects.select_for_update().filter(pk=project_id).values_list("pk"))


@dataclass
class Over:
    """Why a check failed: the resources over, and the limits and usage of
    the scope (project or user) they were over in."""

    overs: list[str]
    limits: dict[str, int]
    used: dict[str, int]


def _over(
    project_id: str,
    user_id: str | None,
    deltas: Mapping[str, int],
    used: Mapping[str, int] | None,
    user_used: Mapping[str, int] | None,
) -> Over | None:
    """Nova's check_deltas: usage plus delta against the project's limit,
    and against the user's where the user has a limit of its own."""
    project_limits = limits(project_id)
    own = _user_rows(project_id, user_id) if user_id else {}
    wanted = [resource for resource, delta in deltas.items() if delta >= 0]
    if all(_unlimited(project_limits[r]) and _unlimited(own.get(r, UNLIMITED)) for r in wanted):
        return None
    _lock(project_id)
    counted_project = dict(used or {})
    if any(resource in SERVER_RESOURCES for resource in deltas):
        counted_project = {**_server_counts(project_id), **counted_project}
    counted_user: dict[str, int] = dict(user_used or {})
    if any(resource in own and resource in SERVER_RESOURCES for resource in deltas) and user_id:
        counted_user = {**_server_counts(project_id, user_id), **counted_user}
    overs = [
        resource
        for resource, delta in deltas.items()
        if not _unlimited(project_limits[resource])
        and counted_project.get(resource, 0) + delta > project_limits[resource]
    ]
    if overs:
        return Over(sorted(overs), project_limits, {r: counted_project.get(r, 0) for r in RESOURCES})
    user_limits = {**project_limits, **own}
    overs = [
        resource
        for resource, delta in deltas.items()
        if resource in own
        and not _unlimited(own[resource])
        and counted_user.get(resource, counted_project.get(resource, 0)) + delta > own[resource]
    ]
    if overs:
        user_counts = {r: counted_user.get(r, counted_project.get(r, 0)) for r in RESOURCES}
        return Over(sorted(overs), user_limits, user_counts)
    return None


# Nova's words for the resources not counted by a boot or a resize.
MESSAGES = {
    "server_groups": "Quota exceeded, too many server groups.",
    "server_group_members": "Quota exceeded, too many servers in group",
    "key_pairs": "Quota exceeded, too many key pairs.",
}


def check(
    project_id: str,
    user_id: str | None,
    deltas: Mapping[str, int],
    used: Mapping[str, int] | None = None,
    user_used: Mapping[str, int] | None = None,
) -> None:
    """Inside the caller's transaction, before it writes: refuse (403,
    ``QuotaExceeded``) when adding ``deltas`` (resource -> how many more)
    would take the project, or the user where it has limits of its own,
    over a limit. instances, cores and ram are counted from the servers;
    any other resource's current count is the caller's ``used`` (the
    project's) and ``user_used`` (the user's, when it differs). Locks the
    project's quota row until the transaction ends."""
    unknown = sorted(set(deltas) - set(RESOURCE_SETTINGS))
    if unknown:
        raise ValueError(f"Unknown quota resources {unknown}.")
    if not enforced():
        return
    over = _over(project_id, user_id, deltas, used, user_used)
    if over is None:
        return
    named = [MESSAGES[resource] for resource in over.overs if resource in MESSAGES]
    if named:
        raise QuotaExceeded(named[0], over.overs)
    if "metadata_items" in over.overs:
        raise QuotaExceeded(f"Maximum number of metadata items exceeds {over.limits['metadata_items']}", over.overs)
    raise QuotaExceeded(_too_many(over, {resource: str(deltas[resource]) for resource in over.overs}), over.overs)


def _too_many(over: Over, requested: Mapping[str, str]) -> str:
    """Nova's TooManyInstances: "Quota exceeded for instances: Requested 1,
    but already used 10 of 10 instances" (its get_over_quota_detail)."""
    overs = ", ".join(over.overs)
    reqs = ", ".join(requested[resource] for resource in over.overs)
    used = ", ".join(str(over.used[resource]) for resource in over.overs)
    allowed = ", ".join(str(over.limits[resource]) for resource in over.overs)
    return f"Quota exceeded for {overs}: Requested {reqs}, but already used {used} of {allowed} {overs}"


def check_metadata_items(project_id: str, count: int) -> None:
    """A server's (or image's) metadata of ``count`` items against the
    project's metadata_items limit (403 in Nova's words)."""
    if not enforced():
        return
    limit = limits(project_id)["metadata_items"]
    if not _unlimited(limit) and count > limit:
        raise QuotaExceeded(f"Maximum number of metadata items exceeds {limit}", ["metadata_items"], field="metadata")


def _headroom(
    limits: Mapping[str, int], used: Mapping[str, int], vcpus: int, ram: int, cap: int | None
) -> tuple[int | None, str]:
    """Nova's headroom: how many more servers of a flavor with ``vcpus`` and
    ``ram`` each limited resource takes (an unlimited cores or ram follows the
    instances), at most ``cap``; and the resource that limits it ("" when
    none does, None then for no cap)."""
    allowed, limiting = cap, ""
    for resource, each in (("instances", 1), ("cores", vcpus), ("ram", ram)):
        if each and not _unlimited(limits[resource]):
            left = max((limits[resource] - used[resource]) // each, 0)
            if allowed is None or left < allowed:
                allowed, limiting = left, resource
    return allowed, limiting


def servers_left(project_id: str, vcpus: int, ram: int) -> tuple[int | None, str]:
    """How many more servers of a flavor with ``vcpus`` and ``ram`` the
    project's quota allows (None: no limit), and the resource that limits it
    (instances, cores or ram): what a boot's check would count."""
    if not enforced():
        return None, ""
    return _headroom(limits(project_id), _server_counts(project_id), vcpus, ram, None)


def check_boot(project_id: str, user_id: str | None, vcpus: int, ram: int, min_count: int, max_count: int) -> int:
    """Nova's check_num_instances_quota, inside the boot's transaction
    (before its rows are written): how many of min_count..max_count servers
    of a flavor with ``vcpus`` and ``ram`` fit in the quota (the most that
    do), else 403 "Quota exceeded for instances: Requested 1, but already
    used 10 of 10 instances"."""
    if not enforced():
        return max_count
    deltas = {"instances": max_count, "cores": max_count * vcpus, "ram": max_count * ram}
    over = _over(project_id, user_id, deltas, None, None)
    if over is None:
        return max_count
    left, _ = _headroom(over.limits, over.used, vcpus, ram, max_count)
    allowed = max_count if left is None else left
    if min_count <= allowed < max_count:
        return check_boot(project_id, user_id, vcpus, ram, min_count, allowed)
    instances = str(min_count) if min_count == max_count else f"{min_count}-{max_count}"
    requested = {"instances": instances, "cores": str(deltas["cores"]), "ram": str(deltas["ram"])}
    raise QuotaExceeded(_too_many(over, requested), over.overs)


FlavorSize = Mapping[str, Any] | Any


def _size(flavor: FlavorSize) -> tuple[int, int]:
    """(vcpus, MiB of RAM) of a server's flavor snapshot ({"vcpus", "ram"}) or a Flavor."""
    if isinstance(flavor, Mapping):
        return int(flavor["vcpus"]), int(flavor["ram"] if "ram" in flavor else flavor["memory_mb"])
    return int(flavor.vcpus), int(flavor.memory_mb)


def resize_deltas(old_flavor: FlavorSize, new_flavor: FlavorSize) -> dict[str, int]:
    """Nova's upsize_quota_delta: the cores and ram a resize adds (only
    what grows). Each flavor is a server's snapshot ({"vcpus", "ram"}) or a
    Flavor (vcpus, memory_mb)."""
    (old_vcpus, old_ram), (new_vcpus, new_ram) = _size(old_flavor), _size(new_flavor)
    deltas = {}
    if new_vcpus - old_vcpus > 0:
        deltas["cores"] = new_vcpus - old_vcpus
    if new_ram - old_ram > 0:
        deltas["ram"] = new_ram - old_ram
    return deltas


def check_resize(project_id: str, user_id: str | None, old_flavor: FlavorSize, new_flavor: FlavorSize) -> None:
    """Inside the resize's transaction: 403 (Nova's "Quota exceeded for
    cores: Requested 2, but already used 20 of 20 cores") when the upsize
    does not fit; a downsize or the same size always does."""
    deltas = resize_deltas(old_flavor, new_flavor)
    if deltas:
        check(project_id, user_id, deltas)
