"""The end of a cold migration or a resize. Confirming it (confirmResize):
the source allocation the migration's consumer holds is released, then the
server is ACTIVE (or stopped, as it was) and the migration confirmed;
corral.moves.confirm_resizes does it once RESIZE_CONFIRM_WINDOW has
passed. Reverting it (revertResize): that source allocation becomes the
server's again (its target's dropped) in one placement call, then the
server is back on its source with its old flavor."""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Conflict, Invalid, ServiceError, Unavailable
from aggregates.hosts.models import ComputeNode
from aggregates.identity.caller import Caller
from aggregates.moves import checks, notifications, running, states
from aggregates.moves.models import ServerMigration
from aggregates.placement_client import PlacementError
from aggregates.quotas import services as quotas
from aggregates.scheduling import services as scheduling
from aggregates.servers import actions
from aggregates.servers import services as server_services
from aggregates.servers.models import InstanceActionEvent, Server
from aggregates.zones import services as zones

log = logging.getLogger(__name__)


def confirm_resize(caller: Caller, server_uuid: str) -> ServerMigration:
    """confirmResize: release the source the migration holds, then the server
    is ACTIVE (or stopped, as it was) and the migration confirmed. No
    transaction may be open (placement is called between two)."""
    with events.failures_recorded(caller, "confirm_resize", "server", server_uuid):
        with transaction.atomic():
            server = checks.locked_server(caller, server_uuid)
            server_services.check_unlocked(caller, server)
            if server.vm_state != states.RESIZED:
                raise checks.invalid_state("confirmResize", server_uuid, "vm_state", server.vm_state)
            if server.task_state is not None:
                raise checks.invalid_state("confirmResize", server_uuid, "task_state", server.task_state)
            migration = _finished_migration(server)
            if not checks.service_is_up(migration.source_compute):
                raise Conflict("Service is unavailable at this time.")
            migration.status, migration.updated_at = ServerMigration.CONFIRMING, timezone.now()
            migration.save(update_fields=["status", "updated_at"])
            action = actions.start(caller, server, actions.CONFIRM_RESIZE, migration.updated_at)
            actions.event_start(action, actions.CONFIRM_RESIZE_EVENT, host=migration.source_compute)
        return _complete_confirm(caller, migration.pk)


def _complete_confirm(caller: Caller, migration_pk: int) -> ServerMigration:
    migration = ServerMigration.objects.get(pk=migration_pk)
    try:
        scheduling.release(str(migration.uuid))
    except (PlacementError, NotImplementedError) as exc:
        ServerMigration.objects.filter(pk=migration_pk, status=ServerMigration.CONFIRMING).update(
            status=ServerMigration.FINISHED, updated_at=timezone.now()
        )
        raise Unavailable(f"Releasing the source of the migration is not possible now: {exc}")
    with transaction.atomic():
        migration = ServerMigration.objects.select_for_update().get(pk=migration_pk)
        server = Server.objects.select_for_update().get(pk=migration.server_id)
        now = timezone.now()
        migration.status, migration.updated_at = ServerMigration.CONFIRMED, now
        migration.save(update_fields=["status", "updated_at"])
        if server.vm_state == states.RESIZED:
            server.vm_state = migration.request.get("old_vm_state") or Server.ACTIVE
            server.updated_at = now
            server.save(update_fields=["vm_state", "updated_at"])
        migration.server = server
        actions.event_finish(
            actions.latest(server, actions.CONFIRM_RESIZE), actions.CONFIRM_RESIZE_EVENT, host=migration.source_compute
        )
        notifications.record(caller, "instance.resize_confirm.end", server, migration, request_id=caller.request_id)
    return migration


NOT_RESIZED = "Instance has not been resized."


def _finished_migration(server: Server) -> ServerMigration:
    migration = (
        ServerMigration.objects.select_for_update()
        .filter(server=server, status=ServerMigration.FINISHED)
        .order_by("-created_at", "-id")
        .first()
    )
    if migration is None:
        raise Invalid(NOT_RESIZED)
    return migration


def revert_resize(caller: Caller, server_uuid: str) -> ServerMigration:
    """revertResize: the server's source allocation (held by the
    migration's consumer) becomes the server's again and its target's is
    dropped, in one placement call; then the server is on its source with
    its old flavor, ACTIVE (or stopped, as it was), and the migration
    reverted. No transaction may be open (placement is called between two)."""
    with events.failures_recorded(caller, "revert_resize", "server", server_uuid):
        with transaction.atomic():
            server = checks.locked_server(caller, server_uuid)
            checks.authorize(caller, "os_compute_api:servers:revert_resize", server)
            server_services.check_unlocked(caller, server)
            if server.vm_state != states.RESIZED:
                raise checks.invalid_state("revertResize", server_uuid, "vm_state", server.vm_state)
            if server.task_state is not None:
                raise checks.invalid_state("revertResize", server_uuid, "task_state", server.task_state)
            migration = _finished_migration(server)
            old_flavor = migration.request.get("old_flavor")
            if old_flavor:  # reverting a downsize grows the server again (Nova checks it too)
                quotas.check_resize(server.project_id, server.user_id or None, server.flavor, old_flavor["flavor"])
            now = timezone.now()
            migration.status, migration.updated_at = ServerMigration.REVERTING, now
            migration.save(update_fields=["status", "updated_at"])
            server.task_state, server.updated_at = states.RESIZE_REVERTING, now
            server.save(update_fields=["task_state", "updated_at"])
            action = actions.start(caller, server, actions.REVERT_RESIZE, now)
            actions.event_start(action, actions.REVERT_RESIZE_EVENT, host=migration.dest_compute)
        return _complete_revert(caller, migration.pk)


def _complete_revert(caller: Caller, migration_pk: int) -> ServerMigration:
    migration = ServerMigration.objects.select_related("server").get(pk=migration_pk)
    server_uuid = str(migration.server.uuid)
    try:
        scheduling.hand_back(str(migration.uuid), server_uuid)
    except (PlacementError, NotImplementedError) as exc:
        with transaction.atomic():
            ServerMigration.objects.filter(pk=migration_pk, status=ServerMigration.REVERTING).update(
                status=ServerMigration.FINISHED, updated_at=timezone.now()
            )
            Server.objects.filter(pk=migration.server_id, task_state=states.RESIZE_REVERTING).update(
                task_state=None, updated_at=timezone.now()
            )
            actions.event_finish(
                actions.latest(migration.server, actions.REVERT_RESIZE),
                actions.REVERT_RESIZE_EVENT,
                InstanceActionEvent.ERROR,
                details=str(exc),
            )
        raise Unavailable(f"Giving the server its source back is not possible now: {exc}")
    with transaction.atomic():
        migration = ServerMigration.objects.select_for_update().get(pk=migration_pk)
        server = Server.objects.select_for_update().get(pk=migration.server_id)
        now = timezone.now()
        source = (
            ComputeNode.objects.filter(host=migration.source_compute, hypervisor_hostname=migration.source_node).first()
            or ComputeNode.objects.filter(host=migration.source_compute).first()
        )
        server.host, server.node = migration.source_compute, migration.source_node
        server.node_uuid = str(source.uuid) if source is not None else server.node_uuid
        server.availability_zone = zones.zone_of_host(migration.source_compute or "") or ""
        old_flavor = migration.request.get("old_flavor")
        if old_flavor:
            server.flavorid, server.flavor = old_flavor["flavorid"], old_flavor["flavor"]
        server.vm_state = migration.request.get("old_vm_state") or Server.ACTIVE
        server.task_state, server.updated_at = None, now
        server.save()
        migration.status, migration.updated_at = ServerMigration.REVERTED, now
        migration.save(update_fields=["status", "updated_at"])
        migration.server = server
        action = actions.latest(server, actions.REVERT_RESIZE)
        running.record_readdress(action, server, migration.source_compute or "")
        actions.event_finish(action, actions.REVERT_RESIZE_EVENT, host=migration.dest_compute)
        actions.event_finish(action, actions.FINISH_REVERT_RESIZE_EVENT, host=migration.source_compute)
        notifications.record(caller, "instance.resize_revert.end", server, migration, request_id=caller.request_id)
    return migration


def confirm_resizes(now: datetime | None = None) -> int:
    """Confirm the cold migrations and resizes left in VERIFY_RESIZE longer than
    RESIZE_CONFIRM_WINDOW seconds (0: never), and release the sources held
    for servers deleted while resized. Returns how many were confirmed."""
    now = now or timezone.now()
    caller = Caller.system("corral-confirm-resizes")
    finished = ServerMigration.objects.filter(migration_type__in=states.RESIZING, status=ServerMigration.FINISHED)
    for migration in list(finished.filter(server__vm_state=Server.DELETED)):
        scheduling.release_quietly(str(migration.uuid))
        ServerMigration.objects.filter(pk=migration.pk, status=ServerMigration.FINISHED).update(
            status=ServerMigration.CONFIRMED, updated_at=now
        )
    window = int(getattr(settings, "RESIZE_CONFIRM_WINDOW", 0) or 0)
    if window <= 0:
        return 0
    due = finished.filter(server__vm_state=states.RESIZED, updated_at__lte=now - timedelta(seconds=window))
    confirmed = 0
    for server_uuid in list(due.values_list("server__uuid", flat=True).distinct()):
        try:
            confirm_resize(caller, str(server_uuid))
            confirmed += 1
        except ServiceError as exc:
            log.warning("could not confirm the resize of server %s: %s", server_uuid, exc.message)
    return confirmed
