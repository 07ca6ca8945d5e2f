"""The Scheduling page in a browser, on a desktop (1280 px) and a phone
(390 px), against the demo cloud mirrored into its own placement: the hosts
table renders without the page scrolling sideways, a click on a column
header sorts it (a second click reverses), the filter shows only rejected
hosts, and no script or style the Content-Security-Policy refuses is used."""

import re
from urllib.parse import unquote

import pytest

from aggregates.hosts.models import ComputeNode
from aggregates.images.models import Image
from aggregates.servers.models import instances_by_host
from tests.plugins.browser import watched_page

from .conftest import SCREENSHOTS, log_in, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter", "AggregateMultiTenancyIsolation"]


def viewport_screenshot(page, selector, name):
    """What the window shows with ``selector`` at its top (a full page of 46 hosts is too tall to review)."""
    page.locator(selector).scroll_into_view_if_needed()
    page.evaluate("(selector) => document.querySelector(selector).scrollIntoView()", selector)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def no_sideways_scroll(page):
    return page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")


def column(page, index):
    """The visible cells of column ``index`` (0-based) of the hosts table, as text."""
    return page.evaluate(
        """(index) => Array.from(document.querySelectorAll('#decision-hosts tbody tr'))
             .filter((row) => !row.hidden).map((row) => row.cells[index].textContent.trim())""",
        index,
    )


def weights(page):
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('#decision-hosts tbody tr')).map(
             (row) => row.cells[6].getAttribute('data-sort-value'))"""
    )


@pytest.mark.parametrize("label, viewport", [("desktop", DESKTOP), ("phone", PHONE)])
def test_scheduling_page_table_fits_and_sorts(browser, mirrored_demo_url, settings, label, viewport):
    settings.ENABLED_FILTERS = FILTERS
    base = mirrored_demo_url
    nodes = ComputeNode.objects.count()
    page, violations = watched_page(browser, viewport)
    try:
        log_in(page, base, "admin")
        page.goto(f"{base}/scheduling/")
        expect(page.locator("h1")).to_have_text("Scheduling")
        assert no_sideways_scroll(page), f"the empty form is wider than {viewport['width']} px"
        screenshot(page, f"{label}-scheduling-form")

        page.select_option("select[name=flavor]", "ssd.medium")
        page.fill("input[name=num_instances]", "2")
        page.click("button:has-text('Explain')")
        page.wait_for_load_state("load")
        assert "flavor=ssd.medium" in page.url  # a GET form: the answer is linkable
        rows = page.locator("#decision-hosts tbody tr")
        expect(rows).to_have_count(nodes)
        assert page.locator("#decision-hosts tr.result-chosen").count() == 2
        rejected = page.locator("#decision-hosts tr.result-rejected")
        assert rejected.count() > 0
        assert rejected.filter(has_text="AggregateInstanceExtraSpecsFilter").count() > 0
        assert no_sideways_scroll(page), f"the decision is wider than {viewport['width']} px"
        expect(page.locator("#placement-query")).to_contain_text("resources=")

        # Sort by host: ascending, then descending on a second click.
        page.click("#decision-hosts th:nth-child(1) button")
        hosts = column(page, 0)
        assert hosts == sorted(hosts, key=str.lower)
        expect(page.locator("#decision-hosts th:nth-child(1)")).to_have_attribute("aria-sort", "ascending")
        page.click("#decision-hosts th:nth-child(1) button")
        assert column(page, 0) == sorted(hosts, key=str.lower, reverse=True)
        # Sort by weight: numbers in order, hosts without a weight last.
        page.click("#decision-hosts th:nth-child(7) button")
        values = weights(page)
        numbers = [float(v) for v in values if v]
        assert numbers == sorted(numbers)
        assert all(v for v in values[: len(numbers)]) and not any(values[len(numbers) :])
        # Sort by result: chosen first.
        page.click("#decision-hosts th:nth-child(3) button")
        assert column(page, 2)[:2] == ["chosen", "chosen"]
        screenshot(page, f"{label}-scheduling")
        viewport_screenshot(page, "#result", f"{label}-scheduling-summary")
        viewport_screenshot(page, ".host-filter", f"{label}-scheduling-table")

        # The filter: rejected hosts only.
        page.select_option("[data-filter=result]", "rejected")
        visible = column(page, 2)
        assert visible and set(visible) == {"rejected"} and len(visible) == rejected.count()
        expect(page.locator("[data-filter-count]")).to_contain_text(f"of {nodes} hosts shown")
        page.select_option("[data-filter=result]", "")
        page.fill("[data-filter=text]", "AggregateInstanceExtraSpecsFilter")
        assert set(column(page, 4)) == {"AggregateInstanceExtraSpecsFilter"}
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-scheduling-filtered")

        # The stored decision: the same table.
        page.click("#decision-link")
        page.wait_for_url("**/scheduling/decisions/**")
        expect(page.locator("#decision-hosts tbody tr")).to_have_count(nodes)
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-scheduling-decision")
        assert violations == []
    finally:
        page.context.close()


@pytest.mark.parametrize("label, viewport", [("desktop", DESKTOP), ("phone", PHONE)])
def test_boot_a_server_from_the_console(browser, mirrored_demo_url, label, viewport):
    base = mirrored_demo_url
    page, violations = watched_page(browser, viewport)
    page.on("dialog", lambda dialog: dialog.accept())
    try:
        log_in(page, base, "admin")
        Image.objects.create(
            name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
        )
        page.goto(f"{base}/servers/new/")
        page.fill("input[name=name]", f"{label}-web")
        page.select_option("select[name=flavor]", "1")
        page.select_option("select[name=image]", index=1)
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-server-create")
        page.click("button:has-text('Boot')")
        page.wait_for_url("**/servers/*/")
        expect(page.locator("h1")).to_contain_text(f"{label}-web")
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-server")
        # Resize from its page (the first other flavor), then confirm it.
        expect(page.locator("#resize-server")).to_be_visible()
        page.select_option("#resize-flavor", index=1)
        page.click("#resize-server button:has-text('Resize')")
        expect(page.locator("#verify-resize")).to_be_visible()
        expect(page.locator("h1")).to_contain_text("VERIFY_RESIZE")
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-server-verify-resize")
        page.click("#confirm-resize button")
        expect(page.locator("#verify-resize")).to_have_count(0)
        expect(page.locator("h1")).to_contain_text("ACTIVE")
        # The server's host counts it (with the VMs its agent reports, as
        # os-hypervisors does), and shows placement's usage.
        page.click("dd >> a[href^='/hosts/']")
        page.wait_for_url("**/hosts/*/")
        host = unquote(page.url.rstrip("/").rsplit("/", 1)[-1])
        instances = instances_by_host([host])[host]
        assert instances >= 1
        expect(page.locator("#host-instances")).to_contain_text(re.compile(rf"(^|\D){instances} instances?\b"))
        expect(page.locator("#usage-source")).to_be_visible()
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-host-usage")
        page.goto(f"{base}/servers/")
        expect(page.locator("#servers")).to_contain_text(f"{label}-web")
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-servers")
        assert violations == []
    finally:
        page.context.close()
