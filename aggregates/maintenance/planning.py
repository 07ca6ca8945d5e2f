"""Where each server would go: the plan of a drain (each server of a host
and the target the scheduler would choose for it, counting the servers
planned before it) and of a return (which servers come back, and whether
the host has room for them). A dry run shows a plan; the drain's runner
follows one; capacity headroom plans the servers of the hosts it loses.
Nothing is claimed or stored here: the decisions are the scheduler's own
(``engine.decide``), on hypothetical usage."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from aggregates.addressing import services as addressing
from aggregates.errors import Unavailable
from aggregates.host_aggregates.models import AggregateHost
from aggregates.hosts.models import ComputeNode
from aggregates.placement_client import PlacementClient, PlacementError, client
from aggregates.scheduling import engine, filters, prefilters
from aggregates.scheduling import services as scheduling
from aggregates.scheduling.host_state import AggregateInfo, HostState
from aggregates.scheduling.request import AddressNeed, GroupSpec, RequestSpec
from aggregates.scheduling.weighers import weigh_hosts
from aggregates.servers.models import Server

from .models import MaintenanceItem, MaintenanceJob


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


def aggregate_uuids_of(host: str) -> frozenset[str]:
    """The uuids of the aggregates ``host`` is in (the peers a drain prefers)."""
    return frozenset(str(u) for u in AggregateHost.objects.filter(host=host).values_list("aggregate__uuid", flat=True))


def servers_on(host: str) -> list[Server]:
    """The servers of ``host`` that are not deleted, oldest first."""
    return list(
        Server.objects.filter(host=host, deleted_at__isnull=True)
        .exclude(vm_state=Server.DELETED)
        .order_by("created_at", "id")
    )


class _Ledger:
    """The servers a plan has placed so far, in order: (compute node uuid,
    resources), counted on each decision's own HostState objects before it
    chooses again."""

    def __init__(self) -> None:
        self.placed: list[tuple[str, dict[str, int]]] = []

    def add(self, host: HostState, wanted: dict[str, int]) -> None:
        self.placed.append((host.node_uuid, wanted))


@dataclass
class _Group:
    """One scheduling decision shared by the servers of the same kind."""

    spec: RequestSpec
    decision: engine.Decision
    counted: int = 0  # how many of the ledger's servers this decision has counted
    stale: bool = False

    def sync(self, ledger: _Ledger) -> None:
        """Count on this decision's hosts what the plan placed since it last looked."""
        hosts = {weighed.host.node_uuid: weighed.host for weighed in self.decision.ordered}
        for node_uuid, wanted in ledger.placed[self.counted :]:
            host = hosts.get(node_uuid)
            if host is not None:
                host.consume(wanted)
                self.stale = True
        self.counted = len(ledger.placed)

    def ordered(self) -> list[HostState]:
        """The hosts in the order the scheduler would try them now (weighed
        again once the plan put servers on some)."""
        if self.stale:
            weighed = weigh_hosts([w.host for w in self.decision.ordered], self.spec)
            self.decision.ordered = engine.peers_first(weighed, self.spec.preferred_aggregates)
            self.stale = False
        return [w.host for w in self.decision.ordered]


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


def _spec_key(
    server: Server, preferred: frozenset[str], group: str | None = None, need: AddressNeed | None = None
) -> tuple[Any, ...]:
    """What the servers sharing one decision have in common (their server
    group and the addresses they need included); the preferred aggregates last."""
    flavor = server.flavor or {}
    return (
        server.flavorid,
        tuple(sorted((k, str(v)) for k, v in flavor.items() if k != "extra_specs")),
        tuple(sorted((flavor.get("extra_specs") or {}).items())),
        server.image_id,
        server.project_id,
        server.user_id,
        server.pinned_availability_zone,
        group,
        need,
        preferred,
    )


class _GroupPlan:
    """Where the plan puts the members of each server group with a hard
    policy, so that a member planned later keeps the policy with them."""

    def __init__(self) -> None:
        self.planned: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))

    def refusal(self, group: GroupSpec | None, server_uuid: str, host: str) -> str | None:
        """Why the group's policy keeps ``server_uuid`` off ``host``, counting
        the members planned before it (None: it may go there)."""
        if group is None or group.policy not in ("affinity", "anti-affinity"):
            return None
        members: dict[str, set[str]] = {h: set(m) - {server_uuid} for h, m in group.members_by_host.items()}
        for planned_host, uuids in self.planned[group.uuid].items():
            members.setdefault(planned_host, set()).update(uuids)
        now = GroupSpec(group.uuid, group.name, group.policy, group.max_server_per_host, members)
        return filters.group_refusal(now, host)

    def add(self, group: GroupSpec | None, server_uuid: str, host: str) -> None:
        if group is not None:
            self.planned[group.uuid][host].add(server_uuid)


def plan_moves(
    servers: Sequence[Server],
    *,
    emptied: set[str],
    within: set[str] | None = None,
    member_of: Collection[str] = (),
    preferred_of: Callable[[Server], frozenset[str]] = lambda server: frozenset(),
    placement: PlacementClient | None = None,
) -> list[PlannedMove]:
    """Where each of ``servers`` would go if the hosts ``emptied`` were
    emptied (never onto one of them), in order: each server the target the
    scheduler would choose, counting the servers planned before it, or why
    none can take it. Servers of the same flavor, image, project and pinned
    zone share one scheduling decision, made on the hosts ``within`` (all
    when None) with placement asked about the providers of the aggregates
    ``member_of`` only. Nothing is claimed or stored."""
    placement = placement or client()
    aggregates = engine.load_aggregates()
    ledger = _Ledger()
    group_of = scheduling.group_uuids_of([str(server.uuid) for server in servers])
    needs = addressing.needs_of_servers(servers)
    spent: dict[str, int] = defaultdict(int)  # pool uuid -> addresses the plan's moves take from it

    def key_of(server: Server) -> tuple[Any, ...]:
        uuid = str(server.uuid)
        return _spec_key(server, preferred_of(server), group_of.get(uuid), needs.get(uuid))

    groups: dict[tuple[Any, ...], list[Server]] = {}
    for server in servers:
        groups.setdefault(key_of(server), []).append(server)
    decided: dict[tuple[Any, ...], _Group] = {}
    for key, members in groups.items():
        spec = scheduling.spec_for_server(members[0], ignore_hosts=frozenset(emptied), preferred_aggregates=key[-1])
        spec = dataclasses.replace(spec, addressing=needs.get(str(members[0].uuid)))
        try:
            decision = engine.decide(
                spec, placement, full=False, aggregates=aggregates, member_of=member_of, within=within
            )
        except PlacementError as failed:
            raise Unavailable(f"Planning is not possible now: {failed}") from failed
        decision.ordered = engine.peers_first(decision.ordered, spec.preferred_aggregates)
        decided[key] = _Group(spec, decision)
    planned: dict[str, PlannedMove] = {}
    explained: dict[tuple[Any, ...], tuple[str, dict[str, int]]] = {}
    group_plan = _GroupPlan()
    for server in servers:
        key = key_of(server)
        group = decided[key]
        group.sync(ledger)
        wanted = prefilters.flavor_resources(group.spec)
        move = PlannedMove(str(server.uuid), server.name, server.host or "", _flavor_name(server), wanted)
        ordered = group.ordered()
        server_group = group.spec.group
        fitting = [host for host in ordered if host.fits(wanted)]
        addressed = {host.host: _address_choice(group.spec, host, spent) for host in fitting}
        refusals = {
            host.host: addressed[host.host].refusal or group_plan.refusal(server_group, move.server_uuid, host.host)
            for host in fitting
        }
        chosen = next((host for host in fitting if refusals[host.host] is None), None)
        if chosen is not None:
            ledger.add(chosen, wanted)
            group_plan.add(server_group, move.server_uuid, chosen.host)
            for pool_uuid in addressed[chosen.host].pools:
                spent[pool_uuid] += 1
            move.target = chosen.host
        elif fitting and server_group is not None and any(addressed[h.host].refusal is None for h in fitting):
            grouped = [host for host in fitting if addressed[host.host].refusal is None]
            name = "ServerGroupAffinityFilter" if server_group.policy == "affinity" else "ServerGroupAntiAffinityFilter"
            move.reason = (
                f"No valid host was found: the move cannot keep the {server_group.policy} policy of server group "
                f"{server_group.name}: the {len(grouped)} host(s) with room refuse it once the servers planned "
                f"before it are placed: " + "; ".join(str(refusals[host.host]) for host in grouped[:3])
            )
            move.rejected_by = {name: len(grouped)}
        elif fitting:
            where = f"host {fitting[0].host}" if len(fitting) == 1 else f"any of the {len(fitting)} hosts with room"
            move.reason = (
                f"No valid host was found: no address pool with a free address serves {where}, once the "
                "servers planned before it are placed: "
                + "; ".join(str(addressed[host.host].refusal) for host in fitting[:3])
            )
            move.rejected_by = {"AddressPoolFilter": len(fitting)}
        elif ordered:
            full = ", ".join(
                f"{host.host} ("
                + ", ".join(f"{rc} {max(int(v), 0)}" for rc, v in host.room().items() if rc in wanted)
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


def _address_choice(spec: RequestSpec, host: HostState, spent: dict[str, int]) -> filters.AddressChoice:
    """Whether ``host`` can address a server of ``spec`` once the moves
    planned before it took their addresses (``spent``)."""
    if spec.addressing is None:
        return filters.AddressChoice(None)
    return filters.address_choice(spec.addressing, host, spent)


def _amounts(resources: dict[str, int]) -> str:
    return ", ".join(f"{rc} {amount}" for rc, amount in sorted(resources.items()))


def drain_plan(host: str, strategy: str, prefer_aggregate_peers: bool) -> Plan:
    """Where a start would move each server of ``host`` (its dry run)."""
    preferred = aggregate_uuids_of(host) if prefer_aggregate_peers else frozenset()
    moves = plan_moves(servers_on(host), emptied={host}, preferred_of=lambda server: preferred)
    return Plan(host, MaintenanceJob.START, strategy, moves)


def returning(host: str) -> list[tuple[MaintenanceItem, Server | None]]:
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


def return_plan(host: str, strategy: str) -> Plan:
    """Which servers a stop with rebalance moves back, and whether the host has room for them."""
    placement = client()
    try:
        room = _node_room(placement, host)
    except PlacementError as failed:
        raise Unavailable(f"Planning is not possible now: {failed}") from failed
    moves = []
    for item, server in returning(host):
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
