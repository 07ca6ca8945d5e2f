"""Moves a dead worker left behind: an accepted move never taken is run;
a running one is settled from where placement holds the server (moved
when its allocation is on another node, failed when it is still on its
source). Every server ends on its source or its target, with its
allocation where it is."""

from datetime import datetime, timedelta

from django.utils import timezone

from aggregates.hosts.models import ComputeNode
from aggregates.moves import running, states
from aggregates.moves.models import ServerMigration
from aggregates.placement_client import PlacementError, client
from aggregates.scheduling import services as scheduling
from aggregates.servers.models import Server
from aggregates.zones import services as zones

# An accepted or running move untouched this long lost its worker.
STALE_AFTER = timedelta(minutes=2)


def _where_allocated(server: Server) -> ComputeNode | None:
    """The compute node holding the server's allocation now (None: none, or
    placement cannot say)."""
    try:
        held = client().consumer_allocations(server.uuid)
    except PlacementError:
        return None
    providers = list(held.get("allocations", {}))
    return ComputeNode.objects.filter(uuid__in=providers).first() if providers else None


def resume_moves(now: datetime | None = None) -> dict[str, int]:
    """Finish the moves whose worker died: an accepted move never taken is
    run now; a running one is settled from where placement holds the
    server: on another node it moved (recorded as moved there), on its
    source it did not (the move failed, the server stays). Every server ends
    on its source or its target, with its allocation where it is."""
    cutoff = (now or timezone.now()) - STALE_AFTER
    counts = {"run": 0, "moved": 0, "failed": 0}
    stale = ServerMigration.objects.filter(updated_at__lt=cutoff).select_related("server")
    for migration in list(stale.filter(status__in=set(states.STATUS_ACCEPTED.values())).order_by("id")):
        if migration.status == states.STATUS_ACCEPTED[migration.migration_type]:
            running.run_move(migration.pk)
            counts["run"] += 1
    for migration in list(stale.filter(status__in=set(states.STATUS_RUNNING.values())).order_by("id")):
        kind = migration.migration_type
        if migration.status != states.STATUS_RUNNING[kind]:
            continue
        server = migration.server
        node = _where_allocated(server)
        if node is not None and str(node.uuid) != server.node_uuid:
            zone = zones.zone_of_host(node.host)
            target = scheduling.Placed(str(server.uuid), node.host, node.hypervisor_hostname, str(node.uuid), zone)
            running.finish(migration.pk, target, migration.decision, "", ServerMigration.FAILED)
            counts["moved"] += 1
        else:
            message = "The worker moving the server stopped before the move; the server stayed on its source."
            running.finish(migration.pk, None, migration.decision, message, ServerMigration.FAILED)
            counts["failed"] += 1
    return counts
