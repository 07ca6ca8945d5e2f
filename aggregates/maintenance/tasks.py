"""Celery tasks of host maintenance: thin wrappers taking primary keys, with
explicit names that stay when code moves (beat schedules name them)."""

from celery import shared_task

from aggregates.maintenance import running


@shared_task(name="corral.maintenance.run")
def run_job(job_pk: int) -> str | None:
    """Run (or resume) one maintenance job."""
    job = running.run_job(job_pk)
    return job.status if job is not None else None


@shared_task(name="corral.maintenance.drain")
def drain_jobs() -> dict[str, int]:
    """Resume jobs whose worker stopped; start queued jobs nobody started (periodic)."""
    return running.drain_jobs()
