"""The image cache job's runner: it fans the job out to the hosts through
the cache driver, resumes jobs whose worker died (the drain), and is
started after the request commits.

The runner is the only writer of a running job: driver calls happen in
threads of their own (at most IMAGE_CACHE_CONCURRENCY at a time, each given
IMAGE_CACHE_HOST_TIMEOUT) and report through a queue; the runner's thread
writes every row and renews the job's lease as it goes."""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.host_aggregates import services as aggregate_services
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.caller import Caller
from aggregates.images.models import Image
from aggregates.jobs import leases, runner

from . import drivers
from .drivers import CacheDriver, DriverUnavailable, HostTarget, ImageResult, ImageToCache
from .models import ImageCacheHost, ImageCacheJob, ImageCacheResult

log = logging.getLogger(__name__)

RUN_TASK = "corral.precache.run_job"
PUBLISHER_CALLER = "image-cache"

KIND = leases.JobKind(
    model=ImageCacheJob,
    label="image cache job",
    run_task=RUN_TASK,
    lease_setting="IMAGE_CACHE_LEASE_SECONDS",
    max_attempts_setting="IMAGE_CACHE_MAX_ATTEMPTS",
)


def _caller(job: ImageCacheJob) -> Caller:
    return Caller.system(PUBLISHER_CALLER, request_id=job.request_id)


def _aggregate_payload(job: ImageCacheJob) -> dict[str, Any]:
    aggregate = Aggregate.objects.filter(pk=job.aggregate_id).first()
    if aggregate is not None:
        return aggregate_services.snapshot(aggregate)
    return {"id": job.aggregate_id, "uuid": str(job.aggregate_uuid), "name": job.aggregate_name, "hosts": None}


def _record(job: ImageCacheJob, event_type: str, payload: dict[str, Any]) -> None:
    events.record(
        _caller(job),
        event_type,
        object_type="aggregate",
        object_id=job.aggregate_id,
        object_uuid=job.aggregate_uuid,
        payload={**payload, "job_id": str(job.uuid)},
    )


@dataclass
class _Active:
    item: ImageCacheHost
    deadline: float
    remaining: list[str]


class _Runner:
    def __init__(self, job: ImageCacheJob, token: str, driver: CacheDriver) -> None:
        self.job = job
        self.token = token
        self.driver = driver
        self.timeout = float(settings.IMAGE_CACHE_HOST_TIMEOUT)
        self.concurrency = max(1, int(settings.IMAGE_CACHE_CONCURRENCY))
        self.reports: queue.Queue[tuple[str, int, Any]] = queue.Queue()
        self.renewed = time.monotonic()
        self.images = self._images()

    def _images(self) -> dict[str, ImageToCache]:
        found = {str(image.id): image for image in Image.objects.filter(pk__in=self.job.image_ids)}
        out = {}
        for image_id in self.job.image_ids:
            image = found.get(image_id)
            out[image_id] = ImageToCache(
                id=image_id,
                name=image.name if image else None,
                size=image.size if image else None,
                os_hash_algo=image.os_hash_algo if image else None,
                os_hash_value=image.os_hash_value if image else None,
                download_path=f"/image/v2/images/{image_id}/file",
                pinned=self.job.pinned,
            )
        return out

    # rows

    def heartbeat(self, force: bool = False) -> None:
        if not force and time.monotonic() - self.renewed < settings.IMAGE_CACHE_LEASE_SECONDS / 4:
            return
        done = ImageCacheResult.objects.filter(host_item__job=self.job, status__in=ImageCacheResult.FINISHED).count()
        leases.renew(KIND, self.job, self.token, done)
        self.renewed = time.monotonic()

    def finish_host(self, item: ImageCacheHost, status: str, reason: str = "") -> None:
        index = ImageCacheHost.objects.filter(job=self.job, finished_index__isnull=False).count() + 1
        item.status = status
        item.reason = reason
        item.finished_index = index
        item.finished_at = timezone.now()
        item.save(update_fields=["status", "reason", "finished_index", "finished_at"])
        results = list(item.image_items.all())
        _record(
            self.job,
            "aggregate.cache_images.progress",
            {
                "id": self.job.aggregate_id,
                "uuid": str(self.job.aggregate_uuid),
                "name": self.job.aggregate_name,
                "host": item.host,
                "images_cached": [str(r.image_id) for r in results if r.status in ImageCacheResult.SUCCEEDED],
                "images_failed": [str(r.image_id) for r in results if r.status not in ImageCacheResult.SUCCEEDED],
                "index": index,
                "total": ImageCacheHost.objects.filter(job=self.job).count(),
            },
        )
        self.heartbeat(force=True)

    def close_unfinished(self, item: ImageCacheHost, status: str, error: str) -> None:
        ImageCacheResult.objects.filter(host_item=item).exclude(status__in=ImageCacheResult.FINISHED).update(
            status=status, error=error, finished_at=timezone.now()
        )

    def apply(self, item: ImageCacheHost, result: ImageResult) -> None:
        status = result.status if result.status in ImageCacheResult.FINISHED else ImageCacheResult.ERROR
        error = result.error if status == ImageCacheResult.ERROR else ""
        if result.status not in ImageCacheResult.FINISHED:
            error = f"the driver answered an unknown status {result.status!r}"
        ImageCacheResult.objects.filter(host_item=item, image_id=result.image_id).exclude(
            status__in=ImageCacheResult.FINISHED
        ).update(
            status=status,
            error=error or "",
            bytes=result.bytes,
            seconds=result.seconds,
            finished_at=timezone.now(),
        )
        following = (
            ImageCacheResult.objects.filter(host_item=item, status=ImageCacheResult.PENDING).order_by("id").first()
        )
        if following is not None:
            ImageCacheResult.objects.filter(pk=following.pk).update(status=ImageCacheResult.CACHING)
        self.heartbeat(force=True)  # the job's done count follows every image

    # the run

    def skip_down_hosts(self, items: list[ImageCacheHost]) -> list[ImageCacheHost]:
        hosts = [item.host for item in items]
        services = {s.host: s for s in Service.objects.filter(binary=Service.COMPUTE, host__in=hosts)}
        up = set(Service.objects.filter(binary=Service.COMPUTE, host__in=hosts).up().values_list("host", flat=True))
        runnable = []
        for item in items:
            service = services.get(item.host)
            if item.host in up:
                runnable.append(item)
                continue
            if service is None:
                reason = "the host has no compute service"
            elif service.forced_down:
                reason = "the compute service is forced down"
            else:
                reason = "the compute service is down"
            self.close_unfinished(item, ImageCacheResult.SKIPPED, reason)
            self.finish_host(item, ImageCacheHost.SKIPPED, reason)
        return runnable

    def start_host(self, item: ImageCacheHost) -> _Active:
        pending = list(item.image_items.exclude(status__in=ImageCacheResult.FINISHED).order_by("id"))
        item.status = ImageCacheHost.CACHING
        item.started_at = timezone.now()
        item.save(update_fields=["status", "started_at"])
        if pending:
            ImageCacheResult.objects.filter(pk=pending[0].pk).update(status=ImageCacheResult.CACHING)
        node = ComputeNode.objects.filter(host=item.host).order_by("id").first()
        target = HostTarget(
            host=item.host,
            address=node.host_ip if node else None,
            agent_url=getattr(node, "agent_url", "") or "" if node else "",
        )
        images = [self.images[str(row.image_id)] for row in pending]
        pk = item.pk
        reports = self.reports
        driver = self.driver
        timeout = self.timeout

        def work() -> None:
            try:
                results = driver.cache(target, images, timeout, lambda r: reports.put(("image", pk, r)))
                reports.put(("host", pk, results))
            except Exception as exc:  # a driver's failure is the host's error
                reports.put(("failed", pk, str(exc) or type(exc).__name__))

        context = contextvars.copy_context()  # the job's request ids, in the host's thread
        threading.Thread(target=context.run, args=(work,), name=f"image-cache-host-{item.host}", daemon=True).start()
        return _Active(item, time.monotonic() + timeout, [str(row.image_id) for row in pending])

    def run(self) -> None:
        items = list(self.job.host_items.exclude(status__in=ImageCacheHost.FINISHED).order_by("id"))
        # A resumed job starts its unfinished hosts over (their finished images stay).
        for item in items:
            item.image_items.filter(status=ImageCacheResult.CACHING).update(status=ImageCacheResult.PENDING)
        waiting = self.skip_down_hosts(items)
        active: dict[int, _Active] = {}
        while waiting or active:
            while waiting and len(active) < self.concurrency:
                item = waiting.pop(0)
                active[item.pk] = self.start_host(item)
            now = time.monotonic()
            wait = min(a.deadline for a in active.values()) - now
            wait = max(0.0, min(wait, settings.IMAGE_CACHE_LEASE_SECONDS / 4, 1.0))
            try:
                kind, pk, payload = self.reports.get(timeout=wait)
            except queue.Empty:
                kind, pk, payload = "", 0, None
            current = active.get(pk)
            if current is not None:
                if kind == "image":
                    self.apply(current.item, payload)
                elif kind == "host":
                    for result in payload:
                        self.apply(current.item, result)
                    self.close_unfinished(current.item, ImageCacheResult.ERROR, "the driver gave no result for it")
                    del active[pk]
                    failed = current.item.image_items.filter(status=ImageCacheResult.ERROR).exists()
                    self.finish_host(
                        current.item,
                        ImageCacheHost.ERROR if failed else ImageCacheHost.COMPLETED,
                        "some images could not be cached" if failed else "",
                    )
                elif kind == "failed":
                    del active[pk]
                    self.close_unfinished(current.item, ImageCacheResult.ERROR, payload)
                    self.finish_host(current.item, ImageCacheHost.ERROR, payload)
            now = time.monotonic()
            for pk, late in list(active.items()):
                if now >= late.deadline:
                    del active[pk]
                    reason = f"the host did not answer within {self.timeout:g} seconds"
                    self.close_unfinished(late.item, ImageCacheResult.ERROR, reason)
                    self.finish_host(late.item, ImageCacheHost.ERROR, reason)
            self.heartbeat()


def _started(job: ImageCacheJob) -> None:
    _record(job, "aggregate.cache_images.start", _aggregate_payload(job))


def _work(job: ImageCacheJob, token: str, driver: CacheDriver | None = None) -> None:
    try:
        driver = driver or drivers.load_driver()
    except DriverUnavailable as exc:
        raise runner.JobFailed(exc.message) from exc
    _Runner(job, token, driver).run()


def _finish(job: ImageCacheJob) -> ImageCacheJob:
    results = ImageCacheResult.objects.filter(host_item__job=job)
    failed = results.filter(status=ImageCacheResult.ERROR).exists()
    job.status = ImageCacheJob.COMPLETED_WITH_ERRORS if failed else ImageCacheJob.COMPLETED
    job.done = results.filter(status__in=ImageCacheResult.FINISHED).count()
    job.finished_at = timezone.now()
    job.lease_expires_at = None
    job.save(update_fields=["status", "done", "finished_at", "lease_expires_at"])
    _record(job, "aggregate.cache_images.end", _aggregate_payload(job))
    return job


def _fail(job: ImageCacheJob, reason: str) -> ImageCacheJob:
    """The job cannot go on: its unfinished images and hosts are error, the job failed."""
    now = timezone.now()
    with transaction.atomic():
        unfinished_hosts = ImageCacheHost.objects.filter(job=job).exclude(status__in=ImageCacheHost.FINISHED)
        ImageCacheResult.objects.filter(host_item__in=unfinished_hosts).exclude(
            status__in=ImageCacheResult.FINISHED
        ).update(status=ImageCacheResult.ERROR, error=reason, finished_at=now)
        unfinished_hosts.update(status=ImageCacheHost.ERROR, reason=reason, finished_at=now)
        job.status = ImageCacheJob.FAILED
        job.error = reason
        job.done = ImageCacheResult.objects.filter(host_item__job=job).count()
        job.finished_at = now
        job.lease_expires_at = None
        job.save(update_fields=["status", "error", "done", "finished_at", "lease_expires_at"])
    if job.started_at is not None:
        _record(job, "aggregate.cache_images.end", {**_aggregate_payload(job), "error": reason})
    return job


RUNNER = runner.JobRunner(KIND, work=_work, finish=_finish, fail=_fail, started=_started)


def run_job(job_pk: int, driver: CacheDriver | None = None) -> ImageCacheJob | None:
    """Run (or resume) one job to its end; None when another runner holds it
    or it is finished. ``driver``: the cache driver (else the configured one)."""
    return RUNNER.run_job(job_pk, (lambda job, token: _work(job, token, driver)) if driver else None)


def drain_jobs() -> dict[str, int]:
    """Resume the jobs whose runner stopped and run the queued ones nobody
    started; a job whose runner stopped IMAGE_CACHE_MAX_ATTEMPTS times is
    failed with the reason."""
    return RUNNER.drain()


def dispatch(job_pk: int) -> None:
    """Start the job once the transaction commits, outside the request (a
    worker, or a thread without a broker)."""
    RUNNER.dispatch(job_pk)
