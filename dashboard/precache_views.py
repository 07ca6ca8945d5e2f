"""Image pre-caching in the console: the "Cache images" form of an aggregate
(with its recurring schedules), the list of jobs, a job's page whose
progress updates itself (``dashboard/precache.js`` polls the progress
fragment; no full reload), schedule editing, and an aggregate's pinned
images with each host's state and a retry."""

import uuid
from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect

from aggregates.errors import NotFound, ServiceError
from aggregates.host_aggregates import services as aggregate_services
from aggregates.host_aggregates.models import Aggregate
from aggregates.images import services as image_services
from aggregates.images.models import Image
from aggregates.precache import pins, schedules, services
from aggregates.precache.models import ImageCacheJob

from .console import caller_of, console_view, form_error, page, paginate
from .forms import choice_field

DAYS = [("*", "every day"), ("1-5", "Monday to Friday"), ("0,6", "weekends")] + [
    (str(n), name) for n, name in enumerate(["Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays"])
]


def _image_choices(request: HttpRequest) -> list[tuple[str, str]]:
    rows = image_services.visible_images(caller_of(request)).filter(status=Image.ACTIVE).order_by("name")
    return [(str(image.id), f"{image.name or '(no name)'} — {image.id}") for image in rows]


class CacheImagesForm(forms.Form):
    images = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="Active images only.")

    def __init__(self, *args: Any, image_choices: Sequence[tuple[str, str]] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "images").choices = image_choices


class ScheduleForm(CacheImagesForm):
    hour = forms.CharField(initial="2", max_length=60, help_text="0-23, a list (1,13) or */6.")
    minute = forms.CharField(initial="0", max_length=60, help_text="0-59.")
    day_of_week = forms.ChoiceField(choices=DAYS, initial="*", label="Days")
    enabled = forms.BooleanField(required=False, initial=True)


def _aggregate_or_404(aggregate_id: int) -> Aggregate:
    try:
        return aggregate_services.get_aggregate(aggregate_id)
    except NotFound as exc:
        raise Http404(exc.message)


def _job_or_404(job_uuid: uuid.UUID) -> ImageCacheJob:
    try:
        return services.get_job(str(job_uuid))
    except NotFound as exc:
        raise Http404(exc.message)


def _schedule_or_404(schedule_id: int) -> schedules.Schedule:
    try:
        return schedules.get_schedule(schedule_id)
    except NotFound as exc:
        raise Http404(exc.message)


@console_view
def aggregate_cache(request: HttpRequest, aggregate_id: int) -> HttpResponse:
    """GET: the form and the aggregate's schedules and jobs; POST: start a job."""
    aggregate = _aggregate_or_404(aggregate_id)
    choices = _image_choices(request)
    form = CacheImagesForm(request.POST if request.method == "POST" else None, image_choices=choices)
    if request.method == "POST" and form.is_valid():
        try:
            job = services.request_image_cache(caller_of(request), aggregate.id, form.cleaned_data["images"])
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Caching {len(job.image_ids)} image(s) on the hosts of {aggregate.name}.")
            return redirect("dashboard:image_cache_job", job.uuid)
    context = {
        "aggregate": aggregate,
        "form": form,
        "schedule_form": ScheduleForm(image_choices=choices, prefix="schedule"),
        "schedules": schedules.schedules_of(aggregate.id),
        "jobs": services.jobs().filter(aggregate_id=aggregate.id)[:10],
    }
    return page(request, context, "dashboard/precache/cache.html", status=400 if form.errors else 200)


@console_view
def schedule_create(request: HttpRequest, aggregate_id: int) -> HttpResponse:
    aggregate = _aggregate_or_404(aggregate_id)
    if request.method != "POST":
        return redirect("dashboard:aggregate_cache", aggregate.id)
    choices = _image_choices(request)
    form = ScheduleForm(request.POST, image_choices=choices, prefix="schedule")
    if form.is_valid():
        data = form.cleaned_data
        try:
            schedules.create_schedule(
                caller_of(request), aggregate.id, data["images"], data["minute"], data["hour"], data["day_of_week"]
            )
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Recurring pre-cache saved for {aggregate.name}.")
            return redirect("dashboard:aggregate_cache", aggregate.id)
    context = {
        "aggregate": aggregate,
        "form": CacheImagesForm(image_choices=choices),
        "schedule_form": form,
        "schedules": schedules.schedules_of(aggregate.id),
        "jobs": services.jobs().filter(aggregate_id=aggregate.id)[:10],
    }
    return page(request, context, "dashboard/precache/cache.html", status=400)


@console_view(form_page=True)
def schedule_edit(request: HttpRequest, schedule_id: int) -> HttpResponse:
    schedule = _schedule_or_404(schedule_id)
    aggregate = _aggregate_or_404(schedule.aggregate_id)
    crontab = schedule.crontab
    initial = {
        "images": schedule.image_ids,
        "hour": crontab.hour if crontab else "2",
        "minute": crontab.minute if crontab else "0",
        "day_of_week": crontab.day_of_week if crontab else "*",
        "enabled": schedule.task.enabled,
    }
    data = request.POST if request.method == "POST" else None
    form = ScheduleForm(data, image_choices=_image_choices(request), initial=initial)
    if request.method == "POST" and form.is_valid():
        cleaned = form.cleaned_data
        try:
            schedules.update_schedule(
                caller_of(request),
                schedule.task.pk,
                cleaned["images"],
                cleaned["minute"],
                cleaned["hour"],
                cleaned["day_of_week"],
                cleaned["enabled"],
            )
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, "Recurring pre-cache updated.")
            return redirect("dashboard:aggregate_cache", aggregate.id)
    context = {"aggregate": aggregate, "schedule": schedule, "form": form}
    return page(request, context, "dashboard/precache/schedule_edit.html", status=400 if form.errors else 200)


@console_view(form_page=True)
def schedule_delete(request: HttpRequest, schedule_id: int) -> HttpResponse:
    schedule = _schedule_or_404(schedule_id)
    if request.method == "POST":
        schedules.delete_schedule(caller_of(request), schedule.task.pk)
        messages.success(request, "Recurring pre-cache deleted.")
    return redirect("dashboard:aggregate_cache", schedule.aggregate_id)


@console_view
def job_list(request: HttpRequest) -> HttpResponse:
    rows = services.jobs()
    status = request.GET.get("status")
    if status in dict(ImageCacheJob.STATUSES):
        rows = rows.filter(status=status)
    current, querystring = paginate(request, rows)
    context = {"page": current, "querystring": querystring, "statuses": ImageCacheJob.STATUSES}
    return page(request, context, "dashboard/precache/jobs.html")


def _job_context(job_uuid: uuid.UUID) -> dict[str, Any]:
    """The job, and the names of its images (an image deleted since shows its id)."""
    job = _job_or_404(job_uuid)
    names = dict(Image.objects.filter(pk__in=job.image_ids).values_list("id", "name"))
    return {"job": job, "image_names": {str(pk): name for pk, name in names.items() if name}}


@console_view
def job_detail(request: HttpRequest, job_uuid: uuid.UUID) -> HttpResponse:
    return page(request, _job_context(job_uuid), "dashboard/precache/job.html")


@console_view
def job_progress(request: HttpRequest, job_uuid: uuid.UUID) -> HttpResponse:
    """The part of the job page that changes while it runs (polled by precache.js)."""
    return page(request, _job_context(job_uuid), "dashboard/precache/_progress.html")


# --- pinned images (the pre-cache policy) -------------------------------------


class PinForm(forms.Form):
    image_id = forms.ChoiceField(label="Image", help_text="Active images only.")
    replaces = forms.ChoiceField(
        required=False,
        label="Replaces",
        help_text="A pinned image this one replaces: unpinned once every host has the new one.",
    )

    def __init__(
        self,
        *args: Any,
        image_choices: Sequence[tuple[str, str]] = (),
        pinned_choices: Sequence[tuple[str, str]] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "image_id").choices = image_choices
        choice_field(self, "replaces").choices = [("", "— nothing")] + list(pinned_choices)


def _unpinned_choices(request: HttpRequest, rows: Sequence[pins.PinRow]) -> list[tuple[str, str]]:
    pinned = {str(row.pin.image_id) for row in rows}
    return [choice for choice in _image_choices(request) if choice[0] not in pinned]


def _pins_context(request: HttpRequest, aggregate_id: int, form: PinForm | None = None) -> dict[str, Any]:
    try:
        board = pins.board(aggregate_id)
    except NotFound as exc:
        raise Http404(exc.message)
    pinned = [(str(row.pin.image_id), f"{row.image_name or '(no name)'} — {row.pin.image_id}") for row in board.rows]
    if form is None:
        form = PinForm(image_choices=_unpinned_choices(request, board.rows), pinned_choices=pinned)
    names = {str(row.pin.image_id): row.image_name for row in board.rows}
    return {"aggregate": board.aggregate, "board": board, "form": form, "image_names": names}


@console_view
def aggregate_pins(request: HttpRequest, aggregate_id: int) -> HttpResponse:
    """GET: each pinned image with every host's state; POST: pin an image."""
    if request.method != "POST":
        return page(request, _pins_context(request, aggregate_id), "dashboard/precache/pins.html")
    aggregate = _aggregate_or_404(aggregate_id)
    pinned = [(str(p.image_id), str(p.image_id)) for p in pins.pins_of(aggregate.id)]
    form = PinForm(request.POST, image_choices=_image_choices(request), pinned_choices=pinned)
    if form.is_valid():
        try:
            pin = pins.pin_image(
                caller_of(request), aggregate.id, form.cleaned_data["image_id"], form.cleaned_data["replaces"] or None
            )
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Image {pin.image_id} pinned: caching it on the hosts of {aggregate.name}.")
            return redirect("dashboard:aggregate_pins", aggregate.id)
    return page(request, _pins_context(request, aggregate.id, form), "dashboard/precache/pins.html", status=400)


@console_view(form_page=True)
def aggregate_unpin(request: HttpRequest, aggregate_id: int, image_id: uuid.UUID) -> HttpResponse:
    if request.method == "POST":
        try:
            pins.unpin_image(caller_of(request), aggregate_id, str(image_id))
        except NotFound as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Image {image_id} unpinned: the hosts may evict it now.")
    return redirect("dashboard:aggregate_pins", aggregate_id)


@console_view(form_page=True)
def aggregate_pins_recheck(request: HttpRequest, aggregate_id: int) -> HttpResponse:
    """Re-check the hosts' caches now (one host: ``host``) and re-cache what is missing: the retry."""
    if request.method == "POST":
        host = request.POST.get("host") or None
        try:
            done = pins.recheck(caller_of(request), aggregate_id, [host] if host else None)
        except NotFound as exc:
            raise Http404(exc.message)
        except ServiceError as exc:
            messages.error(request, exc.message)
        else:
            asked = f"{len(done.asked)} host(s) answered"
            if done.unreachable:
                asked += f"; {len(done.unreachable)} could not be asked ({', '.join(sorted(done.unreachable))})"
            if done.job is not None:
                messages.success(request, f"Re-checked: {asked}. Re-caching what was missing (job {done.job.uuid}).")
            else:
                messages.success(request, f"Re-checked: {asked}. Nothing to re-cache.")
    return redirect("dashboard:aggregate_pins", aggregate_id)
