"""Usage as Nova reports it: each project's servers' hours over a period
(os-simple-tenant-usage) and the instance usage audit (os-instance_usage_audit_log).

Rules kept here:

* A server counts in a period when it launched before the period's end and
  was not terminated before its start (Nova's "active by window"), deleted
  servers included; one never launched counts nothing.
* Its hours are the overlap of the period and its lifetime (launched_at to
  terminated_at, or on); each total is the flavor's vCPUs, memory or root
  plus ephemeral disk times those hours, summed per project.
* Servers are taken in project, then server uuid order; a page of them
  starts after the marker server.
* Corral runs no usage audit: every compute service (disabled ones too) is a
  host the audit has not run on, for every period.
"""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import Q

from aggregates.errors import Forbidden, Invalid
from aggregates.hosts.models import Service
from aggregates.identity.caller import Caller
from aggregates.servers.models import Server

# The forms Nova reads a period's start and end in (naive: UTC).
TIME_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%d %H:%M:%S.%f")
LIST_POLICY = "os_compute_api:os-simple-tenant-usage:list"
SHOW_POLICY = "os_compute_api:os-simple-tenant-usage:show"
TERMINATED = "terminated"


@dataclass
class ServerUsage:
    server: Server
    hours: float
    flavor: str
    vcpus: int
    memory_mb: int
    local_gb: int
    started_at: datetime
    ended_at: datetime | None
    state: str
    uptime: int


@dataclass
class TenantUsage:
    tenant_id: str
    start: datetime
    stop: datetime
    total_hours: float = 0
    total_vcpus_usage: float = 0
    total_memory_mb_usage: float = 0
    total_local_gb_usage: float = 0
    servers: list[ServerUsage] = field(default_factory=list)


@dataclass
class Usage:
    tenants: list[TenantUsage]
    servers: list[ServerUsage]  # every server counted, in order (the page)


def _hours(server: Server, start: datetime, stop: datetime) -> float:
    launched, terminated = server.launched_at, server.terminated_at
    if terminated is not None and terminated < start:
        return 0
    if launched is None or launched > stop:
        return 0
    end = min(stop, terminated) if terminated is not None else stop
    return (end - max(launched, start)).total_seconds() / 3600.0


def _servers(start: datetime, stop: datetime, tenant_id: str | None, limit: int, marker: str | None) -> list[Server]:
    servers = Server.objects.filter(Q(terminated_at__isnull=True) | Q(terminated_at__gt=start), launched_at__lt=stop)
    if tenant_id is not None:
        servers = servers.filter(project_id=tenant_id)
    if marker is not None:
        found = Server.objects.filter(uuid=marker).first() if _is_uuid(marker) else None
        if found is None:
            raise Invalid(f"Marker {marker} could not be found.", field="marker")
        servers = servers.filter(
            Q(project_id__gt=found.project_id) | Q(project_id=found.project_id, uuid__gt=found.uuid)
        )
    return list(servers.order_by("project_id", "uuid")[:limit])


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _server_usage(server: Server, start: datetime, stop: datetime, now: datetime) -> ServerUsage:
    flavor = server.flavor or {}
    launched = server.launched_at
    assert launched is not None  # only launched servers are counted
    ended = server.terminated_at
    uptime = (ended if ended is not None else now) - launched
    return ServerUsage(
        server=server,
        hours=_hours(server, start, stop),
        flavor=str(flavor.get("original_name", "")),
        vcpus=int(flavor.get("vcpus", 0)),
        memory_mb=int(flavor.get("ram", 0)),
        local_gb=int(flavor.get("disk", 0)) + int(flavor.get("ephemeral", 0)),
        started_at=launched,
        ended_at=ended,
        state=TERMINATED if ended is not None else server.vm_state,
        uptime=int(uptime.total_seconds()),
    )


def _time(value: str | None) -> datetime:
    if not value:
        return datetime.now(UTC)
    for form in TIME_FORMATS:
        try:
            parsed = datetime.strptime(value, form)
        except ValueError:
            continue
        return parsed.replace(tzinfo=UTC)
    raise Invalid("Invalid datetime string: Datetime is in invalid format")


def tenant_usage(
    caller: Caller,
    start_text: str | None,
    end_text: str | None,
    tenant_id: str | None = None,
    limit: int = 1000,
    marker: str | None = None,
) -> Usage:
    """The usage of every project (admins and readers), or of ``tenant_id``
    (those and that project's own users), from ``start_text`` to ``end_text`` (each in
    one of ``TIME_FORMATS``, UTC; now when not given; the end at most now),
    one page of servers (``limit`` of them after ``marker``)."""
    if tenant_id is None and not caller.may(LIST_POLICY):
        raise Forbidden.by_policy(LIST_POLICY)
    if tenant_id is not None and not caller.may(SHOW_POLICY, {"project_id": tenant_id}):
        raise Forbidden.by_policy(SHOW_POLICY)
    start, stop = _time(start_text), _time(end_text)
    if not start < stop:
        raise Invalid("Invalid start time. The start time cannot occur after the end time.", field="start")
    now = datetime.now(UTC)
    stop = min(stop, now)
    tenants: dict[str, TenantUsage] = {}
    counted: list[ServerUsage] = []
    for server in _servers(start, stop, tenant_id, limit, marker):
        usage = _server_usage(server, start, stop, now)
        tenant = tenants.setdefault(server.project_id, TenantUsage(server.project_id, start, stop))
        tenant.total_local_gb_usage += usage.local_gb * usage.hours
        tenant.total_vcpus_usage += usage.vcpus * usage.hours
        tenant.total_memory_mb_usage += usage.memory_mb * usage.hours
        tenant.total_hours += usage.hours
        tenant.servers.append(usage)
        counted.append(usage)
    return Usage(list(tenants.values()), counted)


# --- the instance usage audit ---------------------------------------------------------


AUDIT_LIST_POLICY = "os_compute_api:os-instance-usage-audit-log:list"
AUDIT_SHOW_POLICY = "os_compute_api:os-instance-usage-audit-log:show"


@dataclass
class AuditLog:
    period_beginning: datetime
    period_ending: datetime
    hosts: Sequence[str]  # every compute service's host: none has run the audit


def _month_start(year: int, month: int) -> datetime:
    while month < 1:
        year, month = year - 1, month + 12
    return datetime(year, month, 1)


def last_completed_audit_period(before: datetime | None = None) -> tuple[datetime, datetime]:
    """Nova's audit period (its default, a month from the 1st, UTC, naive)
    most recently completed before ``before`` (naive UTC; default now)."""
    now = before if before is not None else datetime.now(UTC).replace(tzinfo=None)
    end = _month_start(now.year, now.month)
    if end >= now:
        end = _month_start(now.year, now.month - 1)
    return _month_start(end.year, end.month - 1), end


def check_audit_policy(caller: Caller, show: bool = False) -> None:
    """Admins (and readers) only read the audit (checked before the timestamp is, as Nova)."""
    rule = AUDIT_SHOW_POLICY if show else AUDIT_LIST_POLICY
    if not caller.may(rule):
        raise Forbidden.by_policy(rule)


def audit_log(caller: Caller, before: datetime | None = None, show: bool = False) -> AuditLog:
    """The usage audit of the period completed before ``before`` (or now):
    no task has run on any compute host, for Corral runs none."""
    check_audit_policy(caller, show)
    begin, end = last_completed_audit_period(before)
    hosts = sorted(set(Service.objects.filter(topic="compute").values_list("host", flat=True)))
    return AuditLog(begin, end, hosts)
