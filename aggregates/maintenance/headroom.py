"""Capacity headroom: can an aggregate (or an availability zone) lose its
most loaded hosts? Their servers are planned onto the hosts that remain,
each with its own constraints, given what placement holds now; per
resource class, the capacity that remains, what would be used on it and
what would be left free."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count

from aggregates.addressing import services as addressing
from aggregates.errors import Invalid, Unavailable
from aggregates.host_aggregates import services as aggregate_services
from aggregates.hosts.models import ComputeNode, Service
from aggregates.placement_client import PlacementClient, PlacementError, client
from aggregates.scheduling import engine, prefilters
from aggregates.servers.models import Server
from aggregates.zones import services as zones

from . import planning


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
    stranded: list[planning.PlannedMove]
    # Remaining hosts that take no server (compute service disabled or down):
    # their capacity is not counted.
    closed_hosts: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return not self.stranded


@dataclass
class HostLoad:
    """What a host's providers hold: capacity and usage per resource class."""

    host: str
    capacity: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    used: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, inventories: Mapping[str, Mapping[str, Any]], usages: Mapping[str, float]) -> None:
        """Count a provider's inventories (capacity: (total - reserved) * ratio) and usages."""
        for rc, inventory in inventories.items():
            self.capacity[rc] += (inventory["total"] - inventory["reserved"]) * inventory["allocation_ratio"]
        for rc, amount in usages.items():
            self.used[rc] += amount


def _loads(placement: PlacementClient, hosts: Iterable[str], member_of: Sequence[str]) -> dict[str, HostLoad]:
    """Capacity and usage per host, from one allocation-candidates summary
    of the set's providers (every class of each, since placement 1.27);
    a provider it leaves out (no VCPU free) is read on its own."""
    loads = {host: HostLoad(host) for host in hosts}
    query = prefilters.PlacementQuery(resources={"VCPU": 1}, member_of=[sorted(member_of)] if member_of else [])
    summaries = engine.query_candidates(placement, query).get("provider_summaries", {})
    for host, node_uuid in ComputeNode.objects.filter(host__in=list(loads)).values_list("host", "uuid"):
        load = loads[host]
        summary = summaries.get(str(node_uuid))
        if summary is not None:
            for rc, figures in summary.get("resources", {}).items():
                load.capacity[rc] += figures["capacity"]
                load.used[rc] += figures["used"]
            continue
        load.add(placement.provider_inventories(node_uuid), placement.provider_usages(node_uuid))
    return loads


def _load_key(load: HostLoad, servers: int) -> tuple[Any, ...]:
    """The most loaded host first: by MEMORY_MB used, then VCPU, DISK_GB, servers, name."""
    return (
        -load.used.get("MEMORY_MB", 0),
        -load.used.get("VCPU", 0),
        -load.used.get("DISK_GB", 0),
        -servers,
        load.host,
    )


@dataclass
class Loss:
    """The hosts of a set that would be lost, the servers they run, and
    where the scheduler would put each of them on the hosts that remain."""

    lost: list[str]
    remaining: list[str]
    moving: list[Server]
    planned: list[planning.PlannedMove]


def plan_loss(
    members: Sequence[str],
    member_of: Sequence[str],
    loads: Mapping[str, HostLoad],
    hosts: int,
    placement: PlacementClient,
) -> Loss:
    """Lose the ``hosts`` most loaded of ``members`` (by ``loads``): their
    servers, the biggest first, planned onto the others (placement asked
    about the aggregates ``member_of`` only). The one choice of the hosts
    whose loss hurts most, for the headroom and for capacity by flavor."""
    alive = Server.objects.filter(deleted_at__isnull=True).exclude(vm_state=Server.DELETED)
    counts = dict(alive.filter(host__in=members).values("host").annotate(n=Count("id")).values_list("host", "n"))
    ranked = sorted(
        (loads.get(h) or HostLoad(h) for h in members), key=lambda load: _load_key(load, counts.get(load.host, 0))
    )
    lost = [load.host for load in ranked[:hosts]]
    remaining = [h for h in members if h not in lost]
    moving = list(alive.filter(host__in=lost).order_by("created_at", "id"))
    # The hardest to place first: the biggest servers.
    moving.sort(key=lambda s: (-int((s.flavor or {}).get("ram", 0)), -int((s.flavor or {}).get("vcpus", 0))))
    planned = planning.plan_moves(
        moving,
        emptied=set(lost),
        within=set(remaining),
        member_of=member_of,
        placement=placement,
    )
    return Loss(lost, remaining, moving, planned)


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
        zone_members = zones.zone_members(zone)
        members, member_of = zone_members.hosts, zone_members.aggregates
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
    loss = plan_loss(members, member_of, loads, hosts, placement)
    lost, remaining, moving, planned = loss.lost, loss.remaining, loss.moving, loss.planned
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
    for a in addressing.headroom(taking, lost, moving):  # free addresses count too
        figures.append(ResourceHeadroom(a.resource_class, a.capacity, a.used, a.lost_capacity, a.moved))
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
