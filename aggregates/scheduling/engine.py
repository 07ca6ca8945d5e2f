"""One scheduling decision: what every compute node looks like now, the
placement query and its candidates, the host filters, the weighers, and the
fate of every host (chosen, passed, or rejected at which stage and why).
Claims are not made here (``services``); this module reads the database and
placement and decides."""

import functools
import gc
import itertools
import logging
import random
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from django.conf import settings
from django.db.models import BooleanField, Case, OuterRef, Value, When
from django.db.models.fields.json import KT

from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts.models import ComputeNode, image_types_of, up_q
from aggregates.placement_client import PlacementClient
from aggregates.scheduling import filters as host_filters
from aggregates.scheduling import metadata, prefilters
from aggregates.scheduling.host_state import COUNTERS, AggregateInfo, HostState
from aggregates.scheduling.request import RequestSpec
from aggregates.scheduling.weighers import WEIGHERS, WeighedHost, weigh_hosts
from aggregates.servers.models import UuidText, live_servers_by_node, live_servers_on
from aggregates.sql import among

log = logging.getLogger("aggregates.scheduling")

# Read by maintenance's capacity summary until it asks placement.allocation_candidates.
IGNORED_RATIO_KEYS = ("cpu_allocation_ratio", "ram_allocation_ratio", "disk_allocation_ratio")
# Hosts whose missing room is spelled out in numbers (one placement read each).
MAX_CAPACITY_DETAILS = 25
# Alternates a successful boot's stored decision keeps beside the chosen hosts.
ALTERNATES_KEPT = 10


@dataclass
class HostFate:
    host: str
    node: str
    result: str  # chosen | passed | rejected
    stage: str  # placement | filter | weigher
    filter: str = ""
    reason: str = ""
    weight: float | None = None
    weights: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "node": self.node,
            "result": self.result,
            "stage": self.stage,
            "filter": self.filter,
            "reason": self.reason,
            "weight": self.weight,
            "weights": self.weights,
        }


@dataclass
class Decision:
    """The outcome of one request: hosts in the order to try them, with the
    allocation request placement offered for each, and every host's fate."""

    spec: RequestSpec
    query: prefilters.PlacementQuery | None
    candidates: int = 0
    ordered: list[WeighedHost] = field(default_factory=list)
    allocation_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    fates: dict[str, HostFate] = field(default_factory=dict)  # by node uuid
    chosen: list[str] = field(default_factory=list)  # host names, in placement order
    refusal: str = ""  # a pre-filter refused the request outright
    notes: list[str] = field(default_factory=list)
    # Every compute node has its fate (else only placement's candidates).
    complete: bool = True

    def fate_of(self, weighed: WeighedHost) -> HostFate:
        """The fate of a host the decision kept: as recorded, or (a boot
        records the best hosts' only) passed with its weights, recorded now."""
        fate = self.fates.get(weighed.host.node_uuid)
        if fate is None:
            fate = self.fates[weighed.host.node_uuid] = passed_fate(weighed)
        return fate

    def explanation(self) -> dict[str, Any]:
        """The stored and served explanation. A successful boot's decision
        (not complete) keeps the chosen hosts, the best alternates and how
        many hosts each filter rejected, not a row for every host."""
        fates = list(self.fates.values())
        rejected_by: dict[str, int] = defaultdict(int)
        for fate in fates:
            if fate.result == "rejected":
                rejected_by[fate.filter or fate.stage] += 1
        if not self.complete:
            kept = [f for f in fates if f.result == "chosen"]
            alternates = (self.fate_of(w) for w in self.ordered)
            kept += list(itertools.islice((f for f in alternates if f.result == "passed"), ALTERNATES_KEPT))
            fates = kept
        return {
            "placement_query": self.query.query_string() if self.query else "",
            "candidates": self.candidates,
            "chosen": list(self.chosen),
            "notes": list(self.notes),
            "complete": self.complete,
            "rejected_by": dict(sorted(rejected_by.items())),
            "hosts": [fate.as_dict() for fate in fates],
        }


# --- what the cloud looks like ----------------------------------------------


def load_aggregates() -> dict[int, AggregateInfo]:
    """Every aggregate with its metadata, by primary key."""
    metadata_of: dict[int, dict[str, str]] = defaultdict(dict)
    for aggregate_id, key, value in AggregateMetadata.objects.values_list("aggregate_id", "key", "value"):
        metadata_of[aggregate_id][key] = value
    return {
        pk: AggregateInfo(uuid=str(uuid), name=name, metadata=metadata_of.get(pk, {}))
        for pk, uuid, name in Aggregate.objects.values_list("id", "uuid", "name")
    }


def load_hosts(
    aggregates: dict[int, AggregateInfo], node_uuids: set[str] | None = None, *, counts: bool = True
) -> list[HostState]:
    """A HostState for every compute node (or those of ``node_uuids``), in
    registration order; placement's figures replace the stored resources of
    candidates. Read with plain values in two queries (nodes with their
    service's state, CPU architecture and, with ``counts``, servers;
    aggregate memberships). Without ``counts`` the servers are counted later,
    by ``count_servers``, for the hosts a filter or weigher needs them of:
    a decision reads this for every boot."""
    nodes = ComputeNode.objects.order_by("id")
    if node_uuids is not None:
        nodes = nodes.filter(among(ComputeNode, "uuid", node_uuids))
    nodes = nodes.annotate(
        node_uuid=UuidText("uuid"),  # as str(uuid) writes it, without a UUID object a row
        arch=KT("cpu_info__arch"),
        up=Case(When(up_q(via="service__"), then=Value(True)), default=Value(False), output_field=BooleanField()),
    )
    columns = [
        "node_uuid",
        "host",
        "hypervisor_hostname",
        "service__disabled",
        "service__disabled_reason",
        "up",
        "hypervisor_type",
        "hypervisor_version",
        "arch",
        "vcpus",
        "memory_mb",
        "local_gb",
    ]
    if counts:
        nodes = nodes.annotate(servers=live_servers_on(OuterRef("uuid")), busy=live_servers_on(OuterRef("uuid"), True))
        rows = list(nodes.values_list(*columns, "servers", "busy"))
    else:
        rows = [(*row, 0, 0) for row in nodes.values_list(*columns)]
    uncounted = frozenset() if counts else frozenset(COUNTERS)
    by_host: dict[str, list[AggregateInfo]] = defaultdict(list)
    memberships = AggregateHost.objects.values_list("host", "aggregate_id")
    if node_uuids is not None:
        memberships = memberships.filter(among(AggregateHost, "host", {row[1] for row in rows}))
    for host, aggregate_id in memberships:
        by_host[host].append(aggregates[aggregate_id])
    default_zone = settings.DEFAULT_AVAILABILITY_ZONE
    hosts = []
    for node_uuid, host, node, disabled, reason, up, hv_type, hv_version, arch, vcpus, memory, disk, n, io in rows:
        in_aggregates = by_host.get(host, [])
        zone = next((a.metadata["availability_zone"] for a in in_aggregates if "availability_zone" in a.metadata), "")
        hosts.append(
            HostState(
                host=host,
                node=node,
                node_uuid=node_uuid,
                aggregates=in_aggregates,
                availability_zone=zone or default_zone,
                service_disabled=disabled,
                disabled_reason=reason or "",
                service_up=up,
                hypervisor_type=hv_type,
                hypervisor_version=hv_version,
                image_types=image_types_of(hv_type),
                cpu_arch=str(arch or "x86_64"),
                vcpus_total=vcpus,
                memory_mb_total=memory,
                disk_gb_total=disk,
                num_instances=n,
                num_io_ops=io,
                uncounted=uncounted,
            )
        )
    return hosts


def count_servers(hosts: list[HostState], counter: str) -> None:
    """Read ``counter`` (host_state.COUNTERS; "" for a filter or weigher
    that reads none: nothing) for those of ``hosts`` that lack it, in one
    query: what ``consume`` added to it already is kept."""
    lacking = [host for host in hosts if counter in host.uncounted] if counter else []
    if not lacking:
        return
    counted = live_servers_by_node({host.node_uuid for host in lacking}, busy=counter == "num_io_ops")
    for host in lacking:
        setattr(host, counter, getattr(host, counter) + counted.get(host.node_uuid, 0))
        host.uncounted = host.uncounted - {counter}


def count_for_weighers(hosts: list[HostState], spec: RequestSpec) -> None:
    """Read the counters the weighers that weigh ``hosts`` for ``spec`` read:
    those of a weigher whose multiplier may not be zero on some host (its
    setting's is not, or an aggregate of theirs sets its own). A zero
    multiplier everywhere gives every host the same score whatever it counts."""
    set_by_aggregates: set[str] | None = None
    for weigher in WEIGHERS:
        if not weigher.counter or not weigher.applies(spec):
            continue  # reads no counter, or has nothing to say
        if not weigher.default_multiplier():
            if set_by_aggregates is None:
                set_by_aggregates = {key for aggregate in metadata.aggregates_of(hosts) for key in aggregate.metadata}
            if weigher.key not in set_by_aggregates:
                continue
        count_servers(hosts, weigher.counter)


# --- placement ----------------------------------------------------------------


def _apply_summary(host: HostState, summary: dict[str, Any]) -> None:
    resources = summary.get("resources", {})
    if "VCPU" in resources:
        host.vcpus_capacity, host.vcpus_used = resources["VCPU"]["capacity"], resources["VCPU"]["used"]
    if "MEMORY_MB" in resources:
        host.memory_mb_capacity = resources["MEMORY_MB"]["capacity"]
        host.memory_mb_used = resources["MEMORY_MB"]["used"]
    if "DISK_GB" in resources:
        host.disk_gb_capacity, host.disk_gb_used = resources["DISK_GB"]["capacity"], resources["DISK_GB"]["used"]


def query_candidates(placement: PlacementClient, query: prefilters.PlacementQuery) -> dict[str, Any]:
    return placement.allocation_candidates(query.params())


def _rooms(placement: PlacementClient, query: prefilters.PlacementQuery) -> dict[str, set[str]]:
    """For each requested class, the providers with room for it alone, among
    those the query's aggregates allow."""
    member_of = ["in:" + ",".join(sorted(group)) for group in query.member_of]
    if query.forbidden_aggregates:
        member_of.append("!in:" + ",".join(sorted(set(query.forbidden_aggregates))))
    return {
        resource_class: placement.providers_with_room(resource_class, amount, member_of)
        for resource_class, amount in query.resources.items()
    }


def _capacity_detail(placement: PlacementClient, host: HostState, resource_class: str, amount: int) -> str:
    try:
        inventory = placement.provider_inventories(host.node_uuid).get(resource_class)
        used = placement.provider_usages(host.node_uuid).get(resource_class, 0)
    except Exception:  # noqa: BLE001 - a detail only; the sentence stands without it
        return ""
    if not inventory:
        return f"; its provider has no {resource_class} inventory"
    capacity = int((inventory["total"] - inventory["reserved"]) * inventory["allocation_ratio"])
    return f"; {used} of {capacity} used, {max(capacity - used, 0)} free" + (
        f", max_unit {inventory['max_unit']}" if amount > inventory["max_unit"] else ""
    )


def explain_placement_exclusions(
    placement: PlacementClient, decision: Decision, excluded: list[HostState], returned_all: bool
) -> None:
    """Give every host placement did not return its reason."""
    query = decision.query
    assert query is not None
    rooms: dict[str, set[str]] | None = None
    details = 0
    for host in excluded:
        verdict = query.excluded_by(host)
        if verdict:
            name, reason = verdict
            decision.fates[host.node_uuid] = HostFate(host.host, host.node, "rejected", "placement", name, reason)
            continue
        if not returned_all:
            reason = (
                f"placement returned its limit of {query.limit} candidates (MAX_PLACEMENT_RESULTS) without host "
                f"{host.host}; whether it has room was not checked"
            )
            decision.fates[host.node_uuid] = HostFate(host.host, host.node, "rejected", "placement", "limit", reason)
            continue
        if rooms is None:
            rooms = _rooms(placement, query)
        short = [rc for rc, uuids in rooms.items() if host.node_uuid not in uuids]
        if short:
            resource_class = short[0]
            amount = query.resources[resource_class]
            detail = ""
            if details < MAX_CAPACITY_DETAILS:
                details += 1
                detail = _capacity_detail(placement, host, resource_class, amount)
            reason = (
                f"host {host.host} lacks room for {resource_class}: flavor {decision.spec.flavor.name} needs "
                f"{amount}{detail}"
            )
            decision.fates[host.node_uuid] = HostFate(
                host.host, host.node, "rejected", "placement", "resources", reason
            )
        else:
            wanted = ", ".join(sorted(query.required)) or "a trait"
            reason = f"host {host.host} has room but its provider lacks {wanted} required by the request"
            decision.fates[host.node_uuid] = HostFate(host.host, host.node, "rejected", "placement", "traits", reason)


# --- filters and weighers -----------------------------------------------------


def run_filters(
    hosts: list[HostState], spec: RequestSpec, enabled: list[host_filters.HostFilter], decision: Decision
) -> list[HostState]:
    """The hosts that pass every filter of ``enabled``, in order; the others'
    fates (the first filter that rejects each) recorded in the hosts' order.
    Each filter judges the hosts the ones before it passed (as Nova's filter
    handler does), so the counters a filter reads are counted for those only."""
    passing = hosts
    rejected: dict[int, HostFate] = {}
    for host_filter in enabled:
        count_servers(passing, host_filter.counter)
        kept = []
        for host in passing:
            reason = host_filter.host_passes(host, spec)
            if reason is None:
                kept.append(host)
            else:
                rejected[id(host)] = HostFate(host.host, host.node, "rejected", "filter", host_filter.name, reason)
        passing = kept
    for host in hosts:
        fate = rejected.get(id(host))
        if fate is not None:
            decision.fates[host.node_uuid] = fate
    return passing


def _ratio_notes(hosts: list[HostState]) -> list[str]:
    seen: dict[str, list[str]] = {}
    for aggregate in metadata.aggregates_of(hosts):
        keys = [key for key in IGNORED_RATIO_KEYS if key in aggregate.metadata]
        if keys:
            seen[aggregate.name] = keys
    return [
        f"aggregate {name} carries {', '.join(keys)}, which is ignored (as in Nova since Ocata): allocation "
        "ratios are set per host (CPU_ALLOCATION_RATIO..., or the host's registration) or on placement inventories"
        for name, keys in sorted(seen.items())
    ]


def is_forced_target(host: HostState, spec: RequestSpec) -> bool:
    """Whether ``host`` is the host and/or node the request forces or asks for."""
    wanted_host = spec.forced_host or spec.requested_host
    return (not wanted_host or host.host == wanted_host) and (not spec.forced_node or host.node == spec.forced_node)


def _forced_node_uuids(spec: RequestSpec) -> set[str]:
    nodes = ComputeNode.objects.all()
    if spec.forced_host or spec.requested_host:
        nodes = nodes.filter(host=spec.forced_host or spec.requested_host)
    if spec.forced_node:
        nodes = nodes.filter(hypervisor_hostname=spec.forced_node)
    return {str(node_uuid) for node_uuid in nodes.values_list("uuid", flat=True)}


P = ParamSpec("P")
R = TypeVar("R")


def collection_paused(function: Callable[P, R]) -> Callable[P, R]:
    """Run ``function`` with cyclic garbage collection off: a decision makes
    tens of thousands of objects (candidates, host states, weights) that all
    live until it returns, and the collector's passes over them find nothing
    to free (about a tenth of a decision at 5,000 hosts). Reference counting
    still frees everything; collection resumes after."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused


@collection_paused
def decide(
    spec: RequestSpec,
    placement: PlacementClient,
    full: bool = True,
    aggregates: dict[int, AggregateInfo] | None = None,
    *,
    member_of: Collection[str] = (),
    within: Collection[str] | None = None,
) -> Decision:
    """Decide where ``spec``'s first instance would go; ``decision.ordered``
    lists the hosts to try. ``full``: give every compute node its fate (an
    explanation, a failed boot); otherwise only placement's candidates are
    read and judged (a boot, which must be quick). ``aggregates``: as
    ``load_aggregates`` gave them, when the caller has just read them.
    ``member_of``: placement is asked only about the providers of these
    aggregates (uuids). ``within``: only these hosts are judged (a plan over
    a set of hosts), every one of them (placement's answer is not limited)."""
    if aggregates is None:
        aggregates = load_aggregates()
    decision = Decision(spec=spec, query=None, complete=full)
    enabled = host_filters.filters_to_run(settings.ENABLED_FILTERS)
    try:
        query = prefilters.build_query(spec, list(aggregates.values()))
    except prefilters.NoValidHostForRequest as refused:
        decision.refusal = str(refused)
        for host in _within(load_hosts(aggregates, counts=False), within) if full else []:
            decision.fates[host.node_uuid] = HostFate(
                host.host, host.node, "rejected", "placement", "require_tenant_aggregate", str(refused)
            )
        return decision
    forced = bool(spec.forced_host or spec.forced_node)
    restricted = forced or bool(spec.requested_host)
    if restricted:
        targets = _forced_node_uuids(spec)
        if len(targets) == 1:
            query.in_tree = next(iter(targets))
    if member_of:
        query.member_of.append(sorted(member_of))
    if within is not None:
        query.limit = None
    decision.query = query

    data = query_candidates(placement, query)
    summaries = data.get("provider_summaries", {})
    for request in data.get("allocation_requests", []):
        root = next(iter(request["allocations"]))
        decision.allocation_requests.setdefault(root, request)
    decision.candidates = len(decision.allocation_requests)
    hosts = _within(load_hosts(aggregates, None if full else set(decision.allocation_requests), counts=False), within)
    decision.notes = _ratio_notes(hosts)

    candidates = []
    excluded = []
    for host in hosts:
        if host.host in spec.ignore_hosts:
            decision.fates[host.node_uuid] = HostFate(
                host.host,
                host.node,
                "rejected",
                "placement",
                "ignore_hosts",
                f"host {host.host} is the server's source",
            )
        elif restricted and not is_forced_target(host, spec):
            what = spec.forced_host or spec.requested_host
            what = f"host {what}" if what else f"node {spec.forced_node}"
            name = "forced_host" if forced else "requested_destination"
            decision.fates[host.node_uuid] = HostFate(
                host.host, host.node, "rejected", "placement", name, f"the request asks for {what}"
            )
        elif host.node_uuid in decision.allocation_requests:
            _apply_summary(host, summaries.get(host.node_uuid, {}))
            candidates.append(host)
        else:
            excluded.append(host)
    if full:
        returned_all = query.limit is None or decision.candidates < query.limit
        explain_placement_exclusions(placement, decision, excluded, returned_all)

    # Forced hosts skip the filters, as in Nova, but not the address pools:
    # they stand for the network allocation of Nova's build, which no forced
    # host skips (a host no pool can address fails the build with the reason).
    passing = run_filters(candidates, spec, host_filters.always_run() if forced else enabled, decision)
    count_for_weighers(passing, spec)
    decision.ordered = weigh_hosts(passing, spec)
    # An explanation gives every host's fate; a boot's keeps its best hosts'.
    record_weights(decision, first=None if full or within is not None else fates_kept())
    return decision


def _within(hosts: list[HostState], names: Collection[str] | None) -> list[HostState]:
    return hosts if names is None else [host for host in hosts if host.host in names]


def passed_fate(weighed: WeighedHost) -> HostFate:
    return HostFate(
        weighed.host.host,
        weighed.host.node,
        "passed",
        "weigher",
        "",
        f"host {weighed.host.host} passed every filter; weight {weighed.weight:.4f}",
        weight=round(weighed.weight, 6),
        weights={name: round(value, 6) for name, value in weighed.weights.items()},
    )


def record_weights(decision: Decision, first: int | None = None) -> None:
    """The fate of every host still in ``decision.ordered`` (or of its
    ``first`` hosts): passed, with its weights."""
    for weighed in decision.ordered[:first]:
        decision.fates[weighed.host.node_uuid] = passed_fate(weighed)


def fates_kept() -> int:
    """How many of a boot's best hosts have their fate recorded when it is
    decided: those it may be placed on first and the alternates its
    explanation keeps (any other host's is recorded when asked for)."""
    return ALTERNATES_KEPT + settings.HOST_SUBSET_SIZE + 1


def peers_first(ordered: list[WeighedHost], preferred: frozenset[str]) -> list[WeighedHost]:
    """``ordered`` (sorted in place) with the hosts sharing one of the
    ``preferred`` aggregates (a moved server's source's) first, each group
    in weight order."""
    if preferred:
        ordered.sort(key=lambda w: not any(a.uuid in preferred for a in w.host.aggregates))
    return ordered


def pick_order(decision: Decision) -> list[WeighedHost]:
    """Nova's host subset: one of the best HOST_SUBSET_SIZE hosts at random
    first, then the rest in weight order as alternates."""
    ordered = peers_first(list(decision.ordered), decision.spec.preferred_aggregates)
    if not ordered:
        return ordered
    subset = ordered[: settings.HOST_SUBSET_SIZE]
    first = random.choice(subset)
    return [first] + [w for w in ordered if w is not first]


def refilter(decision: Decision, spec: RequestSpec, placed: HostState) -> None:
    """After an instance lands on ``placed``: re-run the per-instance filters
    there and re-weigh, for the next instance of the same request."""
    enabled = [f for f in host_filters.filters_to_run(settings.ENABLED_FILTERS) if not f.run_filter_once_per_request]
    hosts = [w.host for w in decision.ordered]
    wanted = decision.query.resources if decision.query else {}
    if not placed.fits(wanted):
        hosts = [h for h in hosts if h is not placed]
    if not (spec.forced_host or spec.forced_node):
        for host_filter in enabled:
            count_servers([placed], host_filter.counter)
            reason = host_filter.host_passes(placed, spec)
            if reason is not None:
                hosts = [h for h in hosts if h is not placed]
                break
    again = [f for f in enabled if f.judges_every_host_again]
    if again and not (spec.forced_host or spec.forced_node):
        for host_filter in again:
            count_servers(hosts, host_filter.counter)
        hosts = [h for h in hosts if all(f.host_passes(h, spec) is None for f in again)]
    count_for_weighers(hosts, spec)
    decision.ordered = weigh_hosts(hosts, spec)


class Recheck:
    """Whether a host an earlier decision chose for the same request may still
    take it, judged on the cloud as it is now: the aggregates and the
    placement query built afresh, the host's own state read again (service,
    aggregates, instance counts), its pre-filter exclusions and host filters
    run on it, and its provider's traits read when the request requires or
    forbids any. Placement checks the room when the claim is made."""

    def __init__(
        self,
        spec: RequestSpec,
        placement: PlacementClient,
        aggregates: dict[int, AggregateInfo],
        query: prefilters.PlacementQuery,
    ) -> None:
        self.spec = spec
        self.placement = placement
        self.aggregates = aggregates
        self.query = query
        self.enabled = host_filters.filters_to_run(settings.ENABLED_FILTERS)

    @classmethod
    def now(cls, spec: RequestSpec, placement: PlacementClient) -> "Recheck | None":
        """A Recheck with the aggregates as they are now and the placement
        query ``spec`` would be decided with now (None: a pre-filter refuses it)."""
        aggregates = load_aggregates()
        try:
            query = prefilters.build_query(spec, list(aggregates.values()))
        except prefilters.NoValidHostForRequest:
            return None
        return cls(spec, placement, aggregates, query)

    def refresh(self, host: HostState) -> tuple[str, str] | None:
        """Refresh ``host`` from the database in place; (filter, reason) when it
        may no longer take the request, None when it may."""
        found = load_hosts(self.aggregates, {host.node_uuid})
        if not found:
            return "recheck", f"host {host.host}'s compute node is gone"
        now = found[0]
        for name in ("aggregates", "availability_zone", "service_disabled", "disabled_reason", "service_up"):
            setattr(host, name, getattr(now, name))
        host.num_instances, host.num_io_ops, host.uncounted = now.num_instances, now.num_io_ops, now.uncounted
        host.forget_derived()
        verdict = self.query.excluded_by(host)
        if verdict is not None:
            return verdict
        for host_filter in self.enabled:
            reason = host_filter.host_passes(host, self.spec)
            if reason is not None:
                return host_filter.name, reason
        wanted = self.query.required | self.query.root_required
        unwanted = self.query.root_forbidden - {prefilters.DISABLED_TRAIT}
        if wanted or unwanted:
            traits = set(self.placement.provider_traits(host.node_uuid))
            if not wanted <= traits or traits & unwanted:
                return "traits", f"host {host.host}'s provider no longer has the traits the request requires"
        return None
