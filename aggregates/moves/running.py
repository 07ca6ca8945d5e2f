"""Running an accepted move: mark it running, have the scheduler pick the
target and move the placement allocation there in one POST /allocations
(never with a transaction open; no hypervisor: a move is done when the
allocation has moved), then write the outcome in one transaction: the
server on its target, or back as it was on its source with the migration
in error and the scheduler's decision saying why."""

import logging
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from aggregates.addressing import services as addressing
from aggregates.errors import ServiceError
from aggregates.hosts.models import ComputeNode
from aggregates.identity.caller import Caller
from aggregates.moves import notifications, states
from aggregates.moves.models import ServerMigration
from aggregates.scheduling import services as scheduling
from aggregates.servers import actions, build
from aggregates.servers.models import InstanceAction, InstanceActionEvent, Server

log = logging.getLogger(__name__)

RUN_TASK = "corral.moves.run"


@dataclass
class MoveOutcome:
    moved: bool
    server_uuid: str
    source: str
    target: str | None
    migration_uuid: str
    decision_uuid: str | None
    message: str


def _outcome(migration: ServerMigration, moved: bool, target: str | None = None) -> MoveOutcome:
    return MoveOutcome(
        moved=moved,
        server_uuid=str(migration.server.uuid),
        source=migration.source_compute or "",
        target=target,
        migration_uuid=str(migration.uuid),
        decision_uuid=str(migration.decision.uuid) if migration.decision_id and migration.decision else None,
        message=migration.message,
    )


def _take(migration_pk: int) -> ServerMigration | None:
    """Mark an accepted migration running; None when it is not waiting (run
    already, or its server went away meanwhile)."""
    with transaction.atomic():
        migration = ServerMigration.objects.select_for_update().select_related("server").filter(pk=migration_pk).first()
        if migration is None:
            return None
        kind = migration.migration_type
        if migration.status != states.STATUS_ACCEPTED[kind]:
            return None
        server = Server.objects.select_for_update().get(pk=migration.server_id)
        now = timezone.now()
        if server.task_state != states.TASK_ACCEPTED[kind] or server.vm_state == Server.DELETED:
            migration.status, migration.updated_at = ServerMigration.FAILED, now
            migration.message = f"The server left {states.TASK_ACCEPTED[kind]} before the move ran."
            migration.save(update_fields=["status", "message", "updated_at"])
            return None
        migration.status, migration.updated_at = states.STATUS_RUNNING[kind], now
        migration.save(update_fields=["status", "updated_at"])
        server.task_state, server.updated_at = states.TASK_RUNNING[kind], now
        server.save(update_fields=["task_state", "updated_at"])
        actions.event_start(_action_of(migration, server), states.CONDUCTOR_EVENT[kind])
        migration.server = server
    return migration


def _action_of(migration: ServerMigration, server: Server) -> InstanceAction | None:
    """The instance action the request that asked for the move recorded."""
    kind = migration.migration_type
    return actions.latest(server, states.INSTANCE_ACTION[kind], migration.request.get("request_id"))


def run_move(migration_pk: int) -> MoveOutcome:
    """Schedule an accepted move and record its outcome (the task's body).
    No transaction may be open."""
    migration = _take(migration_pk)
    if migration is None:
        current = ServerMigration.objects.select_related("server", "decision").get(pk=migration_pk)
        return _outcome(current, moved=False)
    server = migration.server
    kind = migration.migration_type
    confirm = bool(migration.request.get("confirm"))
    hold_as = str(migration.uuid) if kind in states.RESIZING and not confirm else None
    new_flavor = migration.request.get("new_flavor") if kind == states.RESIZE else None
    try:
        spec = scheduling.spec_for_server(
            server,
            requested_host=migration.request.get("requested_host") or None,
            preferred_aggregates=frozenset(migration.request.get("preferred_aggregates") or ()),
            new_flavor=(new_flavor["flavorid"], new_flavor["flavor"]) if new_flavor else None,
            may_stay=bool(migration.request.get("same_host")),
        )
        spec, addresses = addressing.for_move(spec, server)
        result = scheduling.schedule_move(spec, str(server.uuid), hold_source_as=hold_as, side=addresses)
    except Exception as exc:
        log.exception("moving server %s (migration %s) failed", server.uuid, migration.uuid)
        message = exc.message if isinstance(exc, ServiceError) else f"{type(exc).__name__}: {exc}"
        return finish(migration_pk, None, None, f"The move failed: {message}", ServerMigration.FAILED)
    return finish(migration_pk, result.target, result.decision, result.fault_message, ServerMigration.ERROR)


READDRESS_EVENT = "compute_readdress"


def record_readdress(action: InstanceAction | None, server: Server, host: str) -> None:
    """The server's addresses on its new host (addressing.readdress),
    recorded as an event of the move's action when any changed."""
    changes = addressing.readdress(server, host)
    if changes:
        lost = any(" freed: " in change for change in changes)
        actions.event_start(action, READDRESS_EVENT, host=host)
        result = InstanceActionEvent.ERROR if lost else InstanceActionEvent.SUCCESS
        actions.event_finish(action, READDRESS_EVENT, result, host=host, details="; ".join(changes))


def _dest_ip(node_uuid: str) -> str | None:
    return ComputeNode.objects.filter(uuid=node_uuid).values_list("host_ip", flat=True).first()


def finish(
    migration_pk: int,
    target: scheduling.Placed | None,
    decision: Any,
    message: str,
    failed_status: str,
) -> MoveOutcome:
    """Write the outcome in one transaction; release after commit what a
    server deleted meanwhile would leave behind."""
    caller = Caller.system("corral-moves")
    release_after: list[str] = []
    moved = False
    now = timezone.now()
    with transaction.atomic():
        migration = ServerMigration.objects.select_for_update().get(pk=migration_pk)
        server = Server.objects.select_for_update().get(pk=migration.server_id)
        migration.server = server
        kind = migration.migration_type
        migration.decision = decision
        migration.updated_at = now
        gone = server.vm_state == Server.DELETED or server.task_state == Server.DELETING
        if target is not None and gone:
            migration.status = ServerMigration.FAILED
            migration.message = "The server was deleted while it moved."
            addressing.drop_reservations(server)
            release_after = [str(server.uuid), str(migration.uuid)]
            migration.save()
        elif target is not None:
            migration.dest_compute, migration.dest_node = target.host, target.node
            migration.dest_host = _dest_ip(target.node_uuid)
            migration.status, migration.message = states.STATUS_MOVED[kind], ""
            server.host, server.node, server.node_uuid = target.host, target.node, str(target.node_uuid)
            server.availability_zone = target.availability_zone or ""
            server.task_state = None
            server.decision = decision
            if kind == states.RESIZE:
                # Nova shows the new flavor while the resize waits to be confirmed.
                server.vm_state = states.RESIZED
                server.flavorid = migration.request["new_flavor"]["flavorid"]
                server.flavor = migration.request["new_flavor"]["flavor"]
            elif kind == states.COLD:
                server.vm_state = states.RESIZED
                if migration.request.get("confirm"):
                    server.vm_state = migration.request.get("old_vm_state") or Server.ACTIVE
                    migration.status = ServerMigration.CONFIRMED
            elif kind == states.EVACUATION and migration.request.get("target_state") == states.STOPPED:
                server.vm_state, server.power_state = states.STOPPED, Server.POWER_SHUTDOWN
            server.updated_at = now
            server.save()
            migration.save()
            action = _action_of(migration, server)
            actions.event_finish(action, states.CONDUCTOR_EVENT[kind])
            actions.event_finish(action, states.COMPUTE_EVENT[kind], host=target.host)
            record_readdress(action, server, target.host)
            moved = True
            notifications.record(caller, f"{states.EVENT[kind]}.end", server, migration)
        else:
            addressing.drop_reservations(server)  # a move that broke after taking its addresses
            migration.status = failed_status
            migration.message = message or build.NO_VALID_HOST
            if not gone:
                server.task_state = None
                server.updated_at = now
                server.save(update_fields=["task_state", "updated_at"])
            migration.save()
            actions.event_finish(
                _action_of(migration, server),
                states.CONDUCTOR_EVENT[kind],
                InstanceActionEvent.ERROR,
                details=migration.message,
            )
            notifications.record(caller, f"{states.EVENT[kind]}.error", server, migration)
        outcome = _outcome(migration, moved, migration.dest_compute if moved else None)
    for consumer_uuid in release_after:
        scheduling.release_quietly(consumer_uuid)
    return outcome


def fail(migration_pk: int, message: str) -> None:
    """A move that could not even start: the server back as it was."""
    try:
        migration = ServerMigration.objects.filter(pk=migration_pk).first()
        if migration is not None and migration.status == states.STATUS_ACCEPTED[migration.migration_type]:
            finish(migration_pk, None, None, message, ServerMigration.FAILED)
    except Exception:
        log.exception("could not mark migration %s failed", migration_pk)
