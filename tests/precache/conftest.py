"""Pre-caching fixtures: an image store and a simulated host cache of their own
per test, the in-process driver, images with data, aggregates with hosts."""

import hashlib
import io

import pytest

from aggregates.host_aggregates import services as aggregate_services
from aggregates.images import services as image_services


@pytest.fixture(autouse=True)
def precache_dirs(settings, tmp_path):
    settings.IMAGE_STORE_DIR = tmp_path / "images"
    settings.HOST_CACHE_DIR = tmp_path / "host-cache"
    settings.CACHE_DRIVER = "inprocess"
    settings.IMAGE_CACHE_CONCURRENCY = 1
    settings.IMAGE_CACHE_HOST_TIMEOUT = 30
    return tmp_path


@pytest.fixture
def make_image(db, system):
    def _make(name="cirros", data=b"cirros-disk" * 1000):
        image = image_services.create_image(
            system, {"name": name, "disk_format": "qcow2", "container_format": "bare", "visibility": "public"}
        )
        if data is not None:
            image_services.upload_image_data(system, str(image.id), [io.BytesIO(data).read()])
            image.refresh_from_db()
        return image

    return _make


@pytest.fixture
def make_aggregate(db, system, make_host):
    def _make(name="agg1", hosts=("h1", "h2")):
        aggregate = aggregate_services.create_aggregate(system, name)
        for host in hosts:
            make_host(host)
            aggregate_services.add_host(system, aggregate.id, host)
        return aggregate

    return _make


def sha512(data):
    return hashlib.sha512(data).hexdigest()


@pytest.fixture
def agg(make_aggregate):
    """An aggregate of hosts (make_aggregate's defaults)."""
    return make_aggregate()


@pytest.fixture
def image(make_image):
    """An active image (make_image's defaults)."""
    return make_image()
