"""Servers as Nova shows them. There is no hypervisor: a server is ACTIVE when
its placement allocation holds on its node's resource provider. Also the
one count of the instances on a node or a host (the VMs its agent reports
and Corral's servers)."""

import re
import uuid
from collections.abc import Iterable
from typing import Any

from django.db import models
from django.db.models import Expression, Func, OuterRef, Q, Subquery
from django.utils import timezone

from aggregates.hosts.models import ComputeNode
from aggregates.sql import among


class Server(models.Model):
    # vm_state values (Nova's), and the task states Corral uses.
    BUILDING = "building"
    ACTIVE = "active"
    ERROR = "error"
    DELETED = "deleted"
    # A delete deferred by RECLAIM_INSTANCE_INTERVAL (Nova's vm_state; its allocation is kept).
    SOFT_DELETED = "soft-delete"
    # Stopped (os-stop): SHUTOFF, its allocation kept as Nova keeps it.
    STOPPED = "stopped"
    VM_STATES = [
        (BUILDING, "building"),
        (ACTIVE, "active"),
        (STOPPED, "stopped"),
        (ERROR, "error"),
        (DELETED, "deleted"),
    ]
    SCHEDULING = "scheduling"
    DELETING = "deleting"
    # Who locked a server (Nova's locked_by): its project's member or an admin of another project.
    LOCKED_BY_OWNER = "owner"
    LOCKED_BY_ADMIN = "admin"
    # power_state values (Nova's).
    POWER_NOSTATE = 0
    POWER_RUNNING = 1
    POWER_SHUTDOWN = 4

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=255, db_index=True)
    project_id = models.CharField(max_length=255, db_index=True)
    user_id = models.CharField(max_length=255, blank=True, default="")
    # The flavor as it was at boot (Nova keeps a copy: the flavor may change or go):
    # {"vcpus", "ram", "disk", "ephemeral", "swap", "original_name", "extra_specs"}.
    flavorid = models.CharField(max_length=255)
    flavor = models.JSONField(default=dict)
    image_id = models.CharField(max_length=36, blank=True, default="")
    # The zone the server is in (its host's), and the zone it is pinned to:
    # the one asked for, or DEFAULT_SCHEDULE_ZONE; null when free to move.
    availability_zone = models.CharField(max_length=255, blank=True, default="")
    pinned_availability_zone = models.CharField(max_length=255, null=True, blank=True)
    host = models.CharField(max_length=255, null=True, blank=True, db_index=True)
    node = models.CharField(max_length=255, null=True, blank=True)
    node_uuid = models.CharField(max_length=36, null=True, blank=True)
    vm_state = models.CharField(max_length=20, choices=VM_STATES, default=BUILDING, db_index=True)
    task_state = models.CharField(max_length=30, null=True, blank=True)
    power_state = models.IntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    # Nova's lock (os-lock-server): a locked server refuses non-admins every
    # state-changing action; locked_by "owner" or "admin", the 2.73 reason.
    locked = models.BooleanField(default=False)
    locked_by = models.CharField(max_length=5, null=True, blank=True)
    locked_reason = models.CharField(max_length=255, null=True, blank=True)
    # Nova's display_description (null: none) and hostname (as given at create
    # or update from 2.90, else the sanitized name at create).
    description = models.CharField(max_length=255, null=True, blank=True)
    hostname = models.CharField(max_length=255, blank=True, default="")
    # Given at create, shown as Nova shows its columns: the addresses' canonical
    # text ("" when none), config_drive "True" when one was asked for, else "".
    access_ip_v4 = models.CharField(max_length=45, blank=True, default="")
    access_ip_v6 = models.CharField(max_length=45, blank=True, default="")
    config_drive = models.CharField(max_length=255, blank=True, default="")
    scheduler_hints = models.JSONField(default=dict, blank=True)
    # What the build needs to schedule again after a restart: the requested
    # zone/host/node forms, the number of instances asked for together.
    build_request = models.JSONField(default=dict, blank=True)
    reservation_id = models.CharField(max_length=40, blank=True, default="")
    launch_index = models.IntegerField(default=0)
    # {"code", "message", "details", "created"} when the build failed.
    fault = models.JSONField(null=True, blank=True)
    decision = models.ForeignKey(
        "aggregates.SchedulingDecision", null=True, blank=True, on_delete=models.SET_NULL, related_name="servers"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)
    launched_at = models.DateTimeField(null=True, blank=True)
    terminated_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["host", "vm_state"], name="server_host_state"),
            # The live servers of a node and how many are busy (task_state):
            # counted per candidate in every scheduling decision from this
            # index alone (PostgreSQL's index-only scan: 9 ms for 1,000 nodes
            # of 17 servers, against 30 ms reading the table).
            # deleted_at second, so that SQLite prefers it to deleted_at's own index.
            models.Index(fields=["node_uuid", "deleted_at", "task_state"], name="server_live_on_node"),
            # The few servers in a task, by node: the scheduler's I/O count
            # for its candidates without visiting every live server's entry.
            models.Index(
                fields=["node_uuid"],
                name="server_busy_on_node",
                condition=Q(deleted_at__isnull=True, task_state__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.uuid})"


def sanitized_hostname(name: str, server_uuid: object) -> str:
    """Nova's hostname of a display name: lowercased, runs of other
    characters as '-', at most 63 characters; "server-<uuid>" when nothing is left."""
    hostname = re.sub(r"[^\w.-]+", "-", name.lower(), flags=re.ASCII).strip(".-")
    return hostname[:63] or f"server-{server_uuid}"


class ServerTag(models.Model):
    """One tag of a server (Nova's tags: at most 50 a server, 1-60
    characters, no '/' or ',')."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="tag_rows")
    tag = models.CharField(max_length=60)

    class Meta:
        ordering = ["tag"]
        constraints = [models.UniqueConstraint(fields=["server", "tag"], name="server_tag_unique")]

    def __str__(self) -> str:
        return self.tag


class InstanceAction(models.Model):
    """What was done to a server and by which request (Nova's instance
    actions: ``create``, ``delete``, ``live-migration``...), with the user
    and project that asked. ``message`` is "Error" once an event failed."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="actions")
    action = models.CharField(max_length=255)
    request_id = models.CharField(max_length=255, db_index=True)
    user_id = models.CharField(max_length=255, null=True, blank=True)
    project_id = models.CharField(max_length=255, null=True, blank=True)
    start_time = models.DateTimeField(default=timezone.now)
    finish_time = models.DateTimeField(null=True, blank=True)
    message = models.CharField(max_length=255, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} {self.request_id}"


class InstanceActionEvent(models.Model):
    """One step of an instance action (Nova's events: ``compute_live_migration``...),
    on ``host``, its result "Success" or "Error" once finished."""

    SUCCESS = "Success"
    ERROR = "Error"

    action = models.ForeignKey(InstanceAction, on_delete=models.CASCADE, related_name="events")
    event = models.CharField(max_length=255)
    start_time = models.DateTimeField(default=timezone.now)
    finish_time = models.DateTimeField(null=True, blank=True)
    result = models.CharField(max_length=255, null=True, blank=True)
    traceback = models.TextField(null=True, blank=True)
    host = models.CharField(max_length=255, null=True, blank=True)
    details = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.event


# Nova's status of a server (its _STATE_MAP): vm_state -> task_state -> status
# ("default" when the task is none of the listed ones), for the states Corral has.
_RESIZING = dict.fromkeys(("resize_prep", "resize_migrating", "resize_migrated", "resize_finish"), "RESIZE")
_REBUILDING = dict.fromkeys(("rebuilding", "rebuild_block_device_mapping", "rebuild_spawning"), "REBUILD")
STATE_MAP: dict[str, dict[str, str]] = {
    Server.ACTIVE: {"default": "ACTIVE", "migrating": "MIGRATING", **_RESIZING, **_REBUILDING},
    Server.BUILDING: {"default": "BUILD"},
    Server.STOPPED: {"default": "SHUTOFF", **_RESIZING, **_REBUILDING},
    "resized": {"default": "VERIFY_RESIZE", "resize_reverting": "REVERT_RESIZE"},
    "paused": {"default": "PAUSED", "migrating": "MIGRATING"},
    Server.ERROR: {"default": "ERROR", **_REBUILDING},
    Server.DELETED: {"default": "DELETED"},
    Server.SOFT_DELETED: {"default": "SOFT_DELETED"},
}


def status_of(server: Server) -> str:
    """Nova's status of ``server`` from its vm_state and task_state."""
    if server.deleted_at is not None:
        return "DELETED"
    tasks = STATE_MAP.get(server.vm_state, {"default": "UNKNOWN"})
    return tasks.get(server.task_state or "", tasks["default"])


def status_q(status: str) -> Q | None:
    """The servers ``status_of`` shows as ``status`` (any case), in SQL;
    None when no state Corral has gives that status."""
    status = status.upper()
    if status == "DELETED":
        return Q(deleted_at__isnull=False) | Q(vm_state=Server.DELETED)
    condition, found = Q(pk__in=[]), False
    for vm_state, tasks in STATE_MAP.items():
        listed = [task for task in tasks if task != "default"]
        for task, shown in tasks.items():
            if shown != status:
                continue
            found = True
            if task == "default":
                condition |= Q(vm_state=vm_state) & (Q(task_state__isnull=True) | ~Q(task_state__in=listed))
            else:
                condition |= Q(vm_state=vm_state, task_state=task)
    return condition & Q(deleted_at__isnull=True) if found else None


# --- instances on a node or host: the one count --------------------------------------


class UuidText(Func):
    """A UUID column's value as ``str(uuid)`` writes it (lower case, dashed),
    the form ``Server.node_uuid`` holds: PostgreSQL's uuid type as text;
    SQLite's 32 hexadecimal digits (as Django stores a UUIDField there)
    with the dashes put in."""

    output_field = models.CharField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template="(%(expressions)s)::text", **extra)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        dashed = "||'-'||".join(
            f"substr(%(expressions)s, {start}, {length})"
            for start, length in ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
        )
        return self.as_sql(compiler, connection, template=f"lower({dashed})", **extra)


def live_servers(busy: bool = False) -> "models.QuerySet[Server]":
    """Corral's servers not deleted; with ``busy``, those of them in a task
    (build, move: the I/O the scheduler counts)."""
    servers = Server.objects.filter(deleted_at__isnull=True)
    return servers.filter(task_state__isnull=False) if busy else servers


def live_servers_on(node_uuid: "Expression | OuterRef", busy: bool = False) -> Subquery:
    """How many ``live_servers(busy)`` are on the node whose uuid
    ``node_uuid`` is (an outer query's uuid column, e.g. OuterRef("uuid")).
    Counted per node from the index server_live_on_node alone (for every
    node of a cloud: capacity, maintenance plans)."""
    servers = live_servers(busy).filter(node_uuid=UuidText(node_uuid))
    counted = servers.order_by().annotate(n=Func(template="COUNT(*)", output_field=models.IntegerField()))
    return Subquery(counted.values("n"), output_field=models.IntegerField())


def live_servers_by_node(node_uuids: Iterable[str], busy: bool = False) -> dict[str, int]:
    """Node uuid -> how many ``live_servers(busy)`` it has, for the nodes of
    ``node_uuids`` that have any, in one query grouped by node (PostgreSQL,
    1,000 nodes of 17 servers: 6 ms; 250 nodes: 1.8 ms; the busy ones from
    the partial index server_busy_on_node: 0.1 ms)."""
    rows = (
        live_servers(busy)
        .filter(among(Server, "node_uuid", node_uuids))
        .order_by()
        .values_list("node_uuid")
        .annotate(n=models.Count("*"))
    )
    return dict(rows)


def instances_by_node(nodes: Iterable[ComputeNode]) -> dict[str, int]:
    """Node uuid -> the instances on it: the VMs its agent reports running
    (``running_vms``, outside Corral) and Corral's servers placed on it.
    Every "host has instances" rule and every instance count shown uses this."""
    nodes = list(nodes)
    counts = {str(node.uuid): node.running_vms for node in nodes}
    rows = (
        Server.objects.filter(node_uuid__in=list(counts), deleted_at__isnull=True)
        .order_by()
        .values_list("node_uuid")
        .annotate(n=models.Count("id"))
    )
    for node_uuid, n in rows:
        counts[node_uuid] += n
    return counts


def instances_by_host(hosts: Iterable[str]) -> dict[str, int]:
    """Host -> the instances on its nodes, as ``instances_by_node`` counts
    them (two queries, however many hosts)."""
    hosts = list(hosts)
    counts: dict[str, int] = {}
    reported = (
        ComputeNode.objects.filter(host__in=hosts).order_by().values_list("host").annotate(n=models.Sum("running_vms"))
    )
    for host, n in reported:
        counts[host] = n or 0
    servers = (
        Server.objects.filter(host__in=hosts, deleted_at__isnull=True)
        .order_by()
        .values_list("host")
        .annotate(n=models.Count("id"))
    )
    for host, n in servers:
        counts[host] = counts.get(host, 0) + n
    return counts
