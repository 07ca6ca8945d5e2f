"""How many more servers of each flavor fit, per zone and per aggregate,
counted as the scheduler would place them: every compute node's room as
placement holds it (capacity, usage, min/max unit and step of each class it
is asked for, the traits the flavor requires or forbids), the scheduler's
own pre-filters and host filters (``engine``, ``prefilters``, ``filters``:
aggregate extra specs, type affinity, disabled and down hosts, tenant
isolation...), the free addresses of the pools serving the hosts, and the
project's quota. One read of the cloud, then arithmetic: no scheduling
decision per server.

``lose_hosts`` answers the same after each group loses the hosts whose loss
hurts most, chosen and planned as the capacity headroom does
(``maintenance.headroom.plan_loss``): their servers take room on the hosts
that remain, where the scheduler would put them."""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from aggregates.addressing import services as addressing
from aggregates.addressing.models import AddressPool
from aggregates.errors import Unavailable
from aggregates.flavors.models import Flavor, FlavorExtraSpec
from aggregates.maintenance import headroom
from aggregates.placement_client import PlacementError, client
from aggregates.quotas import services as quotas
from aggregates.scheduling import engine, prefilters
from aggregates.scheduling import filters as host_filters
from aggregates.scheduling.host_state import AggregateInfo, HostState
from aggregates.scheduling.request import AddressNeed, FlavorSpec, RequestSpec

# What stops a host that has nothing of the class asked for, or no room for one more.
NO_HOSTS = "no_hosts"
LOST = "lose_hosts"
TRAITS = "traits"
QUOTA = "quota:"  # quota:instances, quota:cores, quota:ram
ADDRESS_FILTER = host_filters.AddressPoolFilter.name


@dataclass(frozen=True)
class FlavorFigure:
    flavorid: str
    name: str
    servers: int
    limited_by: str  # the resource class (or filter, quota, address class) that stops it


@dataclass
class GroupCapacity:
    scope: str  # availability_zone | aggregate
    name: str
    zone: str  # an aggregate's zone ("" when it names none); a zone's own name
    hosts: int
    flavors: list[FlavorFigure] = field(default_factory=list)
    lost_hosts: list[str] = field(default_factory=list)
    stranded: int = 0  # servers of the lost hosts the scheduler could place nowhere


@dataclass
class Report:
    taken_at: datetime
    project_id: str | None
    lose_hosts: int
    flavors: list[tuple[str, str]]  # (flavorid, name)
    zones: list[GroupCapacity]
    aggregates: list[GroupCapacity]


@dataclass
class _Node:
    """One compute node as every flavor sees it: its room per class (free,
    min_unit, max_unit, step_size), its provider's traits, why it takes no
    server whatever the flavor (a filter that does not read the flavor, no
    pool serving it), and how many more servers its count filters admit."""

    state: HostState
    room: dict[str, tuple[float, int, int, int]]
    traits: frozenset[str]
    refusal: str = ""
    cap: int | None = None
    cap_reason: str = ""


@dataclass
class _Verdict:
    """One flavor on one node, before extra usage: why it may not go there
    (a filter, pre-filter, trait or class), or the room it may use."""

    reason: str = ""
    amounts: dict[str, int] = field(default_factory=dict)
    node: _Node | None = None

    def servers(self, extra: Mapping[str, float] | None = None, extra_count: int = 0) -> tuple[int, str]:
        """How many servers of the flavor fit, and what stops the next one."""
        if self.reason or self.node is None:
            return 0, self.reason
        best: int | None = None
        limit = ""
        room = self.node.room
        for rc, amount in self.amounts.items():
            free = room[rc][0] - (extra.get(rc, 0) if extra else 0)
            n = max(int(free // amount), 0)
            if best is None or n < best:
                best, limit = n, rc
        count = best or 0
        cap = self.node.cap
        if cap is not None and cap - extra_count < count:
            count, limit = max(cap - extra_count, 0), self.node.cap_reason
        return count, limit


def spec_of(flavor: Flavor, extra_specs: Mapping[str, str], project_id: str | None) -> RequestSpec:
    """The request spec of one server of ``flavor`` (no image, any zone).
    Without a project the spec's project is none of the projects an
    aggregate isolates to: tenant-isolated hosts count for nobody."""
    flavor_spec = FlavorSpec(
        name=flavor.name,
        flavorid=flavor.flavorid,
        vcpus=flavor.vcpus,
        memory_mb=flavor.memory_mb,
        root_gb=flavor.root_gb,
        ephemeral_gb=flavor.ephemeral_gb,
        swap=flavor.swap,
        extra_specs=dict(extra_specs),
    )
    return RequestSpec(flavor=flavor_spec, project_id=project_id or "")


def _node(
    host: HostState,
    room: Mapping[str, Any] | None,
    spec: RequestSpec,
    once: list[host_filters.HostFilter],
    counting: list[host_filters.NumInstancesFilter],
    pools: _Pools,
) -> _Node:
    """``host`` judged once for every flavor: the filters that do not read the
    flavor (``once``), the pools, the count filters' room."""
    if room is None:
        return _Node(host, {}, frozenset(), refusal=NO_HOSTS)
    rooms = {}
    usages = room.get("usages", {})
    for rc, inventory in room.get("inventories", {}).items():
        capacity = int((inventory["total"] - inventory["reserved"]) * inventory["allocation_ratio"])
        free = capacity - usages.get(rc, 0)
        rooms[rc] = (free, inventory["min_unit"], inventory["max_unit"], inventory["step_size"])
    node = _Node(host, rooms, frozenset(room.get("traits", ())))
    refusal = next((f.name for f in once if f.host_passes(host, spec) is not None), "")
    if not refusal and not pools.serves(host):
        refusal = ADDRESS_FILTER
    node.refusal = refusal
    for count_filter in counting:
        limit, _ = count_filter.limit(host)
        left = max(limit - host.num_instances, 0)
        if node.cap is None or left < node.cap:
            node.cap, node.cap_reason = left, count_filter.name
    return node


def _verdict(
    node: _Node,
    spec: RequestSpec,
    query: prefilters.PlacementQuery | None,
    refusal: str,
    required: frozenset[str],
    forbidden: frozenset[str],
    per_flavor: list[host_filters.HostFilter],
) -> _Verdict:
    if query is None:
        return _Verdict(reason=refusal)
    excluded = query.excluded_by(node.state)
    if excluded is not None:
        return _Verdict(reason=excluded[0])
    if node.refusal:
        return _Verdict(reason=node.refusal)
    if not required <= node.traits or node.traits & forbidden:
        return _Verdict(reason=TRAITS)
    for host_filter in per_flavor:
        if host_filter.host_passes(node.state, spec) is not None:
            return _Verdict(reason=host_filter.name)
    for rc, amount in query.resources.items():
        room = node.room.get(rc)
        if room is None or amount > room[2] or amount < room[1] or amount % room[3]:
            return _Verdict(reason=rc)
    return _Verdict(amounts=dict(query.resources), node=node)


@dataclass
class _Pools:
    """The address pools a boot with ``networks: auto`` needs (None: addressing off)."""

    need: AddressNeed | None
    versions: Mapping[str, int]

    @classmethod
    def now(cls) -> _Pools:
        need = addressing.need_for("auto")
        versions = {
            str(uuid): ipaddress.ip_network(cidr).version
            for uuid, cidr in AddressPool.objects.values_list("uuid", "cidr")
        }
        return cls(need, versions)

    def serves(self, host: HostState) -> bool:
        """Whether each address the server needs has a pool serving ``host`` with one free."""
        if self.need is None:
            return True
        uuids = frozenset(a.uuid for a in host.aggregates)
        return all(
            any(p.free > 0 and p.serves(host.availability_zone, uuids) for p in pools) for _, pools in self.need.groups
        )

    def cap(self, hosts: Sequence[HostState]) -> tuple[int | None, str]:
        """The free addresses of the pools serving ``hosts``: the fewest over
        the addresses a server needs (None: no limit), and their class."""
        if self.need is None:
            return None, ""
        places = {(h.availability_zone, frozenset(a.uuid for a in h.aggregates)) for h in hosts}
        best: int | None = None
        label = ""
        for _, pools in self.need.groups:
            serving = [p for p in pools if any(p.serves(zone, uuids) for zone, uuids in places)]
            free = sum(p.free for p in serving)
            if best is None or free < best:
                versions = {self.versions.get(p.uuid, 4) for p in serving} or {4}
                best, label = (
                    free,
                    "IPV4_ADDRESS" if versions == {4} else "IPV6_ADDRESS" if versions == {6} else "IP_ADDRESS",
                )
        return best, label


@dataclass
class _Group:
    scope: str
    name: str
    zone: str
    member_of: list[str]
    nodes: list[HostState] = field(default_factory=list)


def _groups(hosts: list[HostState], aggregates: dict[int, AggregateInfo]) -> tuple[list[_Group], list[_Group]]:
    """Every zone (the default zone when a host is in none) and every aggregate, with their compute nodes."""
    default = settings.DEFAULT_AVAILABILITY_ZONE
    zones: dict[str, _Group] = {}
    for info in sorted(aggregates.values(), key=lambda a: a.name):
        zone = info.metadata.get("availability_zone")
        if zone:
            zones.setdefault(zone, _Group("availability_zone", zone, zone, [])).member_of.append(info.uuid)
    by_uuid = {
        info.uuid: _Group("aggregate", info.name, info.metadata.get("availability_zone", ""), [info.uuid])
        for info in aggregates.values()
    }
    for host in hosts:
        zone = host.availability_zone or default
        zones.setdefault(zone, _Group("availability_zone", zone, zone, [])).nodes.append(host)
        for info in host.aggregates:
            by_uuid[info.uuid].nodes.append(host)
    return sorted(zones.values(), key=lambda g: g.name), sorted(by_uuid.values(), key=lambda g: (g.name, g.member_of))


def _limit_of(stops: Counter[str], order: Sequence[str]) -> str:
    """What stops the most of the hosts counted (ties: the flavor's classes in order, then by name)."""
    if not stops:
        return NO_HOSTS
    rank = {name: i for i, name in enumerate(order)}
    return min(stops, key=lambda name: (-stops[name], rank.get(name, len(rank)), name))


def count(flavors: Sequence[Flavor], project_id: str | None = None, lose_hosts: int = 0) -> Report:
    """How many more servers of each of ``flavors`` fit in every zone and
    every aggregate (for ``project_id``: its tenant isolation and quota),
    after each loses its ``lose_hosts`` hosts whose loss hurts most."""
    placement = client()
    aggregates = engine.load_aggregates()
    hosts = engine.load_hosts(aggregates)
    try:
        rooms = placement.rooms_of_providers(h.node_uuid for h in hosts)
    except PlacementError as failed:
        raise Unavailable(f"Placement could not be read: {failed}") from failed
    enabled = host_filters.enabled_filters(settings.ENABLED_FILTERS)
    counting = [f for f in enabled if isinstance(f, host_filters.NumInstancesFilter)]
    once = [f for f in enabled if not f.reads_flavor and f not in counting]
    per_flavor = [f for f in enabled if f.reads_flavor]
    pools = _Pools.now()
    extra_specs: dict[int, dict[str, str]] = defaultdict(dict)
    for flavor_id, key, value in FlavorExtraSpec.objects.filter(flavor__in=[f.pk for f in flavors]).values_list(
        "flavor_id", "key", "value"
    ):
        extra_specs[flavor_id][key] = value
    specs = {flavor.pk: spec_of(flavor, extra_specs[flavor.pk], project_id) for flavor in flavors}
    any_spec = next(iter(specs.values()), spec_of(Flavor(name="", flavorid="", vcpus=0, memory_mb=0), {}, project_id))
    nodes = [_node(host, rooms.get(host.node_uuid), any_spec, once, counting, pools) for host in hosts]
    verdicts: dict[int, dict[str, _Verdict]] = {}
    base: dict[int, dict[str, tuple[int, str]]] = {}
    for flavor in flavors:
        spec = specs[flavor.pk]
        try:
            query: prefilters.PlacementQuery | None = prefilters.build_query(spec, list(aggregates.values()))
        except prefilters.NoValidHostForRequest:
            query = None
        required = (
            frozenset(t for t in query.required if not t.startswith("!")) | query.root_required
            if query
            else frozenset()
        )
        forbidden = (
            frozenset(t[1:] for t in query.required if t.startswith("!"))
            | (query.root_forbidden - {prefilters.DISABLED_TRAIT})
            if query
            else frozenset()
        )
        per_node = verdicts[flavor.pk] = {}
        counts = base[flavor.pk] = {}
        for node in nodes:
            verdict = _verdict(node, spec, query, "require_tenant_aggregate", required, forbidden, per_flavor)
            per_node[node.state.node_uuid] = verdict
            counts[node.state.node_uuid] = verdict.servers()
    quota_left: dict[int, tuple[int | None, str]] = {}
    for flavor in flavors:
        quota_left[flavor.pk] = (
            quotas.servers_left(project_id, flavor.vcpus, flavor.memory_mb) if project_id else (None, "")
        )

    def figures(group: _Group) -> GroupCapacity:
        result = GroupCapacity(group.scope, group.name, group.zone, len({h.host for h in group.nodes}))
        nodes = group.nodes
        extra: dict[str, dict[str, float]] = {}
        extra_count: Counter[str] = Counter()
        lost_all = False
        if lose_hosts and nodes:
            members = sorted({h.host for h in nodes})
            if lose_hosts >= len(members):
                result.lost_hosts, lost_all = members, True
            else:
                loss = _loss(group, members, nodes, rooms, lose_hosts, placement)
                result.lost_hosts = loss.lost
                result.stranded = sum(1 for move in loss.planned if move.target is None)
                node_of = {h.host: h.node_uuid for h in nodes}
                for move in loss.planned:
                    if move.target is not None and move.target in node_of:
                        target = extra.setdefault(node_of[move.target], defaultdict(float))
                        for rc, amount in move.resources.items():
                            target[rc] += amount
                        extra_count[node_of[move.target]] += 1
                lost = set(loss.lost)
                nodes = [h for h in nodes if h.host not in lost]
        for flavor in flavors:
            if lost_all or not nodes:
                result.flavors.append(FlavorFigure(flavor.flavorid, flavor.name, 0, LOST if lost_all else NO_HOSTS))
                continue
            per_node = verdicts[flavor.pk]
            counted = base[flavor.pk]
            pairs = [
                per_node[h.node_uuid].servers(extra[h.node_uuid], extra_count[h.node_uuid])
                if h.node_uuid in extra
                else counted[h.node_uuid]
                for h in nodes
            ]
            total = sum(n for n, _ in pairs)
            # What runs out first on the hosts that may take the flavor; when
            # none may, what keeps it off the most hosts.
            open_stops = [stop for h, (_, stop) in zip(nodes, pairs, strict=True) if not per_node[h.node_uuid].reason]
            stops = Counter(open_stops) if open_stops else Counter(stop for _, stop in pairs)
            taking = [h for h, (n, _) in zip(nodes, pairs, strict=True) if n] if pools.need is not None else []
            limit = _limit_of(stops, list(specs[flavor.pk].flavor.resources()))
            address_cap, address_class = pools.cap(taking)
            if address_cap is not None and address_cap < total:
                total, limit = address_cap, address_class
            left, resource = quota_left[flavor.pk]
            if left is not None and left < total:
                total, limit = left, QUOTA + resource
            result.flavors.append(FlavorFigure(flavor.flavorid, flavor.name, total, limit))
        return result

    zones, aggregate_groups = _groups(hosts, aggregates)
    return Report(
        taken_at=timezone.now(),
        project_id=project_id,
        lose_hosts=lose_hosts,
        flavors=[(f.flavorid, f.name) for f in flavors],
        zones=[figures(group) for group in zones],
        aggregates=[figures(group) for group in aggregate_groups],
    )


def _loss(
    group: _Group,
    members: list[str],
    nodes: list[HostState],
    rooms: Mapping[str, Mapping[str, Any]],
    lose_hosts: int,
    placement: Any,
) -> headroom.Loss:
    """The headroom's choice and plan of the hosts ``group`` loses, on the room read already."""
    loads: dict[str, headroom.HostLoad] = {}
    for host in nodes:
        room = rooms.get(host.node_uuid, {})
        loads.setdefault(host.host, headroom.HostLoad(host.host)).add(
            room.get("inventories", {}), room.get("usages", {})
        )
    try:
        return headroom.plan_loss(members, group.member_of, loads, lose_hosts, placement)
    except PlacementError as failed:
        raise Unavailable(f"Placement could not be read: {failed}") from failed
