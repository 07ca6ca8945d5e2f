"""Celery tasks of image pre-caching: thin wrappers taking primary keys, with
explicit names that stay when code moves (beat schedules name them)."""

from celery import shared_task

from aggregates.precache import pins, running, schedules


@shared_task(name="corral.precache.run_job")
def run_job(job_pk: int) -> str | None:
    """Run (or resume) one image cache job."""
    job = running.run_job(job_pk)
    return job.status if job is not None else None


@shared_task(name="corral.precache.drain_jobs")
def drain_jobs() -> dict[str, int]:
    """Resume jobs whose worker stopped; start queued jobs nobody started (periodic)."""
    return running.drain_jobs()


@shared_task(name="corral.precache.scheduled_cache")
def scheduled_cache(aggregate_id: int, image_ids: list[str], schedule_name: str = "") -> str | None:
    """A recurring pre-cache that is due: request a job for it."""
    job = schedules.run_schedule(aggregate_id, image_ids, schedule_name)
    return str(job.uuid) if job is not None else None


@shared_task(name="corral.precache.recheck_pins")
def recheck_pins() -> dict[str, int]:
    """Re-check every aggregate's pinned images on its hosts (periodic)."""
    return pins.recheck_all()
