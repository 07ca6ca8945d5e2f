"""The fan-out: down hosts skipped, disabled hosts cached, the concurrency
bound, the per-host timeout, driver failures, events, and the in-process
driver's cache on disk."""

import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.hosts.models import Service
from aggregates.precache import drivers, running, services
from aggregates.precache.drivers import ImageResult
from aggregates.precache.models import ImageCacheHost, ImageCacheJob, ImageCacheResult

from .conftest import sha512


def request(system, aggregate, *images):
    return services.request_image_cache(system, aggregate.id, [str(i.id) for i in images])


def hosts_of(job):
    return {h.host: h for h in ImageCacheHost.objects.filter(job=job)}


def statuses(job, host):
    return list(
        ImageCacheResult.objects.filter(host_item__job=job, host_item__host=host).values_list("status", flat=True)
    )


def test_inprocess_driver_caches_files_with_hash(system, make_aggregate, make_image, settings):
    agg = make_aggregate()
    image = make_image(data=b"x" * 300_000)
    job = running.run_job(request(system, agg, image).pk)
    assert job.status == ImageCacheJob.COMPLETED
    for host in ("h1", "h2"):
        path = settings.HOST_CACHE_DIR / host / str(image.id)
        assert sha512(path.read_bytes()) == image.os_hash_value
        assert not [p for p in path.parent.iterdir() if p.name.endswith(".part")]
    assert drivers.InProcessDriver().cached_images(drivers.HostTarget("h1")) == [str(image.id)]
    # a second run finds them there
    job2 = running.run_job(request(system, agg, image).pk)
    assert statuses(job2, "h1") == ["existing"]
    assert job2.status == ImageCacheJob.COMPLETED
    assert {row["host"] for row in services.cached_hosts_of_image(str(image.id))} == {"h1", "h2"}


def test_corrupt_cached_copy_is_replaced(system, make_aggregate, make_image, settings):
    agg = make_aggregate(hosts=("h1",))
    image = make_image()
    target = settings.HOST_CACHE_DIR / "h1" / str(image.id)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"garbage")
    job = running.run_job(request(system, agg, image).pk)
    assert statuses(job, "h1") == ["cached"]
    assert sha512(target.read_bytes()) == image.os_hash_value


def test_hash_mismatch_is_error(system, make_aggregate, make_image, settings):
    agg = make_aggregate(hosts=("h1",))
    image = make_image()
    (settings.IMAGE_STORE_DIR / str(image.id)).write_bytes(b"tampered")
    job = running.run_job(request(system, agg, image).pk)
    row = ImageCacheResult.objects.get(host_item__job=job)
    assert row.status == "error"
    assert "mismatch" in row.error
    assert job.status == ImageCacheJob.COMPLETED_WITH_ERRORS
    assert not (settings.HOST_CACHE_DIR / "h1" / str(image.id)).exists()


def test_down_host_skipped_disabled_host_cached(system, make_aggregate, make_image):
    agg = make_aggregate(hosts=("h1", "h2", "h3"))
    Service.objects.filter(host="h1").update(last_seen_up=timezone.now() - timedelta(days=1))
    Service.objects.filter(host="h2").update(disabled=True, disabled_reason="maintenance")
    Service.objects.filter(host="h3").update(forced_down=True)
    a, b = make_image("a"), make_image("b", data=b"bbb" * 1000)
    job = running.run_job(request(system, agg, a, b).pk)
    hosts = hosts_of(job)
    assert hosts["h1"].status == "skipped"
    assert hosts["h1"].reason == "the compute service is down"
    assert statuses(job, "h1") == ["skipped", "skipped"]
    assert hosts["h3"].status == "skipped"
    assert "forced down" in hosts["h3"].reason
    assert hosts["h2"].status == "completed"
    assert statuses(job, "h2") == ["cached", "cached"]
    # skipped is not a failure of the job
    assert job.status == ImageCacheJob.COMPLETED
    assert (job.done, job.total, job.percent) == (6, 6, 100)


def test_events_start_progress_end(system, make_aggregate, make_image):
    agg = make_aggregate(hosts=("h1", "h2", "h3"))
    Service.objects.filter(host="h3").update(forced_down=True)
    image = make_image()
    Event.objects.all().delete()
    job = running.run_job(request(system, agg, image).pk)
    found = list(Event.objects.filter(event_type__startswith="aggregate.cache_images").order_by("id"))
    assert [e.event_type for e in found] == [
        "aggregate.cache_images.start",
        "aggregate.cache_images.progress",
        "aggregate.cache_images.progress",
        "aggregate.cache_images.progress",
        "aggregate.cache_images.end",
    ]
    start = found[0].payload
    assert start["id"] == agg.id and start["uuid"] == str(agg.uuid) and start["name"] == agg.name
    assert sorted(start["hosts"]) == ["h1", "h2", "h3"]
    progress = [e.payload for e in found[1:4]]
    assert [p["index"] for p in progress] == [1, 2, 3]
    assert {p["total"] for p in progress} == {3}
    # the down host is reported first, with its image failed (Nova counts skipped there)
    assert progress[0]["host"] == "h3"
    assert progress[0]["images_cached"] == [] and progress[0]["images_failed"] == [str(image.id)]
    assert progress[1]["images_cached"] == [str(image.id)] and progress[1]["images_failed"] == []
    for p in progress:
        assert set(p) >= {"id", "uuid", "name", "host", "images_cached", "images_failed", "index", "total"}
    assert found[4].payload["job_id"] == str(job.uuid)


class SlowDriver:
    """Counts simultaneous calls; each host takes ``delay`` seconds."""

    def __init__(self, delay=0.15):
        self.delay = delay
        self.lock = threading.Lock()
        self.current = 0
        self.peak = 0

    def cache(self, host, images, timeout, on_image_done):
        with self.lock:
            self.current += 1
            self.peak = max(self.peak, self.current)
        try:
            time.sleep(self.delay)
            results = [ImageResult(i.id, "cached", bytes=1, seconds=self.delay) for i in images]
            for r in results:
                on_image_done(r)
            return results
        finally:
            with self.lock:
                self.current -= 1

    def cached_images(self, host):
        return []


@pytest.mark.parametrize("concurrency", [1, 2])
def test_concurrency_bound(system, make_aggregate, make_image, settings, concurrency):
    settings.IMAGE_CACHE_CONCURRENCY = concurrency
    agg = make_aggregate(hosts=("h1", "h2", "h3", "h4", "h5"))
    driver = SlowDriver()
    job = running.run_job(request(system, agg, make_image()).pk, driver=driver)
    assert job.status == ImageCacheJob.COMPLETED
    assert driver.peak == concurrency


class SilentDriver:
    def __init__(self, silent_hosts):
        self.silent_hosts = silent_hosts

    def cache(self, host, images, timeout, on_image_done):
        if host.host in self.silent_hosts:
            time.sleep(5)  # ignores its timeout
        return [ImageResult(i.id, "cached") for i in images]

    def cached_images(self, host):
        return []


def test_silent_host_times_out_as_error(system, make_aggregate, make_image, settings):
    settings.IMAGE_CACHE_HOST_TIMEOUT = 0.3
    agg = make_aggregate(hosts=("h1", "h2"))
    started = time.monotonic()
    job = running.run_job(request(system, agg, make_image()).pk, driver=SilentDriver({"h1"}))
    assert time.monotonic() - started < 3
    hosts = hosts_of(job)
    assert hosts["h1"].status == "error"
    assert "did not answer within 0.3 seconds" in hosts["h1"].reason
    assert statuses(job, "h1") == ["error"]
    assert hosts["h2"].status == "completed"
    assert job.status == ImageCacheJob.COMPLETED_WITH_ERRORS


class BrokenDriver:
    def cache(self, host, images, timeout, on_image_done):
        raise ConnectionError("connection refused")

    def cached_images(self, host):
        return []


def test_driver_exception_is_host_error(system, make_aggregate, make_image):
    agg = make_aggregate(hosts=("h1",))
    job = running.run_job(request(system, agg, make_image()).pk, driver=BrokenDriver())
    row = ImageCacheResult.objects.get(host_item__job=job)
    assert (row.status, row.error) == ("error", "connection refused")
    assert job.status == ImageCacheJob.COMPLETED_WITH_ERRORS


def test_agent_driver_missing_fails_job_clearly(system, make_aggregate, make_image, settings, monkeypatch):
    settings.CACHE_DRIVER = "agent"
    monkeypatch.setitem(drivers.DRIVERS, "agent", "aggregates.precache.no_such_module.AgentDriver")
    agg = make_aggregate(hosts=("h1",))
    job = running.run_job(request(system, agg, make_image()).pk)
    assert job.status == ImageCacheJob.FAILED
    assert job.error.startswith("agent driver not available")
    assert statuses(job, "h1") == ["error"]
    assert Event.objects.filter(event_type="aggregate.cache_images.end").exists()


def test_unknown_driver_name(settings):
    with pytest.raises(drivers.DriverUnavailable, match="unknown cache driver"):
        drivers.load_driver("nope")
