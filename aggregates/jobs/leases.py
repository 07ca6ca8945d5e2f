"""How a long job runs outside the request and survives its worker: started
on a Celery worker (or, with no broker, a thread of this process), claimed
by one runner at a time under a lease it renews as it goes, and resumed by
the drain when the lease expires; a job whose runner stopped too often is
given up. Each kind of job names its model, task and settings in a
``JobKind``; its own module keeps what running it means."""

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import connection
from django.db.models import F, Q
from django.utils import timezone

from aggregates.jobs.models import LongJob

log = logging.getLogger(__name__)


class LeaseLost(Exception):
    """Another runner took the job (ours stalled past its lease)."""


@dataclass
class JobKind:
    model: type[LongJob]
    label: str  # "image cache job", "maintenance job"
    run_task: str  # the Celery task that runs one job (job pk)
    lease_setting: str  # seconds a lease lasts
    max_attempts_setting: str  # runs of one job before it is given up
    # Without a broker there is no beat to drain: each job's thread drains
    # too, at most once per lease (monotonic time of the last drain).
    last_eager_drain: list[float] = field(default_factory=lambda: [float("-inf")])

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=float(getattr(settings, self.lease_setting)))

    @property
    def max_attempts(self) -> int:
        return int(getattr(settings, self.max_attempts_setting))


def worker_token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def dispatch(kind: JobKind, job_pk: int, run_job: Callable[[int], Any], drain: Callable[[], Any]) -> None:
    """Start the job outside the request: a Celery worker when there is a
    broker; without one (eager Celery) a background thread of this process.
    If neither can be reached the job stays queued for the drain."""
    try:
        if current_app.conf.task_always_eager:
            threading.Thread(
                target=_run_in_thread, args=(kind, job_pk, run_job, drain), name=f"{kind.label}-{job_pk}", daemon=True
            ).start()
        else:
            current_app.send_task(kind.run_task, args=[job_pk])
    except Exception:  # the broker is down: the drain picks the job up
        log.exception("could not start %s %s; the drain will", kind.label, job_pk)


def _run_in_thread(kind: JobKind, job_pk: int, run_job: Callable[[int], Any], drain: Callable[[], Any]) -> None:
    try:
        run_job(job_pk)
        if time.monotonic() - kind.last_eager_drain[0] >= kind.lease.total_seconds():
            kind.last_eager_drain[0] = time.monotonic()
            drain()
    except Exception:
        log.exception("%s %s failed", kind.label, job_pk)
    finally:
        connection.close()


def claim(kind: JobKind, job_pk: int, token: str) -> Any:
    """Take the job (queued, or running with an expired lease) for this
    runner: the job row, or None when another runner holds it or it is
    finished."""
    model = kind.model
    now = timezone.now()
    claimable = Q(status=model.QUEUED) | Q(status=model.RUNNING, lease_expires_at__lt=now)
    claimed = (
        model._default_manager.filter(pk=job_pk)
        .filter(claimable)
        .update(status=model.RUNNING, worker=token, lease_expires_at=now + kind.lease, attempts=F("attempts") + 1)
    )
    return model._default_manager.filter(pk=job_pk).first() if claimed else None


def renew(kind: JobKind, job: LongJob, token: str, done: int) -> None:
    """Extend the runner's lease and record its progress; LeaseLost when
    another runner took the job meanwhile."""
    kept = kind.model._default_manager.filter(pk=job.pk, worker=token, status=kind.model.RUNNING).update(
        lease_expires_at=timezone.now() + kind.lease, done=done
    )
    if not kept:
        raise LeaseLost()
    job.done = done


def drain(kind: JobKind, run_job: Callable[[int], LongJob | None]) -> dict[str, int]:
    """Resume the running jobs whose runner stopped (expired lease) and run
    the queued ones nobody started (no broker, broker down); ``run_job``
    fails a job whose runner stopped too often."""
    model = kind.model
    now = timezone.now()
    stale_queued = Q(status=model.QUEUED, created_at__lt=now - kind.lease)
    expired = Q(status=model.RUNNING, lease_expires_at__lt=now)
    counts = {"resumed": 0, "failed": 0}
    stale = model._default_manager.filter(stale_queued | expired).order_by("id")
    for pk in list(stale.values_list("pk", flat=True)):
        job = run_job(pk)
        if job is None:
            continue
        counts["failed" if job.status == model.FAILED else "resumed"] += 1
    return counts
