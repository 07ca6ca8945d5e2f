"""Pre-caching in the console, in headless Chromium: "Cache images" on an
aggregate, then the job page's progress bar climbing to 100% on its own
(polling, no reload) while a slowed in-process driver caches on several hosts."""

import io
import time

import pytest
from django.contrib.auth import get_user_model

from aggregates.host_aggregates import services as aggregate_services
from aggregates.hosts import services as host_services
from aggregates.identity.caller import Caller
from aggregates.images import services as image_services
from aggregates.precache import drivers
from aggregates.precache.models import ImageCacheJob

from .conftest import DEMO_PASSWORD, log_in, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect

HOSTS = ("pc-host-1", "pc-host-2", "pc-host-3")


class SlowInProcessDriver(drivers.InProcessDriver):
    """The in-process driver, taking a while per image so that progress shows."""

    def _cache_one(self, host, image, deadline):
        time.sleep(0.4)
        return super()._cache_one(host, image, deadline)


@pytest.fixture
def precache_cloud(server_url, settings, tmp_path, monkeypatch):
    settings.IMAGE_STORE_DIR = tmp_path / "images"
    settings.HOST_CACHE_DIR = tmp_path / "host-cache"
    settings.IMAGE_CACHE_CONCURRENCY = 1
    monkeypatch.setitem(drivers.DRIVERS, "slow", f"{__name__}.SlowInProcessDriver")
    settings.CACHE_DRIVER = "slow"
    system = Caller.system("tests")
    get_user_model().objects.create_user("pc-admin", password=DEMO_PASSWORD, is_staff=True, is_superuser=True)
    aggregate = aggregate_services.create_aggregate(system, "fast-boot")
    for host in HOSTS:
        host_services.register_host(system, host, vcpus=8, memory_mb=8192, local_gb=100)
        aggregate_services.add_host(system, aggregate.id, host)
    for name in ("cirros", "ubuntu"):
        image = image_services.create_image(
            system, {"name": name, "disk_format": "qcow2", "container_format": "bare", "visibility": "public"}
        )
        image_services.upload_image_data(system, str(image.id), [io.BytesIO(name.encode() * 5000).read()])
    return server_url, aggregate


def test_progress_bar_reaches_100_without_reload(page, precache_cloud, settings):
    base_url, aggregate = precache_cloud
    log_in(page, base_url, "pc-admin")
    page.goto(f"{base_url}/aggregates/{aggregate.id}/")
    page.click("a:has-text('Cache images')")
    page.check("label:has-text('cirros') >> xpath=preceding-sibling::input")
    page.check("label:has-text('ubuntu') >> xpath=preceding-sibling::input")
    page.click("#cache-form button:has-text('Cache images')")
    expect(page.locator("h1")).to_contain_text("Caching images on fast-boot")
    page.evaluate("window.__notReloaded = true")
    progress = page.locator("#job-progress")
    # seen mid-way, then complete, on the same document
    expect(progress).not_to_have_attribute("data-percent", "0", timeout=10000)
    seen_midway = progress.get_attribute("data-percent")
    expect(progress).to_have_attribute("data-percent", "100", timeout=20000)
    expect(progress).to_have_attribute("data-finished", "1")
    expect(page.locator("#job-status")).to_contain_text("completed")
    assert page.evaluate("window.__notReloaded") is True
    assert page.locator(".bar > span").evaluate("el => el.style.width") == "100%"
    assert page.locator("#job-hosts td:has-text('cached')").count() == 6
    job = ImageCacheJob.objects.get()
    assert (job.status, job.done, job.total) == ("completed", 6, 6)
    assert 0 < int(seen_midway) < 100  # the bar moved while the job ran
    screenshot(page, "precache-job")
    page.goto(f"{base_url}/images/cache-jobs/")
    expect(page.locator("#jobs")).to_contain_text("fast-boot")


def test_pinned_images_page_with_each_hosts_state(page, precache_cloud, settings):
    """Pin an image through the page; one host down shows an error with its
    reason and a retry; the states on a wide screen and a phone."""
    from aggregates.hosts.models import Service

    settings.CACHE_DRIVER = "inprocess"
    base_url, aggregate = precache_cloud
    Service.objects.filter(host=HOSTS[2]).update(forced_down=True)
    log_in(page, base_url, "pc-admin")
    page.goto(f"{base_url}/aggregates/{aggregate.id}/")
    page.click("a:has-text('Pinned images')")
    expect(page.locator("h1")).to_contain_text("Pinned images of fast-boot")
    page.select_option("#id_image_id", label=page.locator("#id_image_id option", has_text="cirros").inner_text())
    page.click("#pin-form button:has-text('Pin')")
    expect(page.locator(".alert").first).to_contain_text("pinned")
    deadline = time.monotonic() + 20
    while page.locator("td .badge.ok").count() < 2 and time.monotonic() < deadline:
        time.sleep(0.3)
        page.reload()
    expect(page.locator("td .badge.ok")).to_have_count(2)
    row = page.locator(f"tr[data-host='{HOSTS[2]}']")
    expect(row).to_contain_text("error")
    expect(row).to_contain_text("the compute service is forced down")
    row.locator("button:has-text('Retry')").click()
    expect(page.locator(".alert").first).to_contain_text("could not be asked")
    page.set_viewport_size({"width": 1400, "height": 900})
    screenshot(page, "pinned-images-1400")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "pinned-images-390")
