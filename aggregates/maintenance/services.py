"""Host maintenance: start (disable the host's compute service, then move
every server off it, aggregate peers first) and stop (enable it again and,
when asked, move back the servers that left), each as a job with one row
per server; the plan of either without changing anything (a dry run); and
the capacity headroom of an aggregate or a zone.

The runner is the only writer of a running job's rows. Moves run in
threads of their own (at most MAINTENANCE_CONCURRENCY at a time, each with
its own database connection and no transaction open, as the move requires)
and hand their outcome back to the runner's thread, which records it and
renews the job's lease. An item is ``moving`` only while a live runner
moves it: a resumed job first settles such items from where the server is
(moved when it left its source, else pending again).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Conflict, Invalid, NotFound, ServiceError, Unavailable
from aggregates.host_aggregates import services as aggregate_services
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts import services as host_services
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.caller import Caller
from aggregates.jobs import leases, runner
from aggregates.mirroring import applier
from aggregates.mirroring.models import ProviderSyncRequest
from aggregates.mirroring.placement_client import PlacementClient, PlacementError, client
from aggregates.moves import services as moves
from aggregates.scheduling import engine, prefilters
from aggregates.scheduling import filters as host_filters
from aggregates.scheduling import services as scheduling
from aggregates.scheduling.host_state import AggregateInfo, HostState
from aggregates.scheduling.request import RequestSpec
from aggregates.scheduling.weighers import weigh_hosts
from aggregates.servers.models import Server
from aggregates.zones.services import AZ_KEY

from .models import MaintenanceItem, MaintenanceJob

log = logging.getLogger(__name__)

RUN_TASK = "corral.maintenance.run"
DRAIN_TASK = "corral.maintenance.drain"
DEFAULT_REASON = "Host maintenance"
# Move kinds of the moves module, by strategy.
KINDS = {MaintenanceJob.LIVE: "live-migration", MaintenanceJob.COLD: "migration"}
# The classes a plan keeps its own account of (HostState's figures).
TRACKED = ("VCPU", "MEMORY_MB", "DISK_GB")


# --- reading -------------------------------------------------------------------


def jobs() -> QuerySet[MaintenanceJob]:
    return MaintenanceJob.objects.all()


def jobs_with_items() -> QuerySet[MaintenanceJob]:
    return MaintenanceJob.objects.prefetch_related("items")


def get_job(job_uuid: str) -> MaintenanceJob:
    try:
        parsed = uuid.UUID(str(job_uuid))
    except ValueError:
        parsed = None
    job = jobs_with_items().filter(uuid=parsed).first() if parsed else None
    if job is None:
        raise NotFound(f"Maintenance job {job_uuid} could not be found.")
    return job


def compute_service(host: str) -> Service:
    """The host's compute service, else 404 (host names match exactly)."""
    service = Service.objects.compute_of(host)
    if service is None:
        raise NotFound(f"Compute host {host} could not be found.", field="host")
    return service


def last_job(host: str) -> MaintenanceJob | None:
    return MaintenanceJob.objects.filter(host=host).order_by("-created_at", "-id").first()


def in_maintenance(host: str) -> bool:
    """A host is in maintenance from a start until the next stop."""
    job = last_job(host)
    return job is not None and job.action == MaintenanceJob.START


# --- plans (dry runs, headroom) ------------------------------------------------


@dataclass
class PlannedMove:
    server_uuid: str
    name: str
    source: str
    flavor: str
    resources: dict[str, int]
    target: str | None = None
    reason: str = ""
    rejected_by: dict[str, int] = field(default_factory=dict)


@dataclass
class Plan:
    host: str
    action: str
    strategy: str
    servers: list[PlannedMove]

    @property
    def movable(self) -> int:
        return sum(1 for move in self.servers if move.target)


def _flavor_name(server: Server) -> str:
    return str((server.flavor or {}).get("original_name") or server.flavorid)


def _aggregate_uuids_of(host: str) -> frozenset[str]:
    return frozenset(str(u) for u in AggregateHost.objects.filter(host=host).values_list("aggregate__uuid", flat=True))


class _Ledger:
    """What a plan has put on each compute node so far (node uuid -> class ->
    amount; "servers" counts them), applied to each decision's own
    HostState objects before it chooses again."""

    def __init__(self) -> None:
        self.added: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def add(self, host: HostState, wanted: dict[str, int]) -> None:
        for rc, amount in wanted.items():
            self.added[host.node_uuid][rc] += amount
        self.added[host.node_uuid]["servers"] += 1


def _room(host: HostState) -> dict[str, float]:
    return {"VCPU": host.free_vcpus, "MEMORY_MB": host.free_ram_mb, "DISK_GB": host.free_disk_mb / 1024}


def _fits(host: HostState, wanted: dict[str, int]) -> bool:
    room = _room(host)
    return all(room[rc] >= amount for rc, amount in wanted.items() if rc in room)


@dataclass
class _Group:
    """One scheduling decision shared by the servers of the same kind."""

    spec: RequestSpec
    decision: engine.Decision
    applied: dict[str, dict[str, int]] = field(default_factory=dict)
    stale: bool = False

    def sync(self, ledger: _Ledger) -> None:
        """Count on this decision's hosts what the plan added since it last looked."""
        for weighed in self.decision.ordered:
            host = weighed.host
            added = ledger.added.get(host.node_uuid)
            if not added:
                continue
            seen = self.applied.setdefault(host.node_uuid, {})
            delta = {rc: amount - seen.get(rc, 0) for rc, amount in added.items() if amount != seen.get(rc, 0)}
            if not delta:
                continue
            host.vcpus_used += delta.get("VCPU", 0)
            host.memory_mb_used += delta.get("MEMORY_MB", 0)
            host.disk_gb_used += delta.get("DISK_GB", 0)
            host.num_instances += delta.get("servers", 0)
            seen.update(added)
            self.stale = True

    def ordered(self) -> list[HostState]:
        """The hosts in the order the scheduler would try them now (weighed
        again once the plan put servers on some)."""
        if self.stale:
            self.decision.ordered = _peers_first(
                weigh_hosts([w.host for w in self.decision.ordered], self.spec), self.spec
            )
            self.stale = False
        return [w.host for w in self.decision.ordered]


def _peers_first(ordered: list[Any], spec: RequestSpec) -> list[Any]:
    preferred = spec.preferred_aggregates
    if preferred:  # hosts sharing an aggregate with the source first, each group by weight
        ordered.sort(key=lambda w: not any(a.uuid in preferred for a in w.host.aggregates))
    return ordered


def _decide(
    spec: RequestSpec,
    placement: PlacementClient,
    aggregates: dict[int, AggregateInfo],
    within: set[str] | None,
    member_of: Sequence[str],
) -> engine.Decision:
    """The scheduler's decision for ``spec`` (as ``engine.decide`` makes it
    for a move) restricted to the hosts ``within`` (all when None), with
    placement asked only about providers of the aggregates ``member_of``
    (no result limit then). Nothing is claimed or stored."""
    decision = engine.Decision(spec=spec, query=None, complete=False)
    try:
        query = prefilters.build_query(spec, list(aggregates.values()))
    except prefilters.NoValidHostForRequest as refused:
        decision.refusal = str(refused)
        return decision
    if member_of:
        query.member_of.append(sorted(member_of))
    if within is not None:  # every host of the set must be seen
        query.limit = None
    decision.query = query
    data = engine.query_candidates(placement, query)
    summaries = data.get("provider_summaries", {})
    for request in data.get("allocation_requests", []):
        root = next(iter(request["allocations"]))
        decision.allocation_requests.setdefault(root, request)
    decision.candidates = len(decision.allocation_requests)
    candidates = []
    for host in engine.load_hosts(aggregates, set(decision.allocation_requests)):
        if host.host in spec.ignore_hosts:
            reason = f"host {host.host} is being emptied"
            decision.fates[host.node_uuid] = engine.HostFate(
                host.host, host.node, "rejected", "placement", "ignore_hosts", reason
            )
            continue
        if within is not None and host.host not in within:
            continue
        engine._apply_summary(host, summaries.get(host.node_uuid, {}))
        candidates.append(host)
    enabled = host_filters.enabled_filters(settings.ENABLED_FILTERS)
    passing = engine.run_filters(candidates, spec, enabled, decision)
    decision.ordered = _peers_first(weigh_hosts(passing, spec), spec)
    return decision


def _why_nowhere(
    spec: RequestSpec,
    decision: engine.Decision,
    placement: PlacementClient,
    aggregates: dict[int, AggregateInfo],
    within: set[str] | None,
) -> tuple[str, dict[str, int]]:
    """Why no host can take a server of ``spec``: every host of ``within``
    (or every host) given its fate, summed up in one sentence."""
    if decision.refusal:
        return scheduling.NO_VALID_HOST + decision.refusal, {"require_tenant_aggregate": 1}
    hosts = [h for h in engine.load_hosts(aggregates) if within is None or h.host in within]
    excluded = [
        h
        for h in hosts
        if h.node_uuid not in decision.allocation_requests
        and h.node_uuid not in decision.fates
        and h.host not in spec.ignore_hosts
    ]
    query = decision.query
    returned_all = query is None or query.limit is None or decision.candidates < query.limit
    if query is not None and excluded:
        engine.explain_placement_exclusions(placement, decision, excluded, returned_all)
    names = {h.node_uuid for h in hosts}
    fates = [
        fate
        for node_uuid, fate in decision.fates.items()
        if node_uuid in names and fate.result == "rejected" and fate.filter != "ignore_hosts"
    ]
    by: dict[str, int] = defaultdict(int)
    for fate in fates:
        by[fate.filter or fate.stage] += 1
    if not fates:
        return "No valid host was found: there is no other compute host to move it to.", {}
    summary = ", ".join(f"{name}: {count}" for name, count in sorted(by.items(), key=lambda i: (-i[1], i[0])))
    examples = "; ".join(fate.reason for fate in sorted(fates, key=lambda f: f.host)[:3])
    return (
        f"No valid host was found: {len(fates)} host(s) rejected ({summary}). {examples}",
        dict(sorted(by.items())),
    )


def _spec_key(server: Server, preferred: frozenset[str]) -> tuple[Any, ...]:
    flavor = server.flavor or {}
    return (
        server.flavorid,
        tuple(sorted((k, str(v)) for k, v in flavor.items() if k != "extra_specs")),
        tuple(sorted((flavor.get("extra_specs") or {}).items())),
        server.image_id,
        server.project_id,
        server.user_id,
        server.pinned_availability_zone,
        preferred,
    )


def plan_moves(
    servers: Sequence[Server],
    *,
    emptied: set[str],
    within: set[str] | None = None,
    member_of: Sequence[str] = (),
    preferred_of: Callable[[Server], frozenset[str]] = lambda server: frozenset(),
    placement: PlacementClient | None = None,
) -> list[PlannedMove]:
    """Where each of ``servers`` would go if the hosts ``emptied`` were
    emptied (never onto one of them), in order: each server the target the
    scheduler would choose, counting the servers planned before it, or why
    none can take it. Servers of the same flavor, image, project and pinned
    zone share one scheduling decision. Nothing is claimed or stored."""
    placement = placement or client()
    aggregates = engine.load_aggregates()
    ledger = _Ledger()
    groups: dict[tuple[Any, ...], list[Server]] = {}
    for server in servers:
        groups.setdefault(_spec_key(server, preferred_of(server)), []).append(server)
    decided: dict[tuple[Any, ...], _Group] = {}
    for key, members in groups.items():
        spec = scheduling.spec_for_server(members[0], ignore_hosts=frozenset(emptied), preferred_aggregates=key[-1])
        try:
            decided[key] = _Group(spec, _decide(spec, placement, aggregates, within, member_of))
        except PlacementError as failed:
            raise Unavailable(f"Planning is not possible now: {failed}") from failed
    planned: dict[str, PlannedMove] = {}
    explained: dict[tuple[Any, ...], tuple[str, dict[str, int]]] = {}
    for server in servers:
        key = _spec_key(server, preferred_of(server))
        group = decided[key]
        group.sync(ledger)
        wanted = prefilters.flavor_resources(group.spec)
        move = PlannedMove(str(server.uuid), server.name, server.host or "", _flavor_name(server), wanted)
        ordered = group.ordered()
        chosen = next((host for host in ordered if _fits(host, wanted)), None)
        if chosen is not None:
            ledger.add(chosen, wanted)
            move.target = chosen.host
        elif ordered:
            full = ", ".join(
                f"{host.host} ("
                + ", ".join(f"{rc} {max(int(v), 0)}" for rc, v in _room(host).items() if rc in wanted)
                + " free)"
                for host in ordered[:5]
            )
            move.reason = (
                f"No valid host was found: the {len(ordered)} host(s) that pass every filter have no room "
                f"left for flavor {move.flavor} ({_amounts(wanted)}) once the servers planned before it are "
                f"placed: {full}"
            )
            move.rejected_by = {"planned_usage": len(ordered)}
        else:
            if key not in explained:
                try:
                    explained[key] = _why_nowhere(group.spec, group.decision, placement, aggregates, within)
                except PlacementError as failed:
                    raise Unavailable(f"Planning is not possible now: {failed}") from failed
            move.reason, move.rejected_by = explained[key]
        planned[move.server_uuid] = move
    return [planned[str(server.uuid)] for server in servers]


def _amounts(resources: dict[str, int]) -> str:
    return ", ".join(f"{rc} {amount}" for rc, amount in sorted(resources.items()))


def servers_on(host: str) -> list[Server]:
    """The servers of ``host`` that are not deleted, oldest first."""
    return list(
        Server.objects.filter(host=host, deleted_at__isnull=True)
        .exclude(vm_state=Server.DELETED)
        .order_by("created_at", "id")
    )


def _drain_plan(host: str, strategy: str, prefer_aggregate_peers: bool) -> Plan:
    preferred = _aggregate_uuids_of(host) if prefer_aggregate_peers else frozenset()
    moves = plan_moves(servers_on(host), emptied={host}, preferred_of=lambda server: preferred)
    return Plan(host, MaintenanceJob.START, strategy, moves)


def _returning(host: str) -> list[tuple[MaintenanceItem, Server | None]]:
    """The servers that left ``host`` during its last start, each with its
    row as it is now (None when deleted)."""
    start = MaintenanceJob.objects.filter(host=host, action=MaintenanceJob.START).order_by("-created_at", "-id").first()
    if start is None:
        return []
    items = list(start.items.filter(status=MaintenanceItem.MOVED).order_by("id"))
    rows = {
        str(s.uuid): s
        for s in Server.objects.filter(uuid__in=[i.server_uuid for i in items], deleted_at__isnull=True).exclude(
            vm_state=Server.DELETED
        )
    }
    return [(item, rows.get(str(item.server_uuid))) for item in items]


def _node_room(placement: PlacementClient, host: str) -> dict[str, float]:
    room: dict[str, float] = defaultdict(float)
    for node_uuid in ComputeNode.objects.filter(host=host).values_list("uuid", flat=True):
        inventories = placement.provider_inventories(node_uuid)
        usages = placement.provider_usages(node_uuid)
        for rc, inventory in inventories.items():
            capacity = (inventory["total"] - inventory["reserved"]) * inventory["allocation_ratio"]
            room[rc] += capacity - usages.get(rc, 0)
    return room


def _return_plan(host: str, strategy: str) -> Plan:
    """Which servers a stop with rebalance moves back, and whether the host has room for them."""
    placement = client()
    try:
        room = _node_room(placement, host)
    except PlacementError as failed:
        raise Unavailable(f"Planning is not possible now: {failed}") from failed
    moves = []
    for item, server in _returning(host):
        wanted = {}
        if server is not None:
            spec = scheduling.spec_for_server(server)
            wanted = prefilters.flavor_resources(spec)
        move = PlannedMove(str(item.server_uuid), item.name, item.target or "", "", wanted)
        if server is None:
            move.reason = "The server was deleted."
        elif server.host != item.target:
            move.source = server.host or ""
            move.reason = f"The server is on {server.host} now, not on {item.target} where the drain put it."
        else:
            move.flavor = _flavor_name(server)
            short = [rc for rc, amount in wanted.items() if room.get(rc, 0) < amount]
            if short:
                move.reason = (
                    f"Host {host} lacks room for {', '.join(short)}: flavor {move.flavor} needs {_amounts(wanted)}; "
                    + ", ".join(f"{rc} {max(int(room.get(rc, 0)), 0)} free" for rc in short)
                )
            else:
                for rc, amount in wanted.items():
                    room[rc] -= amount
                move.target = host
        moves.append(move)
    return Plan(host, MaintenanceJob.STOP, strategy, moves)


# --- start and stop --------------------------------------------------------------


def _check_options(strategy: str) -> None:
    if strategy not in KINDS:
        raise Invalid(f"Invalid strategy {strategy!r}: choose live or cold.", field="strategy")


def start_maintenance(
    caller: Caller,
    host: str,
    *,
    reason: str | None = None,
    strategy: str = MaintenanceJob.LIVE,
    prefer_aggregate_peers: bool = True,
    rebalance: bool = False,
    dry_run: bool = False,
) -> MaintenanceJob | Plan:
    """Disable the host's compute service with ``reason`` and create the job
    moving every server off it (started after commit); with ``dry_run``
    only the plan, and nothing changes. 404 for an unknown host, 409 when
    the host is in maintenance already."""
    compute_service(host)
    _check_options(strategy)
    if in_maintenance(host):
        raise Conflict(f"Host {host} is already in maintenance: stop its maintenance first.", field="host")
    if dry_run:
        return _drain_plan(host, strategy, prefer_aggregate_peers)
    reason = reason or DEFAULT_REASON
    with transaction.atomic():
        Service.objects.select_for_update().filter(host=host, binary=Service.COMPUTE).first()
        if in_maintenance(host):
            raise Conflict(f"Host {host} is already in maintenance: stop its maintenance first.", field="host")
        host_services.update_service_by_host(
            caller, host, Service.COMPUTE, {"disabled": True, "disabled_reason": reason[:255]}
        )
        job = MaintenanceJob.objects.create(
            host=host,
            action=MaintenanceJob.START,
            reason=reason[:255],
            strategy=strategy,
            prefer_aggregate_peers=prefer_aggregate_peers,
            rebalance=rebalance,
            requested_by=caller.username,
            request_id=caller.request_id,
        )
        servers = servers_on(host)
        MaintenanceItem.objects.bulk_create(
            [MaintenanceItem(job=job, server_uuid=s.uuid, name=s.name, source=host) for s in servers]
        )
        job.total = len(servers)
        job.save(update_fields=["total"])
        _record(job, "compute.maintenance.start", caller)
        dispatch(job.pk)
    return job


def stop_maintenance(
    caller: Caller,
    host: str,
    *,
    reason: str | None = None,
    strategy: str = MaintenanceJob.LIVE,
    prefer_aggregate_peers: bool = True,
    rebalance: bool = False,
    dry_run: bool = False,
) -> MaintenanceJob | Plan:
    """Enable the host's compute service; with ``rebalance`` create the job
    moving back the servers its last start moved away (those still where
    the drain put them). 404 for an unknown host, 409 when the host is not
    in maintenance or its drain is still running."""
    compute_service(host)
    _check_options(strategy)
    _check_stoppable(host)
    if dry_run:
        return _return_plan(host, strategy) if rebalance else Plan(host, MaintenanceJob.STOP, strategy, [])
    with transaction.atomic():
        Service.objects.select_for_update().filter(host=host, binary=Service.COMPUTE).first()
        _check_stoppable(host)
        host_services.update_service_by_host(
            caller, host, Service.COMPUTE, {"disabled": False, "disabled_reason": None}
        )
        job = MaintenanceJob.objects.create(
            host=host,
            action=MaintenanceJob.STOP,
            reason=(reason or "")[:255],
            strategy=strategy,
            prefer_aggregate_peers=prefer_aggregate_peers,
            rebalance=rebalance,
            requested_by=caller.username,
            request_id=caller.request_id,
        )
        items = []
        if rebalance:
            for item, server in _returning(host):
                if server is not None and server.host == item.target:
                    items.append(
                        MaintenanceItem(
                            job=job,
                            server_uuid=server.uuid,
                            name=server.name,
                            source=server.host or "",
                            requested_host=host,
                        )
                    )
        MaintenanceItem.objects.bulk_create(items)
        job.total = len(items)
        job.save(update_fields=["total"])
        _record(job, "compute.maintenance.start", caller)
        dispatch(job.pk)
    return job


def _check_stoppable(host: str) -> None:
    job = last_job(host)
    if job is None or job.action != MaintenanceJob.START:
        raise Conflict(f"Host {host} is not in maintenance.", field="host")
    if not job.is_finished:
        raise Conflict(
            f"The maintenance of host {host} is still moving its servers (job {job.uuid}, {job.status}): "
            "wait for it to finish.",
            field="host",
        )


def maintain(caller: Caller, host: str, action: str, **options: Any) -> MaintenanceJob | Plan:
    """The one entry of the API: ``action`` start or stop."""
    if action == MaintenanceJob.START:
        return start_maintenance(caller, host, **options)
    if action == MaintenanceJob.STOP:
        return stop_maintenance(caller, host, **options)
    raise Invalid(f"Invalid action {action!r}: choose start or stop.", field="action")


KIND = leases.JobKind(
    model=MaintenanceJob,
    label="maintenance job",
    run_task=RUN_TASK,
    lease_setting="MAINTENANCE_LEASE_SECONDS",
    max_attempts_setting="MAINTENANCE_MAX_ATTEMPTS",
)


def dispatch(job_pk: int) -> None:
    """Run the job once the transaction commits, outside the request (a
    worker, or a thread without a broker)."""
    RUNNER.dispatch(job_pk)


# --- the runner ------------------------------------------------------------------


def _caller(job: MaintenanceJob) -> Caller:
    return Caller.system("maintenance", request_id=job.request_id)


def _payload(job: MaintenanceJob) -> dict[str, Any]:
    return {
        "job_id": str(job.uuid),
        "host": job.host,
        "action": job.action,
        "status": job.status,
        "strategy": job.strategy,
        "rebalance": job.rebalance,
        "total": job.total,
        "done": job.done,
    }


def _record(job: MaintenanceJob, event_type: str, caller: Caller | None = None, **extra: Any) -> None:
    events.record(
        caller or _caller(job),
        event_type,
        object_type="host",
        object_id=job.host,
        object_uuid=job.uuid,
        payload={**_payload(job), **extra},
    )


@dataclass
class _Outcome:
    status: str
    target: str | None = None
    migration_uuid: str = ""
    decision_uuid: str = ""
    message: str = ""


def _move(caller: Caller, item: MaintenanceItem, kind: str, preferred: frozenset[str], planned: str | None) -> _Outcome:
    """Move one server (in a thread of the runner's pool, no transaction
    open): to its planned target when the drain has one (the scheduler still
    checks it there), and freely scheduled when that target cannot take it."""
    try:
        server = (
            Server.objects.filter(uuid=item.server_uuid, deleted_at__isnull=True)
            .exclude(vm_state=Server.DELETED)
            .first()
        )
        if server is None:
            return _Outcome(MaintenanceItem.SKIPPED, message="The server was deleted.")
        if server.host != item.source:
            return _Outcome(
                MaintenanceItem.SKIPPED, server.host, message=f"The server is on {server.host}, not on {item.source}."
            )
        if settings.MAINTENANCE_SIMULATED_DELAY:
            time.sleep(settings.MAINTENANCE_SIMULATED_DELAY)
        outcome = None
        if planned and not item.requested_host:
            try:
                outcome = _move_server(caller, item, kind, preferred, planned)
            except ServiceError as refused:
                log.info(
                    "planned move of %s to %s refused (%s); scheduling it freely", item.server_uuid, planned, refused
                )
            if outcome is not None and not outcome.moved:
                outcome = None
        if outcome is None:
            outcome = _move_server(caller, item, kind, preferred, item.requested_host)
        return _Outcome(
            MaintenanceItem.MOVED if outcome.moved else MaintenanceItem.FAILED,
            outcome.target if outcome.moved else None,
            outcome.migration_uuid or "",
            outcome.decision_uuid or "",
            outcome.message or "",
        )
    except ServiceError as refused:
        return _Outcome(MaintenanceItem.FAILED, message=refused.message)
    except Exception as exc:  # noqa: BLE001 - one server's failure is reported, the drain goes on
        log.exception("moving server %s off %s failed", item.server_uuid, item.source)
        return _Outcome(MaintenanceItem.FAILED, message=f"The move failed: {type(exc).__name__}: {exc}")
    finally:
        connection.close()


def _move_server(
    caller: Caller, item: MaintenanceItem, kind: str, preferred: frozenset[str], host: str | None
) -> moves.MoveOutcome:
    return moves.move_server(
        caller,
        str(item.server_uuid),
        kind,
        requested_host=host,
        preferred_aggregates=preferred,
        confirm=kind == KINDS[MaintenanceJob.COLD],
        initiator="maintenance",
    )


class _Runner:
    def __init__(self, job: MaintenanceJob, token: str) -> None:
        self.job = job
        self.token = token
        self.renewed = time.monotonic()
        self.caller = _caller(job)
        self.kind = KINDS.get(job.strategy, KINDS[MaintenanceJob.LIVE])
        self.preferred = (
            _aggregate_uuids_of(job.host)
            if job.action == MaintenanceJob.START and job.prefer_aggregate_peers
            else frozenset()
        )
        concurrency = max(1, int(settings.MAINTENANCE_CONCURRENCY))
        # SQLite serialises writers: one move at a time there.
        self.concurrency = 1 if connection.vendor == "sqlite" else concurrency

    def heartbeat(self, force: bool = False) -> None:
        if not force and time.monotonic() - self.renewed < settings.MAINTENANCE_LEASE_SECONDS / 4:
            return
        done = MaintenanceItem.objects.filter(job=self.job, status__in=MaintenanceItem.FINISHED).count()
        leases.renew(KIND, self.job, self.token, done)
        self.renewed = time.monotonic()

    def settle_interrupted(self) -> None:
        """Items a dead runner left moving: moved when the server left its
        source (its move was recorded), else pending again."""
        for item in MaintenanceItem.objects.filter(job=self.job, status=MaintenanceItem.MOVING):
            server = Server.objects.filter(uuid=item.server_uuid).first()
            gone = server is None or server.deleted_at is not None or server.vm_state == Server.DELETED
            if gone:
                self.finish(item, _Outcome(MaintenanceItem.SKIPPED, message="The server was deleted."))
            elif server is not None and server.host != item.source:
                message = "Moved before the job's worker stopped."
                self.finish(item, _Outcome(MaintenanceItem.MOVED, server.host, message=message))
            else:
                MaintenanceItem.objects.filter(pk=item.pk, status=MaintenanceItem.MOVING).update(
                    status=MaintenanceItem.PENDING, started_at=None
                )

    def finish(self, item: MaintenanceItem, outcome: _Outcome) -> None:
        MaintenanceItem.objects.filter(pk=item.pk).exclude(status__in=MaintenanceItem.FINISHED).update(
            status=outcome.status,
            target=outcome.target,
            migration_uuid=outcome.migration_uuid,
            decision_uuid=outcome.decision_uuid,
            message=outcome.message,
            finished_at=timezone.now(),
        )
        self.job.done = MaintenanceItem.objects.filter(job=self.job, status__in=MaintenanceItem.FINISHED).count()
        MaintenanceJob.objects.filter(pk=self.job.pk, worker=self.token).update(done=self.job.done)
        _record(
            self.job,
            "compute.maintenance.progress",
            server={
                "id": str(item.server_uuid),
                "name": item.name,
                "source": item.source,
                "target": outcome.target,
                "status": outcome.status,
                "explanation": outcome.message or None,
            },
        )

    def run(self) -> None:
        self.settle_interrupted()
        if self.job.action == MaintenanceJob.STOP:
            self.enabled_in_placement()
        items = list(MaintenanceItem.objects.filter(job=self.job, status=MaintenanceItem.PENDING))
        targets = self.plan(items)
        pending = iter(items)
        running: dict[Future[_Outcome], MaintenanceItem] = {}
        more = True
        lost = False
        wait_for = max(0.05, settings.MAINTENANCE_LEASE_SECONDS / 4)
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"drain-{self.job.pk}") as pool:
            while more or running:
                while more and not lost and len(running) < self.concurrency:
                    item = next(pending, None)
                    if item is None:
                        more = False
                        break
                    MaintenanceItem.objects.filter(pk=item.pk).update(
                        status=MaintenanceItem.MOVING, started_at=timezone.now()
                    )
                    target = targets.get(str(item.server_uuid))
                    running[pool.submit(_move, self.caller, item, self.kind, self.preferred, target)] = item
                if not running:
                    break
                finished, _ = wait(list(running), timeout=wait_for, return_when=FIRST_COMPLETED)
                for future in finished:
                    self.finish(running.pop(future), future.result())
                try:
                    self.heartbeat()
                except leases.LeaseLost:
                    lost, more = True, False
        if lost:
            raise leases.LeaseLost()

    def plan(self, items: list[MaintenanceItem]) -> dict[str, str]:
        """A drain's targets, planned at once (one scheduling decision per
        kind of server, each counting those planned before it) rather than
        one full decision per move; server uuid -> planned target."""
        if self.job.action != MaintenanceJob.START or not items:
            return {}
        servers = list(
            Server.objects.filter(
                uuid__in=[item.server_uuid for item in items], host=self.job.host, deleted_at__isnull=True
            )
            .exclude(vm_state=Server.DELETED)
            .order_by("created_at", "id")
        )
        try:
            planned = plan_moves(servers, emptied={self.job.host}, preferred_of=lambda server: self.preferred)
        except Exception:  # noqa: BLE001 - without a plan each move is scheduled on its own
            log.exception("planning the drain of %s failed; each move is scheduled on its own", self.job.host)
            return {}
        return {move.server_uuid: move.target for move in planned if move.target}

    def enabled_in_placement(self) -> None:
        """Before moving servers back: the host's providers lose
        COMPUTE_STATUS_DISABLED now rather than when the outbox gets to it."""
        rows = list(ProviderSyncRequest.objects.filter(host=self.job.host, status=ProviderSyncRequest.PENDING))
        if rows:
            try:
                applier.apply_rows(rows)
            except Exception:  # noqa: BLE001 - the moves explain what placement refuses
                log.exception("could not apply the provider rows of %s", self.job.host)


def _work(job: MaintenanceJob, token: str) -> None:
    _Runner(job, token).run()


def _finish(job: MaintenanceJob) -> MaintenanceJob:
    items = MaintenanceItem.objects.filter(job=job)
    failed = items.filter(status=MaintenanceItem.FAILED).count()
    job.status = MaintenanceJob.COMPLETED_WITH_ERRORS if failed else MaintenanceJob.COMPLETED
    job.done = items.filter(status__in=MaintenanceItem.FINISHED).count()
    job.finished_at = timezone.now()
    job.lease_expires_at = None
    job.save(update_fields=["status", "done", "finished_at", "lease_expires_at"])
    moved = items.filter(status=MaintenanceItem.MOVED).count()
    skipped = items.filter(status=MaintenanceItem.SKIPPED).count()
    _record(job, "compute.maintenance.end", moved=moved, failed=failed, skipped=skipped)
    return job


def _fail(job: MaintenanceJob, reason: str) -> MaintenanceJob:
    """The job cannot go on: its unfinished items fail with the reason (each
    server stays where it is), and so does the job."""
    now = timezone.now()
    with transaction.atomic():
        MaintenanceItem.objects.filter(job=job).exclude(status__in=MaintenanceItem.FINISHED).update(
            status=MaintenanceItem.FAILED, message=reason, finished_at=now
        )
        job.status = MaintenanceJob.FAILED
        job.error = reason
        job.done = job.total
        job.finished_at = now
        job.lease_expires_at = None
        job.save(update_fields=["status", "error", "done", "finished_at", "lease_expires_at"])
    _record(job, "compute.maintenance.end", error=reason)
    return job


RUNNER = runner.JobRunner(KIND, work=_work, finish=_finish, fail=_fail)


def run_job(job_pk: int) -> MaintenanceJob | None:
    """Run (or resume) one job to its end; None when another runner holds it
    or it is finished."""
    return RUNNER.run_job(job_pk)


def drain_jobs() -> dict[str, int]:
    """Resume the jobs whose runner stopped and run the queued ones nobody
    started; a job whose runner stopped MAINTENANCE_MAX_ATTEMPTS times fails
    with the reason."""
    return RUNNER.drain()


# --- the legacy os-hosts update ------------------------------------------------------


def set_maintenance_mode(caller: Caller, host: str, enable: bool) -> MaintenanceJob | Plan:
    """Nova's PUT /os-hosts/{host} maintenance_mode: start or stop the
    maintenance with the defaults."""
    if enable:
        return start_maintenance(caller, host, reason="Maintenance mode enabled through os-hosts")
    return stop_maintenance(caller, host)


def set_host_enabled(caller: Caller, host: str, enable: bool) -> str:
    """Nova's PUT /os-hosts/{host} status: enable or disable the compute service."""
    compute_service(host)
    changes: host_services.ServiceChanges = {"disabled": not enable}
    if enable:
        changes["disabled_reason"] = None
    host_services.update_service_by_host(caller, host, Service.COMPUTE, changes)
    return "enabled" if enable else "disabled"


# --- capacity headroom ------------------------------------------------------------------


@dataclass
class ResourceHeadroom:
    resource_class: str
    capacity: float  # of the hosts that remain
    used: float  # on the hosts that remain, plus what the lost hosts' servers use
    lost_capacity: float
    moved: float  # what the lost hosts' servers use

    @property
    def free_after(self) -> float:
        return self.capacity - self.used


@dataclass
class Headroom:
    scope: str  # aggregate | availability_zone
    name: str
    aggregate_id: int | None
    hosts: list[str]
    lost_hosts: list[str]
    resources: list[ResourceHeadroom]
    servers: int
    stranded: list[PlannedMove]
    # Remaining hosts that take no server (compute service disabled or down):
    # their capacity is not counted.
    closed_hosts: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return not self.stranded


@dataclass
class _HostLoad:
    host: str
    capacity: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    used: dict[str, float] = field(default_factory=lambda: defaultdict(float))


def _zone_hosts(zone: str) -> tuple[list[str], list[str]]:
    """The hosts of zone ``zone`` and the uuids of the aggregates making it (none for the default zone)."""
    zoned = AggregateMetadata.objects.filter(key=AZ_KEY)
    named = list(zoned.filter(value=zone).values_list("aggregate_id", flat=True))
    computes = list(Service.objects.filter(binary=Service.COMPUTE).order_by("host").values_list("host", flat=True))
    if named:
        members = set(AggregateHost.objects.filter(aggregate_id__in=named).values_list("host", flat=True))
        uuids = [str(u) for u in Aggregate.objects.filter(pk__in=named).values_list("uuid", flat=True)]
        return [h for h in computes if h in members], uuids
    if zone == settings.DEFAULT_AVAILABILITY_ZONE:
        in_zones = set(
            AggregateHost.objects.filter(aggregate_id__in=zoned.values("aggregate_id")).values_list("host", flat=True)
        )
        return [h for h in computes if h not in in_zones], []
    raise NotFound(f"Availability zone {zone} could not be found.", field="availability_zone")


def _loads(placement: PlacementClient, hosts: Iterable[str], member_of: Sequence[str]) -> dict[str, _HostLoad]:
    """Capacity and usage per host, from one allocation-candidates summary
    of the set's providers (every class of each, since placement 1.27);
    a provider it leaves out (no VCPU free) is read on its own."""
    loads = {host: _HostLoad(host) for host in hosts}
    params = [("resources", "VCPU:1")]
    if member_of:
        params.append(("member_of", "in:" + ",".join(sorted(member_of))))
    response = placement.request("GET", "/allocation_candidates?" + urlencode(params), engine.CANDIDATES_VERSION)
    if response.status_code != 200:
        raise placement._error(response, "Listing allocation candidates")
    summaries = response.json().get("provider_summaries", {})
    for host, node_uuid in ComputeNode.objects.filter(host__in=list(loads)).values_list("host", "uuid"):
        load = loads[host]
        summary = summaries.get(str(node_uuid))
        if summary is not None:
            for rc, figures in summary.get("resources", {}).items():
                load.capacity[rc] += figures["capacity"]
                load.used[rc] += figures["used"]
            continue
        for rc, inventory in placement.provider_inventories(node_uuid).items():
            load.capacity[rc] += (inventory["total"] - inventory["reserved"]) * inventory["allocation_ratio"]
        for rc, amount in placement.provider_usages(node_uuid).items():
            load.used[rc] += amount
    return loads


def _load_key(load: _HostLoad, servers: int) -> tuple[Any, ...]:
    """The most loaded host first: by MEMORY_MB used, then VCPU, DISK_GB, servers, name."""
    return (
        -load.used.get("MEMORY_MB", 0),
        -load.used.get("VCPU", 0),
        -load.used.get("DISK_GB", 0),
        -servers,
        load.host,
    )


def capacity_headroom(
    *, aggregate_id: int | None = None, availability_zone: str | None = None, hosts: int = 1
) -> Headroom:
    """Can the servers of the ``hosts`` most loaded hosts of the aggregate
    (or zone) be placed on the others, each with its own constraints, given
    what placement holds now? Per resource class: the remaining capacity,
    what would be used on it, what would be left free; and the servers that
    would not fit, with why."""
    if (aggregate_id is None) == (availability_zone is None):
        raise Invalid("Give either aggregate or availability_zone.")
    if aggregate_id is not None:
        aggregate = aggregate_services.get_aggregate(aggregate_id)
        members = aggregate_services.hosts_of(aggregate)
        member_of = [str(aggregate.uuid)]
        scope, name, found_id = "aggregate", aggregate.name, aggregate.id
    else:
        zone = str(availability_zone)
        members, member_of = _zone_hosts(zone)
        scope, name, found_id = "availability_zone", zone, None
    if hosts < 1:
        raise Invalid("hosts must be at least 1.", field="hosts")
    if hosts >= len(members):
        raise Invalid(
            f"Cannot lose {hosts} host(s) of {scope.replace('_', ' ')} {name}: it has {len(members)} host(s) and "
            "at least one must remain.",
            field="hosts",
        )
    placement = client()
    try:
        loads = _loads(placement, members, member_of)
    except PlacementError as failed:
        raise Unavailable(f"Placement could not be read: {failed}") from failed
    alive = Server.objects.filter(deleted_at__isnull=True).exclude(vm_state=Server.DELETED)
    counts = dict(alive.filter(host__in=members).values("host").annotate(n=Count("id")).values_list("host", "n"))
    ranked = sorted(loads.values(), key=lambda load: _load_key(load, counts.get(load.host, 0)))
    lost = [load.host for load in ranked[:hosts]]
    remaining = [h for h in members if h not in lost]
    moving = list(alive.filter(host__in=lost).order_by("created_at", "id"))
    # The hardest to place first: the biggest servers.
    moving.sort(key=lambda s: (-int((s.flavor or {}).get("ram", 0)), -int((s.flavor or {}).get("vcpus", 0))))
    planned = plan_moves(
        moving,
        emptied=set(lost),
        within=set(remaining),
        member_of=member_of,
        placement=placement,
    )
    open_hosts = set(
        Service.objects.up()
        .filter(binary=Service.COMPUTE, disabled=False, host__in=remaining)
        .values_list("host", flat=True)
    )
    taking = [h for h in remaining if h in open_hosts]
    classes = sorted({rc for load in loads.values() for rc in load.capacity})
    figures = []
    for rc in classes:
        capacity = sum(loads[h].capacity.get(rc, 0) for h in taking)
        moved = sum(loads[h].used.get(rc, 0) for h in lost)
        figures.append(
            ResourceHeadroom(
                resource_class=rc,
                capacity=capacity,
                used=sum(loads[h].used.get(rc, 0) for h in taking) + moved,
                lost_capacity=sum(loads[h].capacity.get(rc, 0) for h in lost),
                moved=moved,
            )
        )
    return Headroom(
        scope=scope,
        name=name,
        aggregate_id=found_id,
        hosts=list(members),
        lost_hosts=lost,
        resources=figures,
        servers=len(moving),
        stranded=[move for move in planned if move.target is None],
        closed_hosts=[h for h in remaining if h not in open_hosts],
    )
