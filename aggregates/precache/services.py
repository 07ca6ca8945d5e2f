"""Image pre-caching as the API and the console ask for it: the request
(one job row, one row per member host and per (host, image)), started
after commit (``running``), and what the jobs and the hosts' caches hold.
Recurring pre-caches are ``schedules``."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from aggregates.errors import Invalid, NotFound
from aggregates.host_aggregates import services as aggregate_services
from aggregates.host_aggregates.models import Aggregate, AggregateHost
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.caller import Caller
from aggregates.images import services as image_services
from aggregates.images.models import Image

from . import drivers, running
from .drivers import DriverUnavailable, HostTarget
from .models import ImageCacheHost, ImageCacheJob, ImageCacheResult


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


def normalized_image_id(image_id: str) -> str | None:
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
    normalized = [normalized_image_id(image_id) or str(image_id) for image_id in image_ids]
    if len(set(normalized)) != len(normalized):
        raise Invalid("Duplicate images in request")
    aggregate = aggregate_services.get_aggregate(aggregate_id)
    images = [image_to_cache(caller, image_id) for image_id in image_ids]
    with transaction.atomic():
        hosts = list(AggregateHost.objects.filter(aggregate=aggregate).order_by("host").values_list("host", flat=True))
        return create_job(caller, aggregate, {host: images for host in hosts}, images, schedule_name=schedule_name)


def image_to_cache(caller: Caller, image_id: str, field: str | None = None) -> Image:
    """The image ``caller`` may cache: Invalid (400) when unknown, not
    visible, or without data."""
    try:
        image = image_services.get_image(caller, image_id)
    except NotFound as exc:
        raise Invalid(f"Image {image_id} could not be found.", field=field) from exc
    if image.status != Image.ACTIVE:
        raise Invalid(f"Image {image_id} has no data to cache (status {image.status}).", field=field)
    return image


def create_job(
    caller: Caller,
    aggregate: Aggregate,
    plan: Mapping[str, Sequence[Image]],
    images: Sequence[Image],
    schedule_name: str = "",
    pinned: bool = False,
) -> ImageCacheJob:
    """One job caching, on each host of ``plan``, its images (``images``:
    all of them, in order); started after the current transaction commits.
    Until then it is a queued row: if the process stops first, the drain
    starts it."""
    with transaction.atomic():
        job = ImageCacheJob.objects.create(
            aggregate_id=aggregate.id,
            aggregate_uuid=aggregate.uuid,
            aggregate_name=aggregate.name,
            image_ids=[str(image.id) for image in images],
            requested_by=caller.username,
            project_id=caller.project_id or "",
            request_id=caller.request_id,
            schedule_name=schedule_name,
            pinned=pinned,
            total=sum(len(host_images) for host_images in plan.values()),
        )
        for host, host_images in plan.items():
            item = ImageCacheHost.objects.create(job=job, host=host)
            ImageCacheResult.objects.bulk_create(
                [ImageCacheResult(host_item=item, image_id=image.id) for image in host_images]
            )
        running.dispatch(job.pk)
    return job
