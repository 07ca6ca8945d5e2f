"""The one runner of long jobs, whatever their kind: it claims a job under a
lease, fails it when its runner stopped too often, marks it started, runs
the kind's own work and ends the job (finished, or failed with a reason);
it resumes the jobs whose runner stopped (the drain) and starts a new job
outside the request. A kind of job gives its ``JobKind`` (model, task,
settings) and what running it means (``work``, ``finish``, ``fail``,
``started``)."""

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

from django.utils import timezone

from aggregates import after_commit
from aggregates.jobs import leases
from aggregates.jobs.leases import JobKind
from aggregates.jobs.models import LongJob

log = logging.getLogger(__name__)

J = TypeVar("J", bound=LongJob)


class JobFailed(Exception):
    """The job cannot go on: it is failed with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _nothing(job: LongJob) -> None:
    return None


class JobRunner(Generic[J]):
    """Runs the jobs of one kind. ``work(job, token)`` does the job under
    the runner's lease ``token`` (renewing it with ``leases.renew``; it
    raises ``JobFailed`` when the job cannot go on, ``LeaseLost`` when
    another runner took it); ``finish(job)`` ends a job whose work is done;
    ``fail(job, reason)`` ends one that cannot go on; ``started(job)`` runs
    once, when the job first starts."""

    def __init__(
        self,
        kind: JobKind,
        *,
        work: Callable[[J, str], None],
        finish: Callable[[J], J],
        fail: Callable[[J, str], J],
        started: Callable[[J], None] = _nothing,
    ) -> None:
        self.kind = kind
        self.work = work
        self.finish = finish
        self.fail = fail
        self.started = started
        # Without a broker there is no beat to drain: each job's thread drains too.
        self.catch_up = after_commit.CatchUp(
            f"Resuming the {kind.label}s left behind", self.drain, every=lambda: kind.lease.total_seconds()
        )

    def run_job(self, job_pk: int, work: Callable[[J, str], None] | None = None) -> J | None:
        """Run (or resume) one job to its end; None when another runner
        holds it or it is finished. ``work`` replaces the kind's own."""
        token = leases.worker_token()
        job: J | None = leases.claim(self.kind, job_pk, token)
        if job is None:
            return None
        if job.attempts > self.kind.max_attempts:
            return self.fail(job, f"the job's worker stopped {job.attempts - 1} times; giving up")
        if job.started_at is None:
            job.started_at = timezone.now()
            job.save(update_fields=["started_at"])
            self.started(job)
            log.info("Started %s %s", self.kind.label, job.uuid)
        else:
            log.info("Resumed %s %s (attempt %d)", self.kind.label, job.uuid, job.attempts)
        try:
            (work or self.work)(job, token)
        except JobFailed as failed:
            return self.fail(job, failed.reason)
        except leases.LeaseLost:
            log.warning("%s %s was taken over by another runner", self.kind.label, job.uuid)
            return None
        return self.finish(job)

    def drain(self) -> dict[str, int]:
        """Resume the jobs whose runner stopped and run the queued ones
        nobody started; a job whose runner stopped more than the kind's
        max attempts is failed with the reason."""
        return leases.drain(self.kind, self.run_job)

    def dispatch(self, job_pk: int) -> None:
        """Start the job once the transaction commits, outside the request:
        on a Celery worker when there is a broker; without one in a thread
        of this process, which then resumes the jobs left behind (at most
        once per lease). A job nothing could start stays queued for the
        drain."""
        label = self.kind.label
        after_commit.dispatch(
            lambda: self._run_here(job_pk),
            send=after_commit.task(self.kind.run_task, job_pk),
            thread=f"{label}-{job_pk}",
            failure=f"{label} {job_pk} failed or could not start; the drain will take it up",
        )

    def _run_here(self, job_pk: int) -> None:
        self.run_job(job_pk)
        self.catch_up.run_if_due()
