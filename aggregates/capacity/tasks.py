"""Celery tasks of capacity by flavor: thin wrappers with explicit names that
stay when code moves (the beat schedule names them)."""

from celery import shared_task

from aggregates.capacity import services


@shared_task(name="corral.capacity.sample")
def sample() -> int:
    """Record capacity by flavor when a sample is due and prune old ones (periodic)."""
    return services.sample()
