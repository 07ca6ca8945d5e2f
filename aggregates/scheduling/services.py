"""Scheduling operations: build a request spec, schedule and claim placement
for servers, explain a decision without claiming, release a claim. Placement
is called through the placement client, never with a transaction open."""

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aggregates.errors import NotFound, Unavailable
from aggregates.flavors.models import Flavor
from aggregates.identity.caller import Caller
from aggregates.images.models import Image
from aggregates.metrics import instruments
from aggregates.placement_client import AllocationConflict, PlacementClient, PlacementError, client
from aggregates.scheduling import boot_request, engine, groups, reuse
from aggregates.scheduling.host_state import HostState
from aggregates.scheduling.models import SchedulingDecision
from aggregates.scheduling.request import FlavorSpec, GroupSpec, ImageSpec, RequestSpec
from aggregates.servers.models import Server

log = logging.getLogger("aggregates.scheduling")

NO_VALID_HOST = "No valid host was found. "


@dataclass(frozen=True)
class Placed:
    consumer_uuid: str
    host: str
    node: str
    node_uuid: str
    availability_zone: str


@dataclass
class ScheduleResult:
    placed: list[Placed] = field(default_factory=list)
    # Consumers (server uuids) no host could take, and Nova's fault message for them.
    failed: list[str] = field(default_factory=list)
    fault_message: str = ""
    decision: SchedulingDecision | None = None


def flavor_spec_of(flavor: Flavor, extra_specs: Mapping[str, str]) -> FlavorSpec:
    """What the scheduler asks of a server of ``flavor`` with ``extra_specs``."""
    return FlavorSpec(
        name=flavor.name,
        flavorid=flavor.flavorid,
        vcpus=flavor.vcpus,
        memory_mb=flavor.memory_mb,
        root_gb=flavor.root_gb,
        ephemeral_gb=flavor.ephemeral_gb,
        swap=flavor.swap,
        extra_specs=dict(extra_specs),
    )


def request_spec_for(
    flavor: Flavor,
    image: Image | None,
    project_id: str,
    user_id: str = "",
    *,
    availability_zone: str | None = None,
    forced_host: str | None = None,
    forced_node: str | None = None,
    num_instances: int = 1,
    same_host: frozenset[str] = frozenset(),
    different_host: frozenset[str] = frozenset(),
    group: GroupSpec | None = None,
) -> RequestSpec:
    """The request spec of a boot or an explanation (the flavor's extra specs
    and the image's properties read now)."""
    flavor_spec = flavor_spec_of(flavor, dict(flavor.extra_spec_items.values_list("key", "value")))
    image_spec = None
    if image is not None:
        image_spec = ImageSpec(
            id=str(image.id),
            name=image.name or "",
            disk_format=image.disk_format or "",
            container_format=image.container_format or "",
            properties=dict(image.property_items.values_list("name", "value")),
        )
    return RequestSpec(
        flavor=flavor_spec,
        image=image_spec,
        project_id=project_id,
        user_id=user_id,
        availability_zone=availability_zone or None,
        forced_host=forced_host or None,
        forced_node=forced_node or None,
        num_instances=num_instances,
        same_host=frozenset(same_host),
        different_host=frozenset(different_host),
        group=group,
    )


def group_spec(group_uuid: str, leaving: list[str]) -> GroupSpec | None:
    """The spec of server group ``group_uuid`` for scheduling the servers
    ``leaving`` (None when the group is gone)."""
    return groups.spec_for(group_uuid, leaving)


def _request_record(spec: RequestSpec) -> dict[str, Any]:
    return {
        "flavor": spec.flavor.name,
        "flavorid": spec.flavor.flavorid,
        "image": spec.image.id if spec.image else None,
        "image_name": spec.image.name if spec.image else None,
        "availability_zone": spec.availability_zone,
        "forced_host": spec.forced_host,
        "forced_node": spec.forced_node,
        "project_id": spec.project_id,
        "num_instances": spec.num_instances,
        **({"group": spec.group.uuid, "group_policy": spec.group.policy} if spec.group else {}),
    }


def _record(spec: RequestSpec, decision: engine.Decision, outcome: str) -> SchedulingDecision:
    return SchedulingDecision.objects.create(
        outcome=outcome,
        project_id=spec.project_id,
        request=_request_record(spec),
        explanation=decision.explanation(),
    )


def _claim(placement: PlacementClient, spec: RequestSpec, consumer_uuid: str, allocation: dict[str, Any]) -> bool:
    """PUT the allocation for a new consumer: True when it holds, False on a
    conflict (the host filled up or the consumer moved on meanwhile)."""
    try:
        placement.claim(
            consumer_uuid, allocation["allocations"], spec.project_id or "unknown", spec.user_id or "unknown"
        )
    except AllocationConflict:
        return False
    return True


def fault_message(decision: engine.Decision) -> str:
    if decision.refusal:
        return NO_VALID_HOST + decision.refusal
    rejected = [fate for fate in decision.fates.values() if fate.result == "rejected"]
    by_stage: dict[str, int] = {}
    for fate in rejected:
        key = fate.filter or fate.stage
        by_stage[key] = by_stage.get(key, 0) + 1
    summary = ", ".join(f"{name}: {count}" for name, count in sorted(by_stage.items(), key=lambda i: -i[1]))
    message = NO_VALID_HOST + (
        f"There are not enough hosts available. {decision.candidates} placement candidate(s); "
        f"rejected by {summary or 'none (no compute hosts)'}."
    )
    if decision.spec.forced_host or decision.spec.forced_node:
        # One host was asked for: why it cannot take the server (its addresses).
        reasons = [fate.reason for fate in rejected if fate.stage == "filter"]
        message += "".join(f" The host asked for cannot take it: {reason}." for reason in reasons)
    return message


def _decide(
    spec: RequestSpec, placement: PlacementClient, full: bool, recheck: engine.Recheck | None = None
) -> engine.Decision:
    """A fresh decision (on the aggregates ``recheck`` has just read, if any)."""
    try:
        return engine.decide(spec, placement, full=full, aggregates=recheck.aggregates if recheck else None)
    except PlacementError as failed:
        raise Unavailable(f"Scheduling is not possible now: {failed}") from failed


# claim(consumer uuid, allocation request, compute node uuid): True when it holds.
Claim = Callable[[str, dict[str, Any], str], bool]


@dataclass(frozen=True)
class SideClaim:
    """What a boot claims beside placement (the server's addresses):
    ``claim(consumer, node uuid)`` once placement's claim holds there (False:
    that claim is released and the next host tried); ``respec(spec)``: the
    spec as things stand now, for the explanation of a failure."""

    claim: Callable[[str, str], bool]
    respec: Callable[[RequestSpec], RequestSpec]


def schedule_and_claim(spec: RequestSpec, consumer_uuids: list[str], side: SideClaim | None = None) -> ScheduleResult:
    """Place each consumer (a server uuid) on a host: placement pre-filters,
    candidates, host filters, weighers; claim with PUT /allocations/{uuid}
    (and ``side``'s claim), trying the next host on a conflict (Nova's
    alternates). Records one SchedulingDecision. Must be called with no
    database transaction open."""
    placement = client()

    def claim(consumer: str, allocation: dict[str, Any], node_uuid: str) -> bool:
        if not _claim(placement, spec, consumer, allocation):
            return False
        if side is None or side.claim(consumer, node_uuid):
            return True
        placement.release(consumer)
        return False

    return _place(spec, consumer_uuids, claim, side.respec if side else None)


def _place(
    spec: RequestSpec,
    consumer_uuids: list[str],
    claim: Claim,
    respec: Callable[[RequestSpec], RequestSpec] | None = None,
) -> ScheduleResult:
    """``_place_once``, timed into the scheduler's metrics (with the stages
    and filters that rejected hosts when no valid host was found)."""
    started = time.monotonic()
    result = _place_once(spec, consumer_uuids, claim, respec)
    rejections = None
    if result.failed and result.decision is not None:
        hosts = result.decision.explanation.get("hosts", [])
        rejections = [(h["stage"], h["filter"]) for h in hosts if h.get("result") == "rejected"]
    instruments.scheduling(time.monotonic() - started, rejections)
    return result


@engine.collection_paused
def _place_once(
    spec: RequestSpec,
    consumer_uuids: list[str],
    claim: Claim,
    respec: Callable[[RequestSpec], RequestSpec] | None = None,
) -> ScheduleResult:
    """The scheduling loop of boots and moves: decide (or reuse this worker's
    recent decision for the same boot, ``reuse``), then for each consumer
    try the hosts in order until ``claim`` (consumer, allocation request)
    holds; a failure is explained host by host."""
    placement = client()
    reusing, kept, recheck = _kept_decision(spec, len(consumer_uuids), placement)
    admission = groups.admission_for(spec.group)
    if kept is not None:
        decision = kept.decision
        _reset_for_reuse(decision, kept)
    else:
        decision, recheck = _decide(spec, placement, full=False, recheck=recheck), None
    result = ScheduleResult()
    chosen_hosts: list[str] = []
    for index, consumer_uuid in enumerate(consumer_uuids):
        placed = _claim_first(decision, consumer_uuid, claim, recheck, admission)
        if placed is None and recheck is not None:
            # The reused decision has no host left that may take it: decide afresh.
            decision, recheck, kept = _decide(spec, placement, full=False), None, None
            placed = _claim_first(decision, consumer_uuid, claim, None, admission)
        if placed is None:
            result.failed.append(consumer_uuid)
            continue
        placed.consume(engine.prefilters.flavor_resources(spec), consumer_uuid)
        if spec.group is not None:
            spec.group.place(placed.host, consumer_uuid)
        chosen_hosts.append(placed.host)
        decision.fates[placed.node_uuid].result = "chosen"  # recorded by _claim_first
        result.placed.append(
            Placed(consumer_uuid, placed.host, placed.node, placed.node_uuid, placed.availability_zone)
        )
        if index + 1 < len(consumer_uuids):
            engine.refilter(decision, spec, placed)
    decision.chosen = chosen_hosts
    outcome = SchedulingDecision.CHOSEN
    if result.failed:
        # Every host's fate, as things stand now that the others are placed.
        outcome = SchedulingDecision.NO_VALID_HOST
        lost_races = {uuid for uuid, fate in decision.fates.items() if "lost a race" in fate.reason}
        if spec.group is not None:  # where the members are now, those placed by others meanwhile included
            spec = _with_group_now(spec, consumer_uuids)
        decision = _decide(respec(spec) if respec else spec, placement, full=True)
        decision.chosen = chosen_hosts
        for uuid in lost_races & set(decision.fates):
            decision.fates[uuid].reason += (
                "; a claim here lost a race for the last room (placement answered 409, or a pool's last "
                "address was taken)"
            )
        result.fault_message = fault_message(decision)
    result.decision = _record(spec, decision, outcome)
    if reusing and placed is not None and decision.query is not None:
        # Kept for the next boot of the same request, as it stands after this
        # one, with its best hosts only (re-weighed after every boot).
        engine.refilter(decision, spec, placed)
        decision.ordered = decision.ordered[: reuse.HOSTS_KEPT]
        # The explanation of a boot keeps the best alternates only: their weights as they are now.
        engine.record_weights(decision, first=engine.fates_kept())
        decided_at = kept.decided_at if kept is not None else time.monotonic()
        reuse.keep(reuse.key_for(spec, decision.query.query_string()), reuse.Kept(decision, decided_at))
    return result


def _kept_decision(
    spec: RequestSpec, servers: int, placement: PlacementClient
) -> tuple[bool, reuse.Kept | None, engine.Recheck | None]:
    """Whether this boot may reuse a decision (and keep its own), the kept
    decision if any, and how to re-check its hosts as the cloud is now."""
    if not reuse.reusable(spec, servers):
        return False, None, None
    recheck = engine.Recheck.now(spec, placement)
    if recheck is None:
        return False, None, None
    return True, reuse.take(reuse.key_for(spec, recheck.query.query_string())), recheck


def _reset_for_reuse(decision: engine.Decision, kept: reuse.Kept) -> None:
    """A kept decision serves a new boot: no host is chosen yet, and its
    explanation says that it was reused and how old it is."""
    for fate in decision.fates.values():
        if fate.result == "chosen":
            fate.result = "passed"
    decision.chosen = []
    age = (time.monotonic() - kept.decided_at) * 1000
    note = (
        f"decision reused: made {age:.0f} ms earlier for the same request (SCHEDULER_DECISION_REUSE_SECONDS), "
        "the servers placed since accounted for; the chosen host was re-checked as it is now"
    )
    decision.notes = [n for n in decision.notes if not n.startswith("decision reused:")] + [note]


def _with_group_now(spec: RequestSpec, consumer_uuids: list[str]) -> RequestSpec:
    assert spec.group is not None
    now = groups.spec_for(spec.group.uuid, consumer_uuids)
    return dataclasses.replace(spec, group=now)


def _claim_first(
    decision: engine.Decision,
    consumer_uuid: str,
    claim: Claim,
    recheck: engine.Recheck | None,
    admission: groups.Admission | None = None,
) -> HostState | None:
    """Claim for ``consumer_uuid`` on the first host, in pick order, that
    takes it (re-checked first when the decision is reused; admitted first
    under its server group's lock when the group has a hard policy); the
    host, or None when none does. Hosts that may no longer take it leave
    the decision."""
    for weighed in engine.pick_order(decision):
        host = weighed.host
        allocation = decision.allocation_requests.get(host.node_uuid)
        if allocation is None:
            continue
        if recheck is not None:
            verdict = recheck.refresh(host)
            if verdict is not None:
                name, reason = verdict
                decision.fates[host.node_uuid] = engine.HostFate(
                    host.host, host.node, "rejected", "filter", name, reason
                )
                decision.ordered = [w for w in decision.ordered if w.host is not host]
                continue
        if admission is not None:
            refused = admission.admit(consumer_uuid, host.host)
            if refused is not None:
                # Another member was placed there since the decision was made.
                name, reason = refused
                decision.fates[host.node_uuid] = engine.HostFate(
                    host.host, host.node, "rejected", "filter", name, reason + " (placed there meanwhile)"
                )
                decision.ordered = [w for w in decision.ordered if w.host is not host]
                continue
        try:
            claimed = claim(consumer_uuid, allocation, host.node_uuid)
        except PlacementError as failed:
            if admission is not None:
                admission.withdraw(consumer_uuid)
            raise Unavailable(f"Claiming resources is not possible now: {failed}") from failed
        fate = decision.fate_of(weighed)
        if claimed:
            return host
        if admission is not None:
            admission.withdraw(consumer_uuid)
        fate.reason += (
            "; its claim lost a race for the last room (placement answered 409, or a pool's last address "
            "was taken), the next host was tried"
        )
        if recheck is not None:
            decision.ordered = [w for w in decision.ordered if w.host is not host]
    return None


# --- moves ---------------------------------------------------------------------


def spec_for_server(
    server: Server,
    *,
    ignore_hosts: frozenset[str] = frozenset(),
    requested_host: str | None = None,
    preferred_aggregates: frozenset[str] = frozenset(),
    new_flavor: tuple[str, dict[str, Any]] | None = None,
    may_stay: bool = False,
) -> RequestSpec:
    """The request spec of moving ``server``: its flavor as booted (the
    server's copy), or ``new_flavor`` (flavorid, the copy a resize keeps),
    its image's properties now, its project, the zone it is pinned to, its
    server group (itself left out); never its own host unless ``may_stay``
    (a resize with ALLOW_RESIZE_TO_SAME_HOST)."""
    flavorid, flavor = new_flavor if new_flavor is not None else (server.flavorid, server.flavor or {})
    flavor_spec = FlavorSpec(
        name=str(flavor.get("original_name", flavorid)),
        flavorid=flavorid,
        vcpus=int(flavor.get("vcpus", 0)),
        memory_mb=int(flavor.get("ram", 0)),
        root_gb=int(flavor.get("disk", 0)),
        ephemeral_gb=int(flavor.get("ephemeral", 0)),
        swap=int(flavor.get("swap", 0)),
        extra_specs=dict(flavor.get("extra_specs") or {}),
    )
    image_uuid = boot_request.parse_uuid(server.image_id) if server.image_id else None
    image = Image.objects.filter(pk=image_uuid).first() if image_uuid else None
    image_spec = None
    if image is not None:
        image_spec = ImageSpec(
            id=str(image.id),
            name=image.name or "",
            disk_format=image.disk_format or "",
            container_format=image.container_format or "",
            properties=dict(image.property_items.values_list("name", "value")),
        )
    return RequestSpec(
        flavor=flavor_spec,
        image=image_spec,
        project_id=server.project_id,
        user_id=server.user_id,
        availability_zone=server.pinned_availability_zone or None,
        ignore_hosts=frozenset(ignore_hosts) | ({server.host} if server.host and not may_stay else set()),
        requested_host=requested_host,
        preferred_aggregates=preferred_aggregates,
        group=_group_of_server(server),
    )


def group_uuids_of(server_uuids: list[str]) -> dict[str, str]:
    """Server uuid -> the uuid of its server group, for those in one."""
    return groups.group_uuids_of(server_uuids)


def _group_of_server(server: Server) -> GroupSpec | None:
    group = groups.group_of(str(server.uuid))
    return groups.spec_of(group, leaving=[str(server.uuid)]) if group is not None else None


@dataclass
class MoveResult:
    target: Placed | None
    decision: SchedulingDecision | None
    fault_message: str = ""


def _move_allocation(
    placement: PlacementClient, spec: RequestSpec, server_uuid: str, allocation: dict[str, Any], hold_as: str | None
) -> bool:
    """One POST /allocations: the server's allocation becomes the target's
    (checked against its consumer generation) and, with ``hold_as`` (a
    migration uuid), its source allocation passes to that consumer, as Nova
    holds it during a cold migration. False on a conflict."""
    try:
        placement.move_allocations(
            server_uuid,
            allocation["allocations"],
            spec.project_id or "unknown",
            spec.user_id or "unknown",
            hold_source_as=hold_as,
        )
    except AllocationConflict:
        return False
    return True


@dataclass(frozen=True)
class MoveSideClaim:
    """What a move takes on a target beside placement (the addresses the
    server needs there): ``take(server uuid, node uuid)`` before placement's
    claim (False: the next host is tried), ``give_back(server uuid)`` when
    placement's claim then fails; ``respec(spec)``: the spec as things stand
    now, for the explanation of a failure."""

    take: Callable[[str, str], bool]
    give_back: Callable[[str], object]
    respec: Callable[[RequestSpec], RequestSpec]


def schedule_move(
    spec: RequestSpec, server_uuid: str, hold_source_as: str | None = None, side: MoveSideClaim | None = None
) -> MoveResult:
    """Choose a target for an existing server (never a host of
    ``spec.ignore_hosts``) and move its allocation there atomically (with
    ``side``'s claim taken first); on a conflict the next host is tried.
    Nothing moves when no host fits: the stored decision says why. No
    database transaction may be open."""
    placement = client()

    def claim(consumer: str, allocation: dict[str, Any], node_uuid: str) -> bool:
        if side is not None and not side.take(consumer, node_uuid):
            return False
        moved = False
        try:
            moved = _move_allocation(placement, spec, consumer, allocation, hold_source_as)
        finally:
            if not moved and side is not None:
                side.give_back(consumer)
        return moved

    result = _place(spec, [server_uuid], claim, side.respec if side else None)
    return MoveResult(result.placed[0] if result.placed else None, result.decision, result.fault_message)


def explain(spec: RequestSpec) -> SchedulingDecision:
    """The decision a boot of ``spec`` would get now, claiming nothing: the
    first ``num_instances`` hosts in the order a boot would try them."""
    decision = _decide(spec, client(), full=True)
    ordered = decision.ordered[: spec.num_instances]
    decision.chosen = [w.host.host for w in ordered]
    for weighed in ordered:
        decision.fates[weighed.host.node_uuid].result = "chosen"
    return _record(spec, decision, SchedulingDecision.EXPLAINED)


def explain_request(
    caller: Caller,
    *,
    flavor_ref: str,
    image_ref: str | None,
    availability_zone: str | None,
    project_id: str,
    num_instances: int = 1,
) -> SchedulingDecision:
    """os-scheduler-explain: the request checked as a boot would check it, then explained."""
    destination = boot_request.parse_availability_zone(availability_zone)
    zone = boot_request.zone_for_forced_host(destination.availability_zone, destination.forced_host)
    boot_request.check_zone(zone, destination.forced_host)
    flavor = boot_request.flavor_for_boot(caller, flavor_ref)
    image = boot_request.image_for_boot(caller, image_ref, flavor) if image_ref else None
    spec = request_spec_for(
        flavor,
        image,
        project_id,
        caller.username,
        availability_zone=zone,
        forced_host=destination.forced_host,
        forced_node=destination.forced_node,
        num_instances=num_instances,
    )
    return explain(spec)


def decision_of_server(server_uuid: str) -> SchedulingDecision:
    """The stored decision of a server's last scheduling (its build, or its
    last move); 404 for a server that does not exist (or is deleted) and for
    one not scheduled yet."""
    parsed = boot_request.parse_uuid(server_uuid)
    server = (
        Server.objects.select_related("decision").filter(uuid=parsed, deleted_at__isnull=True).first()
        if parsed
        else None
    )
    if server is None or server.vm_state == Server.DELETED:
        raise NotFound(f"Instance {server_uuid} could not be found.")
    if server.decision is None:
        raise NotFound(f"Server {server_uuid} has no scheduling decision.")
    return server.decision


def release(consumer_uuid: str) -> None:
    """Delete the consumer's allocations (none left is fine). Raises
    PlacementError when placement cannot be reached or refuses."""
    client().release(consumer_uuid)


def hand_back(migration_uuid: str, server_uuid: str) -> bool:
    """A reverted resize: the source allocation the migration's consumer
    holds becomes the server's again (its target allocation dropped), in one
    POST /allocations. False when the migration held nothing. Raises
    PlacementError (AllocationConflict on a conflict). No transaction may be open."""
    return client().hand_over_allocations(migration_uuid, server_uuid)


def release_quietly(consumer_uuid: str) -> None:
    """``release``, for work already committed (a failed build, a move's
    leftovers): a failure is logged; the periodic tasks take it up."""
    try:
        release(consumer_uuid)
    except (PlacementError, NotImplementedError):
        log.exception("could not release the allocations of %s", consumer_uuid)


__all__ = [
    "GroupSpec",
    "PlacementError",
    "Placed",
    "ScheduleResult",
    "explain",
    "explain_request",
    "release",
    "release_quietly",
    "request_spec_for",
    "schedule_and_claim",
]
