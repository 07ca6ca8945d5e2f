"""The end of a delete, after the request committed: release the server's
allocations in placement (never with a transaction open), then mark it
deleted. A release that failed is retried (``finish_deletes``). Servers
soft-deleted longer than RECLAIM_INSTANCE_INTERVAL are deleted
(``reclaim_deleted``)."""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from aggregates.identity.caller import Caller
from aggregates.placement_client import PlacementError
from aggregates.scheduling import services as scheduling
from aggregates.servers import actions, notifications
from aggregates.servers.models import Server

log = logging.getLogger(__name__)

# A delete whose release failed is retried by corral.servers.finish_deletes
# once it is this old (the request's own attempt comes first).
DELETE_RETRY_AFTER = timedelta(seconds=10)


def finish_delete(server_pk: int) -> bool:
    """Release the server's allocations, then mark it deleted. False (the
    server left deleting) when placement could not release them."""
    server = Server.objects.filter(pk=server_pk, task_state=Server.DELETING).first()
    if server is None:
        return False
    try:
        scheduling.release(str(server.uuid))
    except (PlacementError, NotImplementedError) as exc:
        log.warning(
            "could not release the allocations of server %s (%s); corral.servers.finish_deletes will retry",
            server.uuid,
            exc,
        )
        return False
    now = timezone.now()
    with transaction.atomic():
        server = Server.objects.select_for_update().get(pk=server_pk)
        if server.vm_state == Server.DELETED:
            return True
        server.vm_state, server.task_state, server.power_state = Server.DELETED, None, Server.POWER_NOSTATE
        server.deleted_at = server.terminated_at = server.updated_at = now
        server.save()
        actions.event_finish(actions.latest(server, actions.DELETE), actions.TERMINATE, host=server.host)
        notifications.record(Caller.system("corral-delete"), "instance.delete.end", server)
    return True


def finish_deletes() -> int:
    """Retry the deletes whose release failed. Returns how many finished."""
    cutoff = timezone.now() - DELETE_RETRY_AFTER
    pks = Server.objects.filter(task_state=Server.DELETING, updated_at__lt=cutoff).values_list("pk", flat=True)
    return sum(1 for pk in list(pks) if finish_delete(pk))


def reclaim_deleted(now: datetime | None = None) -> int:
    """Delete the servers soft-deleted more than RECLAIM_INSTANCE_INTERVAL
    seconds ago (Nova's _reclaim_queued_deletes; 0: none are soft-deleted,
    nothing to do). Returns how many were deleted."""
    interval = int(settings.RECLAIM_INSTANCE_INTERVAL or 0)
    if interval <= 0:
        return 0
    now = now or timezone.now()
    due = Server.objects.filter(
        vm_state=Server.SOFT_DELETED, task_state__isnull=True, terminated_at__lte=now - timedelta(seconds=interval)
    )
    reclaimed = 0
    for pk in list(due.values_list("pk", flat=True)):
        with transaction.atomic():
            server = Server.objects.select_for_update().get(pk=pk)
            if server.vm_state != Server.SOFT_DELETED or server.task_state is not None:
                continue
            server.task_state, server.updated_at = Server.DELETING, timezone.now()
            server.save(update_fields=["task_state", "updated_at"])
            action = actions.start(Caller.system("corral-reclaim"), server, actions.DELETE)
            actions.event_start(action, actions.TERMINATE, host=server.host)
        if finish_delete(pk):
            reclaimed += 1
    return reclaimed
