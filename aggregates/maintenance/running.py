"""The maintenance job's runner: it moves every server of its items (off
the host for a start, back to it for a stop with rebalance), following
the drain's plan where it can, and records each outcome.

The runner is the only writer of a running job's rows. Moves run in
threads of their own (at most MAINTENANCE_CONCURRENCY at a time, each with
its own database connection and no transaction open, as the move requires)
and hand their outcome back to the runner's thread, which records it and
renews the job's lease. An item is ``moving`` only while a live runner
moves it: a resumed job first settles such items from where the server is
(moved when it left its source, else pending again).
"""

from __future__ import annotations

import contextvars
import logging
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import ServiceError
from aggregates.identity.caller import Caller
from aggregates.jobs import leases, runner
from aggregates.mirroring import applier
from aggregates.mirroring.models import ProviderSyncRequest
from aggregates.moves import services as moves
from aggregates.moves.running import MoveOutcome
from aggregates.servers.models import Server

from . import planning
from .models import MaintenanceItem, MaintenanceJob

log = logging.getLogger(__name__)

RUN_TASK = "corral.maintenance.run"
DRAIN_TASK = "corral.maintenance.drain"
# Move kinds of the moves module, by strategy.
KINDS = {MaintenanceJob.LIVE: "live-migration", MaintenanceJob.COLD: "migration"}

KIND = leases.JobKind(
    model=MaintenanceJob,
    label="maintenance job",
    run_task=RUN_TASK,
    lease_setting="MAINTENANCE_LEASE_SECONDS",
    max_attempts_setting="MAINTENANCE_MAX_ATTEMPTS",
)


def _caller(job: MaintenanceJob) -> Caller:
    return Caller.system("maintenance", request_id=job.request_id)


def _payload(job: MaintenanceJob) -> dict[str, Any]:
    return {
        "job_id": str(job.uuid),
        "host": job.host,
        "action": job.action,
        "status": job.status,
        "strategy": job.strategy,
        "rebalance": job.rebalance,
        "total": job.total,
        "done": job.done,
    }


def record(job: MaintenanceJob, event_type: str, caller: Caller | None = None, **extra: Any) -> None:
    """An audit event of ``job`` (as the caller who asked, else as the system)."""
    events.record(
        caller or _caller(job),
        event_type,
        object_type="host",
        object_id=job.host,
        object_uuid=job.uuid,
        payload={**_payload(job), **extra},
    )


@dataclass
class _Outcome:
    status: str
    target: str | None = None
    migration_uuid: str = ""
    decision_uuid: str = ""
    message: str = ""


def _move(caller: Caller, item: MaintenanceItem, kind: str, preferred: frozenset[str], planned: str | None) -> _Outcome:
    """Move one server (in a thread of the runner's pool, no transaction
    open): to its planned target when the drain has one (the scheduler still
    checks it there), and freely scheduled when that target cannot take it."""
    try:
        server = (
            Server.objects.filter(uuid=item.server_uuid, deleted_at__isnull=True)
            .exclude(vm_state=Server.DELETED)
            .first()
        )
        if server is None:
            return _Outcome(MaintenanceItem.SKIPPED, message="The server was deleted.")
        if server.host != item.source:
            return _Outcome(
                MaintenanceItem.SKIPPED, server.host, message=f"The server is on {server.host}, not on {item.source}."
            )
        if settings.MAINTENANCE_SIMULATED_DELAY:
            time.sleep(settings.MAINTENANCE_SIMULATED_DELAY)
        outcome = None
        if planned and not item.requested_host:
            try:
                outcome = _move_server(caller, item, kind, preferred, planned)
            except ServiceError as refused:
                log.info(
                    "planned move of %s to %s refused (%s); scheduling it freely", item.server_uuid, planned, refused
                )
            if outcome is not None and not outcome.moved:
                outcome = None
        if outcome is None:
            outcome = _move_server(caller, item, kind, preferred, item.requested_host)
        return _Outcome(
            MaintenanceItem.MOVED if outcome.moved else MaintenanceItem.FAILED,
            outcome.target if outcome.moved else None,
            outcome.migration_uuid or "",
            outcome.decision_uuid or "",
            outcome.message or "",
        )
    except ServiceError as refused:
        return _Outcome(MaintenanceItem.FAILED, message=refused.message)
    except Exception as exc:  # noqa: BLE001 - one server's failure is reported, the drain goes on
        log.exception("moving server %s off %s failed", item.server_uuid, item.source)
        return _Outcome(MaintenanceItem.FAILED, message=f"The move failed: {type(exc).__name__}: {exc}")
    finally:
        connection.close()


def _move_server(
    caller: Caller, item: MaintenanceItem, kind: str, preferred: frozenset[str], host: str | None
) -> MoveOutcome:
    if kind == KINDS[MaintenanceJob.LIVE] and _stopped(item):
        kind = KINDS[MaintenanceJob.COLD]  # a stopped server cannot live-migrate: cold, as Nova's operators do
    return moves.move_server(
        caller,
        str(item.server_uuid),
        kind,
        requested_host=host,
        preferred_aggregates=preferred,
        confirm=kind == KINDS[MaintenanceJob.COLD],
        initiator="maintenance",
    )


def _stopped(item: MaintenanceItem) -> bool:
    return Server.objects.filter(uuid=item.server_uuid, vm_state=Server.STOPPED).exists()


class _Runner:
    def __init__(self, job: MaintenanceJob, token: str) -> None:
        self.job = job
        self.token = token
        self.renewed = time.monotonic()
        self.caller = _caller(job)
        self.kind = KINDS.get(job.strategy, KINDS[MaintenanceJob.LIVE])
        self.preferred = (
            planning.aggregate_uuids_of(job.host)
            if job.action == MaintenanceJob.START and job.prefer_aggregate_peers
            else frozenset()
        )
        concurrency = max(1, int(settings.MAINTENANCE_CONCURRENCY))
        # SQLite serialises writers: one move at a time there.
        self.concurrency = 1 if connection.vendor == "sqlite" else concurrency

    def heartbeat(self, force: bool = False) -> None:
        if not force and time.monotonic() - self.renewed < settings.MAINTENANCE_LEASE_SECONDS / 4:
            return
        done = MaintenanceItem.objects.filter(job=self.job, status__in=MaintenanceItem.FINISHED).count()
        leases.renew(KIND, self.job, self.token, done)
        self.renewed = time.monotonic()

    def settle_interrupted(self) -> None:
        """Items a dead runner left moving: moved when the server left its
        source (its move was recorded), else pending again."""
        for item in MaintenanceItem.objects.filter(job=self.job, status=MaintenanceItem.MOVING):
            server = Server.objects.filter(uuid=item.server_uuid).first()
            gone = server is None or server.deleted_at is not None or server.vm_state == Server.DELETED
            if gone:
                self.finish(item, _Outcome(MaintenanceItem.SKIPPED, message="The server was deleted."))
            elif server is not None and server.host != item.source:
                message = "Moved before the job's worker stopped."
                self.finish(item, _Outcome(MaintenanceItem.MOVED, server.host, message=message))
            else:
                MaintenanceItem.objects.filter(pk=item.pk, status=MaintenanceItem.MOVING).update(
                    status=MaintenanceItem.PENDING, started_at=None
                )

    def finish(self, item: MaintenanceItem, outcome: _Outcome) -> None:
        MaintenanceItem.objects.filter(pk=item.pk).exclude(status__in=MaintenanceItem.FINISHED).update(
            status=outcome.status,
            target=outcome.target,
            migration_uuid=outcome.migration_uuid,
            decision_uuid=outcome.decision_uuid,
            message=outcome.message,
            finished_at=timezone.now(),
        )
        self.job.done = MaintenanceItem.objects.filter(job=self.job, status__in=MaintenanceItem.FINISHED).count()
        MaintenanceJob.objects.filter(pk=self.job.pk, worker=self.token).update(done=self.job.done)
        record(
            self.job,
            "compute.maintenance.progress",
            server={
                "id": str(item.server_uuid),
                "name": item.name,
                "source": item.source,
                "target": outcome.target,
                "status": outcome.status,
                "explanation": outcome.message or None,
            },
        )

    def run(self) -> None:
        self.settle_interrupted()
        if self.job.action == MaintenanceJob.STOP:
            self.enabled_in_placement()
        items = list(MaintenanceItem.objects.filter(job=self.job, status=MaintenanceItem.PENDING))
        targets = self.plan(items)
        pending = iter(items)
        running: dict[Future[_Outcome], MaintenanceItem] = {}
        more = True
        lost = False
        wait_for = max(0.05, settings.MAINTENANCE_LEASE_SECONDS / 4)
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"drain-{self.job.pk}") as pool:
            while more or running:
                while more and not lost and len(running) < self.concurrency:
                    item = next(pending, None)
                    if item is None:
                        more = False
                        break
                    MaintenanceItem.objects.filter(pk=item.pk).update(
                        status=MaintenanceItem.MOVING, started_at=timezone.now()
                    )
                    target = targets.get(str(item.server_uuid))
                    # Each move in its pool thread keeps the job's context (its request ids).
                    context = contextvars.copy_context()
                    move = pool.submit(context.run, _move, self.caller, item, self.kind, self.preferred, target)
                    running[move] = item
                if not running:
                    break
                finished, _ = wait(list(running), timeout=wait_for, return_when=FIRST_COMPLETED)
                for future in finished:
                    self.finish(running.pop(future), future.result())
                try:
                    self.heartbeat()
                except leases.LeaseLost:
                    lost, more = True, False
        if lost:
            raise leases.LeaseLost()

    def plan(self, items: list[MaintenanceItem]) -> dict[str, str]:
        """A drain's targets, planned at once (one scheduling decision per
        kind of server, each counting those planned before it) rather than
        one full decision per move; server uuid -> planned target."""
        if self.job.action != MaintenanceJob.START or not items:
            return {}
        servers = list(
            Server.objects.filter(
                uuid__in=[item.server_uuid for item in items], host=self.job.host, deleted_at__isnull=True
            )
            .exclude(vm_state=Server.DELETED)
            .order_by("created_at", "id")
        )
        try:
            planned = planning.plan_moves(servers, emptied={self.job.host}, preferred_of=lambda server: self.preferred)
        except Exception:  # noqa: BLE001 - without a plan each move is scheduled on its own
            log.exception("planning the drain of %s failed; each move is scheduled on its own", self.job.host)
            return {}
        return {move.server_uuid: move.target for move in planned if move.target}

    def enabled_in_placement(self) -> None:
        """Before moving servers back: the host's providers lose
        COMPUTE_STATUS_DISABLED now rather than when the outbox gets to it."""
        rows = list(ProviderSyncRequest.objects.filter(host=self.job.host, status=ProviderSyncRequest.PENDING))
        if rows:
            try:
                applier.apply_rows(rows)
            except Exception:  # noqa: BLE001 - the moves explain what placement refuses
                log.exception("could not apply the provider rows of %s", self.job.host)


def _work(job: MaintenanceJob, token: str) -> None:
    _Runner(job, token).run()


def _finish(job: MaintenanceJob) -> MaintenanceJob:
    items = MaintenanceItem.objects.filter(job=job)
    failed = items.filter(status=MaintenanceItem.FAILED).count()
    job.status = MaintenanceJob.COMPLETED_WITH_ERRORS if failed else MaintenanceJob.COMPLETED
    job.done = items.filter(status__in=MaintenanceItem.FINISHED).count()
    job.finished_at = timezone.now()
    job.lease_expires_at = None
    job.save(update_fields=["status", "done", "finished_at", "lease_expires_at"])
    moved = items.filter(status=MaintenanceItem.MOVED).count()
    skipped = items.filter(status=MaintenanceItem.SKIPPED).count()
    record(job, "compute.maintenance.end", moved=moved, failed=failed, skipped=skipped)
    return job


def _fail(job: MaintenanceJob, reason: str) -> MaintenanceJob:
    """The job cannot go on: its unfinished items fail with the reason (each
    server stays where it is), and so does the job."""
    now = timezone.now()
    with transaction.atomic():
        MaintenanceItem.objects.filter(job=job).exclude(status__in=MaintenanceItem.FINISHED).update(
            status=MaintenanceItem.FAILED, message=reason, finished_at=now
        )
        job.status = MaintenanceJob.FAILED
        job.error = reason
        job.done = job.total
        job.finished_at = now
        job.lease_expires_at = None
        job.save(update_fields=["status", "error", "done", "finished_at", "lease_expires_at"])
    record(job, "compute.maintenance.end", error=reason)
    return job


RUNNER = runner.JobRunner(KIND, work=_work, finish=_finish, fail=_fail)


def run_job(job_pk: int) -> MaintenanceJob | None:
    """Run (or resume) one job to its end; None when another runner holds it
    or it is finished."""
    return RUNNER.run_job(job_pk)


def drain_jobs() -> dict[str, int]:
    """Resume the jobs whose runner stopped and run the queued ones nobody
    started; a job whose runner stopped MAINTENANCE_MAX_ATTEMPTS times fails
    with the reason."""
    return RUNNER.drain()


def dispatch(job_pk: int) -> None:
    """Run the job once the transaction commits, outside the request (a
    worker, or a thread without a broker)."""
    RUNNER.dispatch(job_pk)
