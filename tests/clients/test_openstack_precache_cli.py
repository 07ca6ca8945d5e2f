"""End to end: ``openstack aggregate cache image AGG IMAGE [IMAGE...]`` from the
stock CLI against a live Corral (2.81), the job it starts running outside the
request and caching on every member host (in-process driver). Skipped
without a CLI, like test_openstack_cli.py (same fixtures)."""

import hashlib
import time

import pytest

from aggregates.precache.models import ImageCacheJob
from tests.plugins.openstack_cli import run_json, run_quiet

IMAGE_BYTES = bytes(range(256)) * 1024


@pytest.fixture(autouse=True)
def stores(settings, tmp_path):
    settings.IMAGE_STORE_DIR = tmp_path / "image-store"
    settings.HOST_CACHE_DIR = tmp_path / "host-cache"
    settings.CACHE_DRIVER = "inprocess"
    return settings.HOST_CACHE_DIR


def wait_finished(timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ImageCacheJob.objects.order_by("-id").first()
        if job is not None and job.is_finished:
            return job
        time.sleep(0.2)
    raise AssertionError("the image cache job did not finish")


def test_aggregate_cache_image(openstack, make_host, tmp_path, stores):
    source = tmp_path / "cirros.img"
    source.write_bytes(IMAGE_BYTES)
    first = run_json(openstack, "image", "create", "--file", str(source), "--disk-format", "qcow2", "cirros")
    second = run_json(openstack, "image", "create", "--file", str(source), "--disk-format", "raw", "cirros-raw")
    make_host("cli-h1")
    make_host("cli-h2")
    run_json(openstack, "aggregate", "create", "fast-boot")
    run_json(openstack, "aggregate", "add", "host", "fast-boot", "cli-h1")
    run_json(openstack, "aggregate", "add", "host", "fast-boot", "cli-h2")

    run_quiet(openstack, "aggregate", "cache", "image", "fast-boot", "cirros", second["id"])
    job = wait_finished()
    assert job.status == "completed"
    assert job.image_ids == [first["id"], second["id"]]
    assert (job.done, job.total) == (4, 4)
    digest = hashlib.sha512(IMAGE_BYTES).hexdigest()
    for host in ("cli-h1", "cli-h2"):
        for image_id in (first["id"], second["id"]):
            assert hashlib.sha512((stores / host / image_id).read_bytes()).hexdigest() == digest


def test_aggregate_cache_image_errors(openstack, make_host, tmp_path):
    run_json(openstack, "aggregate", "create", "empty-agg")
    returncode, _, stderr = openstack("aggregate", "cache", "image", "empty-agg", "no-such-image")
    assert returncode != 0 and "no-such-image" in stderr
    returncode, _, stderr = openstack("aggregate", "cache", "image", "no-such-agg", "x")
    assert returncode != 0
    assert not ImageCacheJob.objects.exists()
