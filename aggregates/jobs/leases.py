"""How a long job survives its worker: claimed by one runner at a time
under a lease it renews as it goes, and resumed by the drain when the lease
expires. Each kind of job names its model, task and settings in a
``JobKind``; ``runner`` runs it, its own module keeps what running it
means. A role only one process may have (the beat) is held the same way:
``hold`` takes a named lease when it is free or expired and renews it for
its holder, ``let_go`` frees it."""

import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from aggregates.jobs.models import Lease, LongJob


class LeaseLost(Exception):
    """Another runner took the job (ours stalled past its lease)."""


@dataclass
class JobKind:
    model: type[LongJob]
    label: str  # "image cache job", "maintenance job"
    run_task: str  # the Celery task that runs one job (job pk)
    lease_setting: str  # seconds a lease lasts
    max_attempts_setting: str  # runs of one job before it is given up

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=float(getattr(settings, self.lease_setting)))

    @property
    def max_attempts(self) -> int:
        return int(getattr(settings, self.max_attempts_setting))


def worker_token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


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


def hold(name: str, token: str, seconds: float) -> bool:
    """Take the lease ``name`` for ``seconds`` (free, expired, or already
    this holder's: then renewed); False while another holder has it. One
    conditional update, as ``claim``: of two processes asking at once, one
    gets it."""
    now = timezone.now()
    Lease.objects.get_or_create(name=name, defaults={"expires_at": now})
    taken = (
        Lease.objects.filter(name=name)
        .filter(Q(holder=token) | Q(expires_at__lte=now))
        .update(holder=token, expires_at=now + timedelta(seconds=seconds))
    )
    return bool(taken)


def holder_of(name: str) -> Lease | None:
    """The lease ``name`` as it stands (who holds it, until when)."""
    return Lease.objects.filter(name=name).first()


def let_go(name: str, token: str) -> bool:
    """Free the lease if this holder has it, so that the next process to ask takes it at once."""
    return bool(Lease.objects.filter(name=name, holder=token).update(holder="", expires_at=timezone.now()))
