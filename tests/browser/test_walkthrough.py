"""The seed walkthrough, clicked through the console in headless Chromium."""

import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from aggregates.demo import seed as demo
from aggregates.flavors.models import Flavor
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import Service

from .conftest import log_in, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect


def open_aggregate(page, base_url, name):
    page.goto(f"{base_url}/aggregates/?name={name}")
    page.click(f"table >> text='{name}'")
    expect(page.locator("h1")).to_contain_text(name)


def live_search(page, text):
    """Type into the host picker's search and wait for the list to refresh."""
    with page.expect_response(lambda response: f"host_q={text}" in response.url):
        page.fill("input[name=host_q]", text)


def test_seed_walkthrough(page, mirrored_demo_url):
    demo_url = mirrored_demo_url
    log_in(page, demo_url, "admin")

    # Create aggregate fast-io in zone nova.
    page.click("nav >> text=Aggregates")
    page.click("text=Create aggregate")
    page.fill("input[name=name]", "fast-io")
    page.fill("input[name=availability_zone]", "nova")
    page.click("button:has-text('Create')")
    expect(page.locator(".alert.success")).to_contain_text("Aggregate fast-io created")
    expect(page.locator("h1")).to_contain_text("zone nova")
    screenshot(page, "01-aggregate-created")

    # Set ssd=true.
    page.fill("input[name=meta-1-key]", "ssd")
    page.fill("input[name=meta-1-value]", "true")
    page.click("button:has-text('Save metadata')")
    expect(page.locator(".alert.success")).to_contain_text("Metadata saved")
    expect(page.locator("#metadata + .table-wrap")).to_contain_text("ssd")
    screenshot(page, "02-metadata-set")

    # Add node1 and node2 with the picker (its live search narrows the list as one types).
    page.click("summary:has-text('Add hosts')")
    live_search(page, "node")
    expect(page.locator("#picker tbody tr")).to_have_count(4)
    page.check("#pick-node1")
    page.check("#pick-node2")
    screenshot(page, "03-hosts-picked")
    page.click("button:has-text('Add selected hosts')")
    expect(page.locator(".alert.success")).to_contain_text("Added node1, node2 to fast-io")
    hosts_table = page.locator("#hosts + .table-wrap")
    expect(hosts_table).to_contain_text("node1")
    expect(hosts_table).to_contain_text("node2")
    expect(hosts_table.locator("text=in placement")).to_have_count(2)
    screenshot(page, "04-hosts-added")

    # Create flavor ssd.large asking for aggregate_instance_extra_specs:ssd=true.
    page.click("nav >> text=Flavors")
    page.click("text=Create flavor")
    page.fill("input[name=name]", "ssd.large")
    page.fill("input[name=id]", "ssd.large")
    page.fill("input[name=vcpus]", "4")
    page.fill("input[name=ram]", "8192")
    page.fill("input[name=disk]", "80")
    page.click("button:has-text('Create')")
    expect(page.locator(".alert.success")).to_contain_text("Flavor ssd.large created")
    page.fill("input[name=key]", "aggregate_instance_extra_specs:ssd")
    page.fill("input[name=value]", "true")
    page.click("button:has-text('Set')")
    expect(page.locator("#extra-specs + .table-wrap")).to_contain_text("aggregate_instance_extra_specs:ssd")
    screenshot(page, "05-flavor-created")

    # Try to put node1 in a second zone: the picker refuses before submit, the form after.
    page.goto(f"{demo_url}/aggregates/new/")
    page.fill("input[name=name]", "fast-io-az2")
    page.fill("input[name=availability_zone]", "az2")
    page.fill("textarea[name=hosts]", "node1")
    page.click("button:has-text('Create')")
    error = page.locator(".field.has-error .errorlist")
    expect(error).to_contain_text("Host node1 can be in only one availability zone")
    expect(page.locator("input[name=name]")).to_have_value("fast-io-az2")
    screenshot(page, "06-second-zone-refused-on-create")
    page.fill("textarea[name=hosts]", "")
    page.click("button:has-text('Create')")
    expect(page.locator(".alert.success")).to_contain_text("Aggregate fast-io-az2 created")
    page.click("summary:has-text('Add hosts')")
    live_search(page, "node1")
    row = page.locator("#picker tr", has_text="node1")
    expect(row.locator(".reason")).to_contain_text("node1 is in zone nova through fast-io")
    expect(row.locator("input[type=checkbox]")).to_be_disabled()
    screenshot(page, "07-second-zone-refused-in-picker")

    # Remove a host, then the rest, then delete the aggregate.
    open_aggregate(page, demo_url, "fast-io")
    expect(page.locator("button.danger:has-text('Delete')")).to_be_disabled()
    expect(page.locator("#delete-reason")).to_contain_text("remove its 2 host(s) first")
    page.click("button[aria-label='Remove node2']")
    expect(page.locator(".alert.success")).to_contain_text("Removed node2 from fast-io")
    screenshot(page, "08-host-removed")
    page.check("input[aria-label='Select node1']")
    page.click("button:has-text('Remove selected hosts')")
    expect(page.locator(".alert.success")).to_contain_text("Removed node1 from fast-io")
    page.click("button.danger:has-text('Delete')")
    expect(page.locator(".alert.success")).to_contain_text("Aggregate fast-io deleted")
    expect(page).to_have_url(re.compile(r"/aggregates/$"))
    screenshot(page, "09-aggregate-deleted")

    assert not Aggregate.objects.filter(name="fast-io").exists()
    assert services.hosts_of(services.get_aggregate(Aggregate.objects.get(name="fast-io-az2").id)) == []
    assert Flavor.objects.get(flavorid="ssd.large").extra_spec_items.get().value == "true"

    # The audit log tells the story, refusal included.
    page.click("nav >> text=Events")
    page.select_option("select[name=priority]", "ERROR")
    page.click("button:has-text('Filter')")
    expect(page.locator("tbody")).to_contain_text("Host node1 can be in only one availability zone")
    screenshot(page, "10-audit-log-refusal")


def test_readme_screenshots_of_the_demo(page, dark_page, mirrored_demo_url):
    demo_url = mirrored_demo_url
    # A few minutes into the demo: the silent agent's host is down, and the
    # reconciler has compared placement with Corral once.
    Service.objects.filter(host__in=demo.DOWN_HOSTS).update(last_seen_up=timezone.now() - timedelta(minutes=5))
    call_command("sync_placement_aggregates", verbosity=0)
    log_in(page, demo_url, "admin")
    expect(page.locator(".cards")).to_contain_text("46")
    expect(page.locator("text=Hosts needing attention")).to_be_visible()
    screenshot(page, "overview", readme=True)
    open_aggregate(page, demo_url, "gpu-nodes")
    expect(page.locator("#hosts + .table-wrap")).to_contain_text("cmp-az3-11")
    expect(page.locator("#hosts + .table-wrap >> text=in placement")).to_have_count(4)
    screenshot(page, "aggregate", readme=True)
    page.goto(f"{demo_url}/aggregates/")
    screenshot(page, "aggregates")
    for name, path in (
        ("zones", "/zones/"),
        ("hosts", "/hosts/"),
        ("flavors", "/flavors/"),
        ("providers", "/resource-providers/"),
        ("events", "/events/"),
    ):
        page.goto(demo_url + path)
        expect(page.locator("h1")).to_be_visible()
        screenshot(page, name)
    log_in(dark_page, demo_url, "admin")
    open_aggregate(dark_page, demo_url, "gpu-nodes")
    background = dark_page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(17, 21, 28)"
    screenshot(dark_page, "aggregate-dark")


def test_reader_sees_everything_and_changes_nothing(page, demo_url):
    log_in(page, demo_url, "reader")
    open_aggregate(page, demo_url, "az1-general")
    expect(page.locator("text=read-only")).to_be_visible()
    expect(page.locator("text=Add selected hosts")).to_have_count(0)
    expect(page.locator("text=Save metadata")).to_have_count(0)
    expect(page.locator("button:has-text('Remove')")).to_have_count(0)
    screenshot(page, "reader-aggregate")
    page.goto(f"{demo_url}/aggregates/new/")
    expect(page.locator("h1")).to_have_text("Not allowed")


def test_anonymous_visitors_are_sent_to_log_in(page, server_url):
    page.goto(f"{server_url}/aggregates/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/aggregates/"))
    screenshot(page, "login")
