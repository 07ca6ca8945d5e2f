"""The console on a phone (390 px) and on desktops (1280 and 1400 px): no page
scrolls sideways, the navigation folds behind "Menu", "Log out" stays on
screen, and nothing the Content-Security-Policy refuses is on any page."""

import pytest

from aggregates.addressing.models import AddressPool
from aggregates.flavors.models import Flavor
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.models import Project
from tests.plugins.browser import overflow, watched_page

from .conftest import log_in, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
WIDE = {"width": 1400, "height": 900}


def console_pages():
    aggregate = Aggregate.objects.order_by("id").first()
    aggregate_ids = list(Aggregate.objects.order_by("id").values_list("id", flat=True)[:4])
    host = Service.objects.filter(binary="nova-compute").order_by("host").first().host
    flavor = Flavor.objects.order_by("flavorid").first()
    private = Flavor.objects.filter(is_public=False).order_by("flavorid").first()
    node = ComputeNode.objects.order_by("id").first()
    pages = {
        "overview": "/",
        "aggregates": "/aggregates/",
        "aggregate-create": "/aggregates/new/",
        "aggregates-delete": "/aggregates/delete/?" + "&".join(f"id={pk}" for pk in aggregate_ids) + "&back=name%3Da",
        "aggregate": f"/aggregates/{aggregate.id}/",
        "aggregate-edit": f"/aggregates/{aggregate.id}/edit/",
        "zones": "/zones/",
        "hosts": "/hosts/",
        "host": f"/hosts/{host}/",
        "flavors": "/flavors/",
        "flavor-create": "/flavors/new/",
        "flavor": f"/flavors/{flavor.flavorid}/",
        "flavor-private": f"/flavors/{private.flavorid}/",
        "addresses": "/addresses/",
        "address-pool-create": "/addresses/new/",
        "address-pool": f"/addresses/{AddressPool.objects.get(name='private').uuid}/",
        "providers": "/resource-providers/",
        "images": "/images/",
        "image-create": "/images/new/",
        "projects": "/projects/",
        "project": f"/projects/{Project.objects.get(name='demo').id}/",
        "project-quotas": f"/projects/{Project.objects.get(name='demo').id}/quotas/",
        "users": "/users/",
        "events": "/events/",
        "search": "/search/?q=az1",
    }
    if node is not None:
        pages["provider"] = f"/resource-providers/{node.uuid}/"
    return pages


@pytest.mark.parametrize("label, viewport", [("phone", PHONE), ("desktop", DESKTOP), ("wide", WIDE)])
def test_no_page_scrolls_sideways(browser, mirrored_demo_url, label, viewport):
    base = mirrored_demo_url
    page, violations = watched_page(browser, viewport)
    try:
        page.goto(f"{base}/login/")
        assert overflow(page) == 0, "login"
        screenshot(page, f"{label}-login")
        log_in(page, base, "admin")
        for name, path in console_pages().items():
            page.goto(base + path)
            page.wait_for_load_state("load")
            assert page.locator("h1").first.is_visible(), name
            assert overflow(page) == 0, f"{name} ({path}) is wider than {viewport['width']} px"
            logout = page.locator("header button:has-text('Log out')")
            box = logout.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], f"Log out cut off on {name}"
            screenshot(page, f"{label}-{name}")
        assert violations == []
    finally:
        page.context.close()


def test_the_phone_navigation_folds_behind_menu(browser, demo_url):
    page, _ = watched_page(browser, PHONE)
    try:
        log_in(page, demo_url, "admin")
        nav = page.locator("header nav")
        expect(nav).to_be_hidden()
        header_height = page.locator("header").bounding_box()["height"]
        assert header_height < 80, header_height
        page.click("label:has-text('Menu')")
        expect(nav).to_be_visible()
        screenshot(page, "phone-menu-open")
        page.click("header nav >> text=Hosts")
        page.wait_for_url(f"{demo_url}/hosts/")
        expect(page.locator("header nav")).to_be_hidden()
        assert page.locator("header nav a.active").all_inner_texts() == ["Hosts"]
    finally:
        page.context.close()


def test_a_refused_form_is_not_posted_again_by_a_refresh(browser, demo_url):
    page, _ = watched_page(browser, DESKTOP)
    try:
        log_in(page, demo_url, "admin")
        page.goto(f"{demo_url}/aggregates/new/")
        page.fill("input[name=name]", " padded")
        page.click("button:has-text('Create')")
        expect(page.locator(".errorlist")).to_be_visible()
        assert page.url == f"{demo_url}/aggregates/new/"
        requests = []
        page.on("request", lambda request: requests.append(request.method))
        page.reload()
        assert requests and requests[0] == "GET"
    finally:
        page.context.close()


def test_desktop_navigation_is_always_shown(browser, demo_url):
    page, _ = watched_page(browser, DESKTOP)
    try:
        log_in(page, demo_url, "admin")
        expect(page.locator("header nav")).to_be_visible()
        expect(page.locator("label:has-text('Menu')")).to_be_hidden()
        # One row at 1280 px: the user's corner sits beside the navigation.
        brand = page.locator("header .brand").bounding_box()
        logout = page.locator("header button:has-text('Log out')").bounding_box()
        assert abs((logout["y"] + logout["height"] / 2) - (brand["y"] + brand["height"] / 2)) < 12, (brand, logout)
    finally:
        page.context.close()
