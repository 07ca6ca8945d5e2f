"""Host maintenance in headless Chromium, at 1280 px and at 390 px: the
host page's Maintenance card previews the plan, Confirm opens the job page
whose progress bar climbs to 100% on its own (polling, no reload) while a
slowed drain moves the servers; the aggregate and zones pages load their
headroom; no page scrolls sideways and the CSP refuses nothing."""

import pytest
from django.contrib.auth import get_user_model

from aggregates.maintenance.models import MaintenanceJob
from aggregates.servers.models import Server
from tests.plugins.api import ApiClient
from tests.plugins.browser import overflow, watched_page
from tests.plugins.cloud import Cloud, cli_body, own_placement

from .conftest import DEMO_PASSWORD, log_in, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
SERVERS = 5


@pytest.fixture
def maintenance_cloud(server_url, settings, monkeypatch, system, make_host, token_for):
    own_placement(settings, monkeypatch)
    settings.MAINTENANCE_CONCURRENCY = 1
    settings.MAINTENANCE_LEASE_SECONDS = 60
    settings.MAINTENANCE_SIMULATED_DELAY = 0.5  # a slow hypervisor: progress shows
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]
    cloud = Cloud(system, make_host)
    # 11776 MB for servers on each host (512 reserved): room for 5 servers of 2048 MB.
    cloud.hosts("compute-a", "compute-b", "compute-c", vcpus=16, memory_mb=12288, local_gb=400)
    aggregate = cloud.aggregate("rack-1", ["compute-a", "compute-b", "compute-c"], zone="az-1")
    flavor, image = cloud.flavor(name="m1.medium", vcpus=2, ram=2048, disk=20), cloud.image()
    api = ApiClient(token_for("admin"))
    for name, host, count in (("web", "compute-a", SERVERS), ("db", "compute-b", 2)):
        body = cli_body(flavor, image, name=name, zone=f"az-1:{host}")
        body["server"]["min_count"] = body["server"]["max_count"] = count
        response = api.post("/servers", body, version="2.100")
        assert response.status_code == 202, response.content
    assert Server.objects.filter(host="compute-a").count() == SERVERS
    get_user_model().objects.create_user("mt-admin", password=DEMO_PASSWORD, is_staff=True, is_superuser=True)
    return server_url, aggregate


@pytest.mark.parametrize("label, viewport", [("desktop", DESKTOP), ("phone", PHONE)])
def test_preview_confirm_and_watch_the_drain(browser, maintenance_cloud, label, viewport):
    base, aggregate = maintenance_cloud
    page, violations = watched_page(browser, viewport)
    try:
        log_in(page, base, "mt-admin")
        page.goto(f"{base}/hosts/")
        page.click("a:has-text('Maintenance jobs')")
        expect(page.locator("h1")).to_have_text("Maintenance jobs")

        page.goto(f"{base}/hosts/compute-a/")
        card = page.locator("#maintenance")
        expect(card).to_contain_text("not in maintenance")
        page.fill("#maintenance-form input[name=reason]", "firmware upgrade")
        page.click("#maintenance-form button:has-text('Preview start maintenance')")
        expect(page.locator("#maintenance-plan")).to_contain_text("dry run: nothing has changed")
        expect(page.locator("#plan-summary")).to_contain_text(f"{SERVERS} of {SERVERS}")
        assert page.locator("#plan-servers tr.plan-moves").count() == SERVERS
        assert not MaintenanceJob.objects.exists()
        assert page.url == f"{base}/hosts/compute-a/"  # a refresh would not post again
        page.locator("#maintenance-plan").scroll_into_view_if_needed()
        assert overflow(page) == 0, f"host page with the plan is wider than {viewport['width']} px"
        screenshot(page, f"maintenance-preview-{label}")

        page.click("#maintenance-confirm button:has-text('Confirm: start maintenance')")
        expect(page.locator("h1")).to_have_text("Maintenance of compute-a")
        page.evaluate("window.__notReloaded = true")
        progress = page.locator("#job-progress")
        expect(progress).not_to_have_attribute("data-percent", "0", timeout=10000)
        seen_midway = int(progress.get_attribute("data-percent"))
        if seen_midway < 100:
            screenshot(page, f"maintenance-job-running-{label}")
        expect(progress).to_have_attribute("data-percent", "100", timeout=30000)
        expect(progress).to_have_attribute("data-finished", "1")
        expect(page.locator("#job-status")).to_contain_text("completed")
        assert page.evaluate("window.__notReloaded") is True
        assert page.locator(".bar > span").evaluate("el => el.style.width") == "100%"
        assert page.locator("#job-servers tr[data-status=moved]").count() == SERVERS
        assert 0 < seen_midway < 100, seen_midway  # the bar moved while the job ran
        assert overflow(page) == 0, f"job page is wider than {viewport['width']} px"
        screenshot(page, f"maintenance-job-{label}")
        assert set(Server.objects.filter(name__startswith="web").values_list("host", flat=True)) <= {
            "compute-b",
            "compute-c",
        }

        page.goto(f"{base}/aggregates/{aggregate.id}/")
        headroom = page.locator("#headroom")
        expect(headroom).to_have_attribute("data-loaded", "1", timeout=15000)
        expect(headroom.locator(".headroom-sentence")).to_contain_text("of 3 hosts")
        headroom.scroll_into_view_if_needed()
        assert overflow(page) == 0, f"aggregate page is wider than {viewport['width']} px"
        screenshot(page, f"maintenance-headroom-{label}")
        page.goto(f"{base}/zones/")
        expect(page.locator("#headroom-az-1")).to_have_attribute("data-loaded", "1", timeout=15000)
        assert overflow(page) == 0, f"zones page is wider than {viewport['width']} px"
        screenshot(page, f"maintenance-zones-{label}")

        page.goto(f"{base}/hosts/compute-a/")
        expect(page.locator("#maintenance-state")).to_have_text("in maintenance")
        page.check("#maintenance-form input[name=rebalance]")
        page.click("#maintenance-form button:has-text('Preview stop maintenance')")
        expect(page.locator("#plan-summary")).to_contain_text(f"{SERVERS} of {SERVERS}")
        page.click("#maintenance-confirm button:has-text('Confirm: stop maintenance')")
        expect(page.locator("h1")).to_have_text("End of maintenance of compute-a")
        expect(page.locator("#job-progress")).to_have_attribute("data-finished", "1", timeout=30000)
        assert set(Server.objects.filter(name__startswith="web").values_list("host", flat=True)) == {"compute-a"}
        assert violations == []
    finally:
        page.context.close()
