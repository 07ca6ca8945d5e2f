"""The end of a delete, after the request committed: release the server's
allocations in placement (never with a transaction open), then mark it
deleted. A release that failed is retried (``finish_deletes``)."""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from aggregates.addressing import services as addressing
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
        addressing.free(server)
        actions.event_finish(actions.latest(server, actions.DELETE), actions.TERMINATE, host=server.host)
        notifications.record(Caller.system("corral-delete"), "instance.delete.end", server)
    return True


def finish_deletes() -> int:
    """Retry the deletes whose release failed. Returns how many finished."""
    cutoff = timezone.now() - DELETE_RETRY_AFTER
    pks = Server.objects.filter(task_state=Server.DELETING, updated_at__lt=cutoff).values_list("pk", flat=True)
    return sum(1 for pk in list(pks) if finish_delete(pk))
