"""Image pre-caching: the request (one job row, one row per member host and
per (host, image)), the runner that fans the job out to the hosts through
the cache driver, the drain that resumes jobs whose worker died, and the
recurring pre-caches (django-celery-beat crontab schedules).

The runner is the only writer of a running job: driver calls happen in
threads of their own (at most IMAGE_CACHE_CONCURRENCY at a time, each given
IMAGE_CACHE_HOST_TIMEOUT) and report through a queue; the runner's thread
writes every row and renews the job's lease as it goes."""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django_celery_beat.models import CrontabSchedule, PeriodicTask
from django_celery_beat.validators import (
    day_of_week_validator,
    hour_validator,
    minute_validator,
)

from aggregates.audit import services as events
from aggregates.errors import Invalid, NotFound
from aggregates.host_aggregates import services as aggregate_services
from aggregates.host_aggregates.models import Aggregate, AggregateHost
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.caller import Caller
from aggregates.images import services as image_services
from aggregates.images.models import Image
from aggregates.jobs import leases

from . import drivers
from .drivers import CacheDriver, DriverUnavailable, HostTarget, ImageResult, ImageToCache
from .models import ImageCacheHost, ImageCacheJob, ImageCacheResult

log = logging.getLogger(__name__)

RUN_TASK = "corral.precache.run_job"
SCHEDULED_TASK = "corral.precache.scheduled_cache"
PUBLISHER_CALLER = "image-cache"


# --- reading -------------------------------------------------------------------


def jobs() -> QuerySet[ImageCacheJob]:
    return ImageCacheJob.objects.all()


def jobs_with_details() -> QuerySet[ImageCacheJob]:
    return ImageCacheJob.objects.prefetch_related("host_items__image_items")


def get_job(job_uuid: str) -> ImageCacheJob:
    try:
        parsed = uuid.UUID(str(job_uuid))
    except ValueError:
        parsed = None
    job = jobs_with_details().filter(uuid=parsed).first() if parsed else None
    if job is None:
        raise NotFound(f"Image cache job {job_uuid} could not be found.")
    return job


@dataclass
class CacheListing:
    """What the hosts' caches hold, as each host (its agent, or the
    in-process driver) lists it: hosts holding the image, and hosts that
    could not answer (with why)."""

    holding: list[str] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)
    asked: int = 0


def hosts_holding_image(image_id: str) -> CacheListing:
    """Ask every compute host's cache whether it holds ``image_id`` now
    (CACHE_LISTING_CONCURRENCY at a time, each bounded by the driver's
    timeouts), so the console shows what the hosts hold, not only what jobs
    once did."""
    try:
        driver = drivers.load_driver()
    except DriverUnavailable as exc:
        return CacheListing(unreachable={"*": exc.message})
    nodes: dict[str, ComputeNode] = {}
    for node in ComputeNode.objects.filter(service__binary=Service.COMPUTE).order_by("host", "id"):
        nodes.setdefault(node.host, node)
    targets = [HostTarget(host=h, address=n.host_ip, agent_url=n.agent_url or "") for h, n in nodes.items()]
    listing = CacheListing(asked=len(targets))

    def ask(target: HostTarget) -> tuple[str, list[str] | None, str]:
        try:
            return target.host, driver.cached_images(target), ""
        except Exception as exc:  # noqa: BLE001 - one silent host must not hide the others
            return target.host, None, str(getattr(exc, "message", exc))

    workers = max(1, min(settings.CACHE_LISTING_CONCURRENCY, len(targets) or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for host, images, problem in pool.map(ask, targets):
            if images is None:
                listing.unreachable[host] = problem
            elif image_id in images:
                listing.holding.append(host)
    return listing


def cached_hosts_of_image(image_id: str) -> list[dict[str, Any]]:
    """Where an image is cached, from the latest result per host of finished
    jobs: [{"host", "status" (cached/existing), "at", "job"}]."""
    rows = (
        ImageCacheResult.objects.filter(image_id=image_id, status__in=ImageCacheResult.SUCCEEDED)
        .select_related("host_item__job")
        .order_by("host_item__host", "-finished_at")
    )
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        host = row.host_item.host
        if host not in seen:
            seen[host] = {"host": host, "status": row.status, "at": row.finished_at, "job": row.host_item.job}
    return list(seen.values())


# --- the request -----------------------------------------------------------------


def _normalized(image_id: str) -> str | None:
    try:
        return str(uuid.UUID(str(image_id)))
    except ValueError:
        return None


def request_image_cache(
    caller: Caller, aggregate_id: int, image_ids: Sequence[str], schedule_name: str = ""
) -> ImageCacheJob:
    """Nova's order after the schema and the policy: duplicate ids (400),
    the aggregate (404), each image (400 when unknown or not visible, or
    without data). Creates the job and starts it after commit."""
    normalized = [_normalized(image_id) or str(image_id) for image_id in image_ids]
    if len(set(normalized)) != len(normalized):
        raise Invalid("Duplicate images in request")
    aggregate = aggregate_services.get_aggregate(aggregate_id)
    images = []
    for image_id in image_ids:
        try:
            image = image_services.get_image(caller, image_id)
        except NotFound as exc:
            raise Invalid(f"Image {image_id} could not be found.") from exc
        if image.status != Image.ACTIVE:
            raise Invalid(f"Image {image_id} has no data to cache (status {image.status}).")
        images.append(image)
    with transaction.atomic():
        hosts = list(AggregateHost.objects.filter(aggregate=aggregate).order_by("host").values_list("host", flat=True))
        job = ImageCacheJob.objects.create(
            aggregate_id=aggregate.id,
            aggregate_uuid=aggregate.uuid,
            aggregate_name=aggregate.name,
            image_ids=[str(image.id) for image in images],
            requested_by=caller.username,
            project_id=caller.project_id or "",
            request_id=caller.request_id,
            schedule_name=schedule_name,
            total=len(hosts) * len(images),
        )
        for host in hosts:
            item = ImageCacheHost.objects.create(job=job, host=host)
            ImageCacheResult.objects.bulk_create(
                [ImageCacheResult(host_item=item, image_id=image.id) for image in images]
            )
        job_pk = job.pk
        transaction.on_commit(lambda: dispatch(job_pk))
    return job


KIND = leases.JobKind(
    model=ImageCacheJob,
    label="image cache job",
    run_task=RUN_TASK,
    lease_setting="IMAGE_CACHE_LEASE_SECONDS",
    max_attempts_setting="IMAGE_CACHE_MAX_ATTEMPTS",
)


def dispatch(job_pk: int) -> None:
    """Start the job outside the request (a worker, or a thread without a broker)."""
    leases.dispatch(KIND, job_pk, run_job, drain_jobs)


# --- the runner ------------------------------------------------------------------


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

        threading.Thread(target=work, name=f"image-cache-host-{item.host}", daemon=True).start()
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


def run_job(job_pk: int, driver: CacheDriver | None = None) -> ImageCacheJob | None:
    """Run (or resume) one job to its end; None when another runner holds it
    or it is finished."""
    token = leases.worker_token()
    job = leases.claim(KIND, job_pk, token)
    if job is None:
        return None
    if job.attempts > KIND.max_attempts:
        return _fail(job, f"the job's worker stopped {job.attempts - 1} times; giving up")
    if job.started_at is None:
        job.started_at = timezone.now()
        job.save(update_fields=["started_at"])
        _record(job, "aggregate.cache_images.start", _aggregate_payload(job))
    try:
        driver = driver or drivers.load_driver()
    except DriverUnavailable as exc:
        return _fail(job, exc.message)
    runner = _Runner(job, token, driver)
    try:
        runner.run()
    except leases.LeaseLost:
        log.warning("image cache job %s was taken over by another runner", job.uuid)
        return None
    return _finish(job)


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


def drain_jobs() -> dict[str, int]:
    """Resume the jobs whose runner stopped and run the queued ones nobody
    started; a job whose runner stopped IMAGE_CACHE_MAX_ATTEMPTS times is
    failed with the reason."""
    return leases.drain(KIND, run_job)


# --- recurring pre-caches -------------------------------------------------------


@dataclass
class Schedule:
    task: PeriodicTask
    aggregate_id: int
    image_ids: list[str]

    @property
    def crontab(self) -> CrontabSchedule | None:
        return self.task.crontab


def _schedule_of(task: PeriodicTask) -> Schedule:
    kwargs = json.loads(task.kwargs or "{}")
    return Schedule(task, int(kwargs.get("aggregate_id", 0)), list(kwargs.get("image_ids", [])))


def schedules_of(aggregate_id: int | None = None) -> list[Schedule]:
    found = [_schedule_of(t) for t in PeriodicTask.objects.filter(task=SCHEDULED_TASK).select_related("crontab")]
    return [s for s in found if aggregate_id is None or s.aggregate_id == aggregate_id]


def get_schedule(schedule_id: int) -> Schedule:
    task = PeriodicTask.objects.filter(pk=schedule_id, task=SCHEDULED_TASK).select_related("crontab").first()
    if task is None:
        raise NotFound(f"Pre-cache schedule {schedule_id} could not be found.")
    return _schedule_of(task)


def _check_schedule(caller: Caller, image_ids: Sequence[str], minute: str, hour: str, day_of_week: str) -> list[str]:
    if not image_ids:
        raise Invalid("Choose at least one image.", field="images")
    for image_id in image_ids:
        try:
            image_services.get_image(caller, image_id)
        except NotFound as exc:
            raise Invalid(f"Image {image_id} could not be found.", field="images") from exc
    for value, validator, name in (
        (minute, minute_validator, "minute"),
        (hour, hour_validator, "hour"),
        (day_of_week, day_of_week_validator, "day_of_week"),
    ):
        try:
            validator(value)
        except ValidationError as exc:
            raise Invalid(f"Invalid {name.replace('_', ' ')}: {value!r}.", field=name) from exc
    return [_normalized(i) or i for i in image_ids]


def _crontab(minute: str, hour: str, day_of_week: str) -> CrontabSchedule:
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute=minute, hour=hour, day_of_week=day_of_week, day_of_month="*", month_of_year="*", timezone="UTC"
    )
    return crontab


def create_schedule(
    caller: Caller,
    aggregate_id: int,
    image_ids: Sequence[str],
    minute: str = "0",
    hour: str = "2",
    day_of_week: str = "*",
) -> Schedule:
    """A recurring pre-cache of ``image_ids`` on the aggregate (default: every night at 02:00 UTC)."""
    aggregate = aggregate_services.get_aggregate(aggregate_id)
    ids = _check_schedule(caller, image_ids, minute, hour, day_of_week)
    with transaction.atomic():
        task = PeriodicTask.objects.create(
            name=f"Pre-cache images on {aggregate.name} [{uuid.uuid4().hex[:8]}]",
            task=SCHEDULED_TASK,
            crontab=_crontab(minute, hour, day_of_week),
            kwargs=json.dumps({"aggregate_id": aggregate.id, "image_ids": ids}),
            description=f"Cache {len(ids)} image(s) on the hosts of aggregate {aggregate.name}.",
            enabled=True,
        )
        events.record(
            caller,
            "aggregate.cache_images_schedule.create",
            object_type="aggregate",
            object_id=aggregate.id,
            object_uuid=aggregate.uuid,
            payload={"schedule": task.name, "image_ids": ids, "minute": minute, "hour": hour, "dow": day_of_week},
        )
    return _schedule_of(task)


def update_schedule(
    caller: Caller,
    schedule_id: int,
    image_ids: Sequence[str],
    minute: str,
    hour: str,
    day_of_week: str,
    enabled: bool,
) -> Schedule:
    schedule = get_schedule(schedule_id)
    ids = _check_schedule(caller, image_ids, minute, hour, day_of_week)
    with transaction.atomic():
        task = schedule.task
        task.crontab = _crontab(minute, hour, day_of_week)
        task.kwargs = json.dumps({"aggregate_id": schedule.aggregate_id, "image_ids": ids})
        task.enabled = enabled
        task.save()
        events.record(
            caller,
            "aggregate.cache_images_schedule.update",
            object_type="aggregate",
            object_id=schedule.aggregate_id,
            payload={"schedule": task.name, "image_ids": ids, "minute": minute, "hour": hour, "enabled": enabled},
        )
    return _schedule_of(task)


def delete_schedule(caller: Caller, schedule_id: int) -> None:
    schedule = get_schedule(schedule_id)
    with transaction.atomic():
        schedule.task.delete()
        events.record(
            caller,
            "aggregate.cache_images_schedule.delete",
            object_type="aggregate",
            object_id=schedule.aggregate_id,
            payload={"schedule": schedule.task.name},
        )


def run_schedule(aggregate_id: int, image_ids: Sequence[str], schedule_name: str = "") -> ImageCacheJob | None:
    """What a recurring pre-cache does when due: request a job as the system."""
    try:
        return request_image_cache(Caller.system("image-cache-schedule"), aggregate_id, image_ids, schedule_name)
    except (Invalid, NotFound) as exc:
        log.warning("scheduled pre-cache on aggregate %s not started: %s", aggregate_id, exc)
        return None
