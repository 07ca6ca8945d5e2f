"""The console's pre-caching pages: the "Cache images" form, the job pages
and their progress fragment, the image page's "where it is cached", and
recurring schedules (create, edit, delete)."""

import json

import pytest
from django_celery_beat.models import PeriodicTask

from aggregates.precache import running, schedules
from aggregates.precache.models import ImageCacheJob


def test_aggregate_page_offers_cache_images(admin_client, make_aggregate):
    agg = make_aggregate()
    body = admin_client.get(f"/aggregates/{agg.id}/").content.decode()
    assert f"/aggregates/{agg.id}/cache-images/" in body


def test_cache_form_starts_job_and_job_page_shows_it(admin_client, make_aggregate, make_image):
    agg = make_aggregate()
    image = make_image("ubuntu")
    make_image("no-data", data=None)
    form = admin_client.get(f"/aggregates/{agg.id}/cache-images/").content.decode()
    assert "ubuntu" in form and "no-data" not in form
    response = admin_client.post(f"/aggregates/{agg.id}/cache-images/", {"images": [str(image.id)]})
    job = ImageCacheJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/images/cache-jobs/{job.uuid}/"
    page = admin_client.get(response["Location"]).content.decode()
    assert 'data-poll-url="/images/cache-jobs/' in page
    assert "dashboard/precache.js" in page
    assert 'data-finished="0"' in page
    running.run_job(job.pk)
    fragment = admin_client.get(f"/images/cache-jobs/{job.uuid}/progress/").content.decode()
    assert 'data-finished="1"' in fragment
    assert 'data-percent="100"' in fragment
    assert fragment.count(">cached<") == 2
    assert fragment.count(">ubuntu</a>") == 2  # images by name, one row per host
    assert "<html" not in fragment
    listing = admin_client.get("/images/cache-jobs/").content.decode()
    assert str(job.uuid) in listing and "completed" in listing
    assert str(job.uuid) not in admin_client.get("/images/cache-jobs/?status=failed").content.decode()
    detail = admin_client.get(f"/images/{image.id}/").content.decode()
    assert 'id="cache-hosts"' in detail
    assert "/hosts/h1/" in detail and "/hosts/h2/" in detail


def test_cache_form_refuses_nothing_chosen(admin_client, make_aggregate, make_image):
    agg = make_aggregate()
    make_image()
    response = admin_client.post(f"/aggregates/{agg.id}/cache-images/", {})
    assert response.status_code == 400
    assert not ImageCacheJob.objects.exists()
    response = admin_client.post(f"/aggregates/{agg.id}/cache-images/", {"images": ["not-a-choice"]})
    assert response.status_code == 400


def test_reader_sees_but_cannot_start(reader_client, make_aggregate, make_image):
    agg = make_aggregate()
    image = make_image()
    assert reader_client.get(f"/aggregates/{agg.id}/cache-images/").status_code == 200
    assert reader_client.post(f"/aggregates/{agg.id}/cache-images/", {"images": [str(image.id)]}).status_code == 403
    assert not ImageCacheJob.objects.exists()


def test_unknown_job_and_aggregate_404(admin_client, db):
    assert admin_client.get("/images/cache-jobs/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert admin_client.get("/aggregates/99999/cache-images/").status_code == 404


def test_recurring_schedule_create_edit_delete(admin_client, make_aggregate, make_image):
    agg = make_aggregate()
    a, b = make_image("a"), make_image("b")
    response = admin_client.post(
        f"/aggregates/{agg.id}/cache-schedules/",
        {"schedule-images": [str(a.id)], "schedule-hour": "2", "schedule-minute": "0", "schedule-day_of_week": "*"},
    )
    assert response.status_code == 302
    task = PeriodicTask.objects.get(task="corral.precache.scheduled_cache")
    assert (task.crontab.hour, task.crontab.minute, task.crontab.day_of_week) == ("2", "0", "*")
    assert json.loads(task.kwargs) == {"aggregate_id": agg.id, "image_ids": [str(a.id)]}
    assert task.enabled
    page = admin_client.get(f"/aggregates/{agg.id}/cache-images/").content.decode()
    assert task.name in page and f"/images/cache-schedules/{task.pk}/" in page
    edit = admin_client.get(f"/images/cache-schedules/{task.pk}/").content.decode()
    assert 'value="2"' in edit
    response = admin_client.post(
        f"/images/cache-schedules/{task.pk}/",
        {"images": [str(a.id), str(b.id)], "hour": "3", "minute": "30", "day_of_week": "1-5"},
    )
    assert response.status_code == 302
    task.refresh_from_db()
    assert (task.crontab.hour, task.crontab.minute, task.crontab.day_of_week) == ("3", "30", "1-5")
    assert json.loads(task.kwargs)["image_ids"] == [str(a.id), str(b.id)]
    assert not task.enabled  # the box was not ticked
    # bad input changes nothing
    response = admin_client.post(
        f"/images/cache-schedules/{task.pk}/", {"images": [str(a.id)], "hour": "25", "minute": "0", "day_of_week": "*"}
    )
    assert response.status_code == 400
    task.refresh_from_db()
    assert task.crontab.hour == "3"
    assert admin_client.post(f"/images/cache-schedules/{task.pk}/delete/").status_code == 302
    assert not PeriodicTask.objects.filter(pk=task.pk).exists()


def test_schedule_runs_a_job(system, make_aggregate, make_image):
    from aggregates.precache import tasks

    agg = make_aggregate()
    image = make_image()
    schedule = schedules.create_schedule(system, agg.id, [str(image.id)])
    kwargs = json.loads(schedule.task.kwargs)
    job_uuid = tasks.scheduled_cache.delay(**kwargs, schedule_name=schedule.task.name).get()
    job = ImageCacheJob.objects.get(uuid=job_uuid)
    assert job.schedule_name == schedule.task.name
    assert job.requested_by == "image-cache-schedule"


def test_schedule_service_refuses_bad_input(system, make_aggregate, make_image):
    from aggregates.errors import Invalid, NotFound

    agg = make_aggregate()
    image = make_image()
    with pytest.raises(Invalid):
        schedules.create_schedule(system, agg.id, [])
    with pytest.raises(Invalid):
        schedules.create_schedule(system, agg.id, [str(image.id)], minute="99")
    with pytest.raises(NotFound):
        schedules.create_schedule(system, 99999, [str(image.id)])
    assert not PeriodicTask.objects.filter(task="corral.precache.scheduled_cache").exists()
