"""The build of a reservation's servers, after the create committed: take
the servers still waiting, schedule and claim them in placement (never
with a transaction open), then mark each ACTIVE on its host or ERROR with
Nova's fault, in one transaction. Nova's min_count rule: when fewer than
min_count servers could be placed, none is built (the claims of those
placed are released). A build a worker left behind is taken up again
(``resume_builds``)."""

import logging
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from aggregates.addressing import services as addressing
from aggregates.flavors.models import Flavor
from aggregates.identity.caller import Caller
from aggregates.images.models import Image
from aggregates.scheduling import boot_request
from aggregates.scheduling import services as scheduling
from aggregates.servers import actions, notifications
from aggregates.servers.models import InstanceAction, InstanceActionEvent, Server

log = logging.getLogger(__name__)

BUILD_TASK = "corral.servers.build"
# A build not finished this long after it started (or was asked for) is
# taken up again by corral.servers.resume_builds: its worker died.
BUILD_STALE_AFTER = timedelta(minutes=1)
SPAWNING = "spawning"  # Nova's task state once the build has been taken up
NO_VALID_HOST = "No valid host was found. There are not enough hosts available."


def _hint_uuids(value: object) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [str(item) for item in items]


def _claim_build(reservation_id: str) -> list[Server]:
    """Take the reservation's servers still waiting to be scheduled."""
    with transaction.atomic():
        waiting = Server.objects.select_for_update().filter(
            reservation_id=reservation_id, vm_state=Server.BUILDING, task_state=Server.SCHEDULING
        )
        pks = list(waiting.values_list("pk", flat=True))
        Server.objects.filter(pk__in=pks).update(task_state=SPAWNING, updated_at=timezone.now())
    return list(Server.objects.filter(pk__in=pks).order_by("launch_index", "id"))


# A host name no host has (host names are letters, digits, '-', '.', '_'): a
# same_host hint whose servers are on no host lets no host pass, as in Nova.
NO_SUCH_HOST = "(none: the same_host servers are on no host)"


def _hint_hosts(uuids: Iterable[str], none_means_nowhere: bool = False) -> frozenset[str]:
    """The hosts of the servers a scheduler hint names."""
    parsed = [value for value in (boot_request.parse_uuid(item) for item in uuids) if value is not None]
    if not parsed:
        return frozenset()
    rows = Server.objects.filter(uuid__in=parsed, host__isnull=False).exclude(vm_state=Server.DELETED)
    hosts = frozenset(host for host in rows.values_list("host", flat=True) if host)
    if not hosts and none_means_nowhere:
        return frozenset({NO_SUCH_HOST})
    return hosts


def _group(hints: dict[str, Any], uuids: list[str]) -> "scheduling.GroupSpec | None":
    """The server group the ``group`` hint named (checked at create), as
    the scheduler sees it now; None without one, or when it was deleted."""
    group_uuids = _hint_uuids(hints.get("group"))
    return scheduling.group_spec(group_uuids[0], uuids) if group_uuids else None


def _fault(message: str, details: str) -> dict[str, Any]:
    return {
        "code": 500,
        "message": message,
        "details": details,
        "created": timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def build_servers(reservation_id: str) -> dict[str, int]:
    """Schedule and claim the reservation's servers still in BUILD, then mark
    each ACTIVE on its host or ERROR with Nova's fault. Returns counts."""
    servers = _claim_build(reservation_id)
    if not servers:
        return {"active": 0, "error": 0}
    creates = {server.pk: actions.latest(server, actions.CREATE) for server in servers}
    for server in servers:
        actions.event_start(creates[server.pk], actions.SCHEDULE_AND_BUILD)
    first = servers[0]
    request = first.build_request or {}
    flavor = Flavor.objects.filter(flavorid=first.flavorid).first()
    image_uuid = boot_request.parse_uuid(first.image_id) if first.image_id else None
    image = Image.objects.filter(pk=image_uuid).first() if image_uuid else None
    uuids = [str(server.uuid) for server in servers]
    placed: dict[str, scheduling.Placed] = {}
    failed = set(uuids)
    decision = None
    if flavor is None:
        message, details = f"Flavor {first.flavorid} could not be found.", "The flavor was deleted during the build."
    else:
        hints = first.scheduler_hints or {}
        try:
            spec = scheduling.request_spec_for(
                flavor,
                image,
                first.project_id,
                first.user_id,
                availability_zone=request.get("availability_zone"),
                forced_host=request.get("forced_host"),
                forced_node=request.get("forced_node"),
                num_instances=len(servers),
                same_host=_hint_hosts(_hint_uuids(hints.get("same_host")), none_means_nowhere=True),
                different_host=_hint_hosts(_hint_uuids(hints.get("different_host"))),
                group=_group(hints, uuids),
            )
            spec, addresses = addressing.for_boot(spec, request.get("networks"))
            result = scheduling.schedule_and_claim(spec, uuids, addresses)
        except Exception as exc:
            log.exception("scheduling reservation %s failed", reservation_id)
            for consumer_uuid in uuids:  # claims made before the failure (deleting none is fine)
                scheduling.release_quietly(consumer_uuid)
            message, details = f"Build of the servers failed: {exc}", f"{type(exc).__name__}: {exc}"
        else:
            decision = result.decision
            placed = {item.consumer_uuid: item for item in result.placed}
            message = result.fault_message or NO_VALID_HOST
            details = "The scheduler found no host for this server"
            if decision is not None:
                details += f"; its decision is scheduling decision {decision.uuid}"
            minimum = int(request.get("min_count") or 1)
            if len(placed) < minimum:
                for consumer_uuid in placed:
                    scheduling.release_quietly(consumer_uuid)
                placed = {}
            failed = set(uuids) - set(placed)
    gone = _finish_build(servers, creates, placed, failed, message, details, decision)
    for consumer_uuid in gone:
        scheduling.release_quietly(consumer_uuid)
    return {"active": len(placed) - len(gone), "error": len(failed)}


def _finish_build(
    servers: list[Server],
    creates: dict[int, InstanceAction | None],
    placed: dict[str, "scheduling.Placed"],
    failed: set[str],
    message: str,
    details: str,
    decision: Any,
) -> list[str]:
    """Write the outcome in one transaction (``creates``: each server's
    create action, by primary key). Returns the placed servers that were
    deleted meanwhile (their claims are to be released)."""
    caller = Caller.system("corral-build")
    gone = []
    now = timezone.now()
    with transaction.atomic():
        rows = {
            str(server.uuid): server
            for server in Server.objects.select_for_update().filter(pk__in=[server.pk for server in servers])
        }
        for server_uuid, server in rows.items():
            still_building = server.vm_state == Server.BUILDING and server.task_state == SPAWNING
            if server_uuid in placed:
                if not still_building:
                    gone.append(server_uuid)
                    addressing.free(server)
                    continue
                where = placed[server_uuid]
                server.host, server.node, server.node_uuid = where.host, where.node, str(where.node_uuid)
                server.availability_zone = where.availability_zone or ""
                server.vm_state, server.task_state, server.power_state = Server.ACTIVE, None, Server.POWER_RUNNING
                server.launched_at = server.updated_at = now
                server.decision = decision
                server.save()
                action = creates.get(server.pk)
                actions.event_finish(action, actions.SCHEDULE_AND_BUILD)
                actions.event_finish(action, actions.BUILD_AND_RUN, host=where.host)
                notifications.record(caller, "instance.create.end", server)
            elif server_uuid in failed and still_building:
                server.vm_state, server.task_state = Server.ERROR, None
                addressing.free(server)
                server.fault = _fault(message, details)
                server.decision = decision
                server.updated_at = now
                server.save()
                actions.event_finish(
                    creates.get(server.pk),
                    actions.SCHEDULE_AND_BUILD,
                    InstanceActionEvent.ERROR,
                    details=message,
                )
                notifications.record(caller, "instance.create.error", server)
    return gone


def resume_builds() -> int:
    """Builds left in BUILD for more than BUILD_STALE_AFTER (their worker
    died, or the broker was down): scheduled again. Returns how many."""
    cutoff = timezone.now() - BUILD_STALE_AFTER
    stale = Server.objects.filter(vm_state=Server.BUILDING, updated_at__lt=cutoff, deleted_at__isnull=True).filter(
        Q(task_state=Server.SCHEDULING) | Q(task_state=SPAWNING)
    )
    reservations = sorted(set(stale.values_list("reservation_id", flat=True)))
    for reservation_id in reservations:
        Server.objects.filter(
            reservation_id=reservation_id, vm_state=Server.BUILDING, task_state=SPAWNING, updated_at__lt=cutoff
        ).update(task_state=Server.SCHEDULING)
        try:
            build_servers(reservation_id)
        except Exception:
            log.exception("resuming the build of reservation %s failed", reservation_id)
    return len(reservations)
