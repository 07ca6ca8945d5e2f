"""Celery tasks of servers: thin wrappers with explicit names that stay when
code moves (beat schedules name them)."""

from celery import shared_task

from aggregates.servers import build as builds
from aggregates.servers import deletion


@shared_task(name="corral.servers.build")
def build(reservation_id: str) -> dict[str, int]:
    """Schedule, claim and finish the build of one reservation's servers."""
    return builds.build_servers(reservation_id)


@shared_task(name="corral.servers.resume_builds")
def resume_builds() -> int:
    """Build again the servers left in BUILD by a worker that died (periodic)."""
    return builds.resume_builds()


@shared_task(name="corral.servers.finish_deletes")
def finish_deletes() -> int:
    """Release the allocations of servers left deleting, and mark them deleted (periodic)."""
    return deletion.finish_deletes()


@shared_task(name="corral.servers.reclaim_deleted")
def reclaim_deleted() -> int:
    """Delete the servers soft-deleted longer than RECLAIM_INSTANCE_INTERVAL (periodic; 0 = none)."""
    return deletion.reclaim_deleted()
