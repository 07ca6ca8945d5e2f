"""The console's capacity page in headless Chromium on the demo cloud, at
1400 px and at 390 px: the current table with what runs out first, and each
zone's history drawn as one line per flavor (samples taken hours apart,
hosts disabled between them); no page scrolls sideways and the CSP refuses
nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from aggregates.capacity import services
from aggregates.flavors.models import Flavor
from aggregates.hosts import services as hosts
from aggregates.hosts.models import Service
from aggregates.identity.caller import Caller
from tests.plugins.browser import overflow, watched_page

from .conftest import SCREENSHOTS, log_in, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1400, "height": 900}


@pytest.fixture
def sampled_demo_url(mirrored_demo_url, settings):
    """The demo cloud with four samples an hour apart, two hosts of az1 disabled after the second."""
    system = Caller.system("tests")
    start = timezone.now() - timedelta(hours=4)
    for hour in range(4):
        if hour == 2:
            for service in Service.objects.filter(binary="nova-compute", host__startswith="cmp-az1")[:2]:
                hosts.update_service(system, service.uuid, status="disabled", disabled_reason="capacity test")
        services.sample(start + timedelta(hours=hour), force=True)
    services.SAMPLE_WITHOUT_BROKER.last = float("inf")  # the page draws these samples only
    return mirrored_demo_url


@pytest.mark.parametrize("label, viewport", [("desktop", DESKTOP), ("phone", PHONE)])
def test_the_capacity_page(browser, sampled_demo_url, label, viewport):
    base = sampled_demo_url
    page, violations = watched_page(browser, viewport)
    try:
        log_in(page, base, "admin")
        page.goto(f"{base}/capacity/")
        expect(page.locator("h1")).to_have_text("Capacity by flavor")
        public = Flavor.objects.filter(is_public=True, disabled=False).count()
        assert public == 11  # the demo's 12 flavors, one private
        assert page.locator(".capacity-table thead th").count() == 2 + public
        zone = page.locator('.capacity-table tr[data-scope="zone"][data-name="az1"]')
        expect(zone.locator('td[data-flavor="m1.small"] .limited-by')).not_to_be_empty()
        chart = page.locator('figure.capacity-chart[data-scope="availability_zone"][data-name="az1"]')
        expect(chart).to_contain_text("4 samples")
        assert chart.locator("polyline").count() == public
        assert overflow(page) == 0, f"capacity page is wider than {viewport['width']} px"
        screenshot(page, f"capacity-{label}", readme=label == "desktop")
        page.locator(".capacity-table").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"capacity-{label}-table.png"))
        assert violations == []
    finally:
        page.context.close()
