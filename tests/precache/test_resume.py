"""A worker killed mid-job: the job's lease expires and the drain resumes the
hosts not done (keeping finished ones), or fails the job after too many tries."""

from datetime import timedelta

from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.precache import running, services, tasks
from aggregates.precache.models import ImageCacheHost, ImageCacheJob, ImageCacheResult


def left_running(system, agg, image, lease_age=timedelta(minutes=5), attempts=1):
    """A job as a killed worker leaves it: running, h1 finished, h2 mid-way, lease expired."""
    job = services.request_image_cache(system, agg.id, [str(image.id)])
    running.run_job(job.pk)  # completes everything; then rewind h2 as if interrupted
    ImageCacheHost.objects.filter(job=job, host="h2").update(status="caching", finished_index=None, finished_at=None)
    ImageCacheResult.objects.filter(host_item__job=job, host_item__host="h2").update(
        status="caching", bytes=None, seconds=None
    )
    ImageCacheJob.objects.filter(pk=job.pk).update(
        status="running", finished_at=None, lease_expires_at=timezone.now() - lease_age, attempts=attempts
    )
    return job


def test_drain_resumes_expired_job(system, make_aggregate, make_image):
    agg = make_aggregate()
    image = make_image()
    job = left_running(system, agg, image)
    h1_before = ImageCacheResult.objects.get(host_item__job=job, host_item__host="h1")
    Event.objects.all().delete()
    assert tasks.drain_jobs.delay().get() == {"resumed": 1, "failed": 0}
    job.refresh_from_db()
    assert job.status == "completed"
    assert job.lease_expires_at is None
    assert job.attempts == 2
    h1_after = ImageCacheResult.objects.get(host_item__job=job, host_item__host="h1")
    assert h1_after.finished_at == h1_before.finished_at  # not redone
    h2 = ImageCacheHost.objects.get(job=job, host="h2")
    assert h2.status == "completed"
    assert h2.finished_index == 2
    types = list(Event.objects.order_by("id").values_list("event_type", flat=True))
    # no second start event; h2's progress, then the end
    assert types == ["aggregate.cache_images.progress", "aggregate.cache_images.end"]


def test_drain_leaves_live_jobs_alone(system, make_aggregate, make_image):
    agg = make_aggregate()
    job = left_running(system, agg, make_image(), lease_age=-timedelta(minutes=5))
    assert running.drain_jobs() == {"resumed": 0, "failed": 0}
    job.refresh_from_db()
    assert job.status == "running"


def test_drain_fails_job_after_too_many_attempts(system, make_aggregate, make_image, settings):
    settings.IMAGE_CACHE_MAX_ATTEMPTS = 3
    agg = make_aggregate()
    job = left_running(system, agg, make_image(), attempts=3)
    assert running.drain_jobs() == {"resumed": 0, "failed": 1}
    job.refresh_from_db()
    assert job.status == "failed"
    assert "stopped 3 times" in job.error
    assert ImageCacheHost.objects.get(job=job, host="h1").status == "completed"
    assert ImageCacheHost.objects.get(job=job, host="h2").status == "error"


def test_drain_starts_stale_queued_job(system, make_aggregate, make_image):
    agg = make_aggregate()
    job = services.request_image_cache(system, agg.id, [str(make_image().id)])
    assert running.drain_jobs() == {"resumed": 0, "failed": 0}  # too fresh: its dispatch may still run it
    ImageCacheJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    assert running.drain_jobs() == {"resumed": 1, "failed": 0}
    job.refresh_from_db()
    assert job.status == "completed"


def test_run_job_twice_is_harmless(system, make_aggregate, make_image):
    agg = make_aggregate()
    job = services.request_image_cache(system, agg.id, [str(make_image().id)])
    assert running.run_job(job.pk).status == "completed"
    assert running.run_job(job.pk) is None


def test_without_a_broker_a_new_job_drains_the_stale_ones(
    transactional_db, system, make_aggregate, make_image, monkeypatch
):
    """Eager Celery: the request starts its job in a thread after commit,
    which then resumes a job whose worker died."""
    import time

    agg = make_aggregate()
    image = make_image()
    with monkeypatch.context() as patched:
        patched.setattr(running, "dispatch", lambda job_pk: None)  # set the stale job up undisturbed
        stale = left_running(system, agg, image)
    running.RUNNER.catch_up.reset()
    fresh = services.request_image_cache(system, agg.id, [str(image.id)])  # autocommit: dispatched at once
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        stale.refresh_from_db()
        fresh.refresh_from_db()
        if stale.is_finished and fresh.is_finished:
            break
        time.sleep(0.1)
    assert (fresh.status, stale.status) == ("completed", "completed")
