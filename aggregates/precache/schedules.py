"""Recurring pre-caches: django-celery-beat crontab schedules that request
a pre-cache of images on an aggregate when due."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django_celery_beat.models import CrontabSchedule, PeriodicTask
from django_celery_beat.validators import (
    day_of_week_validator,
    hour_validator,
    minute_validator,
)

from aggregates.audit import services as events
from aggregates.errors import Invalid, NotFound
from aggregates.host_aggregates import services as aggregate_services
from aggregates.identity.caller import Caller
from aggregates.images import services as image_services

from . import services
from .models import ImageCacheJob

log = logging.getLogger(__name__)

SCHEDULED_TASK = "corral.precache.scheduled_cache"


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
    return [services.normalized_image_id(i) or i for i in image_ids]


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
        return services.request_image_cache(
            Caller.system("image-cache-schedule"), aggregate_id, image_ids, schedule_name
        )
    except (Invalid, NotFound) as exc:
        log.warning("scheduled pre-cache on aggregate %s not started: %s", aggregate_id, exc)
        return None
