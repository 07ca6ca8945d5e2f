"""Celery tasks of servers: thin wrappers with explicit names that stay when
code moves (beat schedules name them)."""

from celery import shared_task

from aggregates.servers import services


@shared_task(name="corral.servers.build")
def build(reservation_id: str) -> dict[str, int]:
    """Schedule, claim and finish the build of one reservation's servers."""
    return services.build_servers(reservation_id)


@shared_task(name="corral.servers.resume_builds")
def resume_builds() -> int:
    """Build again the servers left in BUILD by a worker that died (periodic)."""
    return services.resume_builds()


@shared_task(name="corral.servers.finish_deletes")
def finish_deletes() -> int:
    """Release the allocations of servers left deleting, and mark them deleted (periodic)."""
    return services.finish_deletes()
