"""A refused form answers its POST with the page and the errors; a reload
in the browser then loads the page (GET) and never posts the form again,
and one navigation item stays highlighted."""

import pytest

from aggregates.audit.models import Event
from aggregates.host_aggregates import services
from aggregates.hosts import services as host_services
from aggregates.hosts.models import Service
from aggregates.identity.caller import Caller

from .conftest import log_in

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect


def refusals():
    return Event.objects.filter(event_type="compute.exception").count()


def reload_counting_posts(page):
    """Reload; return the methods of the requests sent for the document."""
    methods = []
    page.on("request", lambda request: request.is_navigation_request() and methods.append(request.method))
    page.reload()
    page.wait_for_load_state("load")
    return methods


@pytest.fixture
def zones_apart(demo_url):
    """reload-a (zone az-r1, empty) and reload-b (zone az-r2, holding cmp-reload)."""
    system = Caller.system("tests")
    host_services.register_host(system, "cmp-reload", None, vcpus=8, memory_mb=16384, local_gb=100)
    a = services.create_aggregate(system, "reload-a", "az-r1")
    b = services.create_aggregate(system, "reload-b", "az-r2")
    return system, a, b


def test_a_refused_add_hosts_is_not_posted_again_by_a_reload(page, demo_url, zones_apart):
    system, a, b = zones_apart
    log_in(page, demo_url, "admin")
    page.goto(f"{demo_url}/aggregates/{a.id}/")
    page.click("summary:has-text('Add hosts')")
    with page.expect_response(lambda response: "host_q=cmp-reload" in response.url):
        page.fill("input[name=host_q]", "cmp-reload")
    page.check("#pick-cmp-reload")
    # Meanwhile, someone puts the host in another zone.
    services.add_host(system, b.id, "cmp-reload")
    before = refusals()
    page.click("button:has-text('Add selected hosts')")
    expect(page.locator(".errorlist.nonfield")).to_contain_text("Host cmp-reload can be in only one availability zone")
    assert refusals() == before + 1
    assert page.locator("header nav a.active").all_inner_texts() == ["Aggregates"]
    methods = reload_counting_posts(page)
    assert methods == ["GET"], methods
    assert refusals() == before + 1
    assert page.url == f"{demo_url}/aggregates/{a.id}/#add-hosts"
    assert page.locator("header nav a.active").all_inner_texts() == ["Aggregates"]
    assert "cmp-reload" not in services.hosts_of(services.get_aggregate(a.id))


def test_a_refused_metadata_change_is_not_posted_again_by_a_reload(page, demo_url, zones_apart):
    system, _, b = zones_apart
    services.add_host(system, b.id, "cmp-reload")
    c = services.create_aggregate(system, "reload-c")
    services.add_host(system, c.id, "cmp-reload")
    log_in(page, demo_url, "admin")
    page.goto(f"{demo_url}/aggregates/{c.id}/")
    page.fill("input[name=meta-0-key]", "availability_zone")
    page.fill("input[name=meta-0-value]", "az-elsewhere")
    before = refusals()
    page.click("button:has-text('Save metadata')")
    expect(page.locator(".errorlist.nonfield")).to_contain_text("only one availability zone")
    assert refusals() == before + 1
    methods = reload_counting_posts(page)
    assert methods == ["GET"], methods
    assert refusals() == before + 1
    assert page.url == f"{demo_url}/aggregates/{c.id}/#metadata"
    assert page.locator("header nav a.active").all_inner_texts() == ["Aggregates"]
    assert services.availability_zone_of(services.get_aggregate(c.id)) is None


def test_a_refused_host_status_form_is_not_posted_again_by_a_reload(page, demo_url, zones_apart):
    log_in(page, demo_url, "admin")
    page.goto(f"{demo_url}/hosts/cmp-reload/")
    page.fill("input[name=disabled_reason]", "r" * 256)
    updates = Event.objects.filter(event_type="service.update").count()
    page.click("button:has-text('Disable host')")
    expect(page.locator(".errorlist")).to_contain_text("is too long")
    methods = reload_counting_posts(page)
    assert methods == ["GET"], methods
    assert page.url == f"{demo_url}/hosts/cmp-reload/"
    assert page.locator("header nav a.active").all_inner_texts() == ["Hosts"]
    assert Event.objects.filter(event_type="service.update").count() == updates
    assert not Service.objects.get(host="cmp-reload").disabled


def test_bulk_disable_on_the_hosts_list_goes_back_to_the_filtered_list(page, demo_url, zones_apart):
    log_in(page, demo_url, "admin")
    page.goto(f"{demo_url}/hosts/?host=cmp-reload")
    page.check("#select-cmp-reload")
    page.fill("#bulk-status input[name=disabled_reason]", "rack work")
    page.click("button:has-text('Disable selected')")
    expect(page.locator(".alert.success")).to_contain_text("Disabled 1 host(s): cmp-reload.")
    assert page.url == f"{demo_url}/hosts/?host=cmp-reload"
    service = Service.objects.get(host="cmp-reload")
    assert service.disabled and service.disabled_reason == "rack work"
    methods = reload_counting_posts(page)
    assert methods == ["GET"]


def test_delete_selected_aggregates_after_the_confirm_step(page, demo_url, zones_apart):
    _, a, b = zones_apart
    log_in(page, demo_url, "admin")
    page.goto(f"{demo_url}/aggregates/?name=reload")
    # The header box checks every row of the filtered list (both reload aggregates).
    page.check("[data-select-all=bulk-delete]")
    assert page.is_checked(f"#select-{a.id}") and page.is_checked(f"#select-{b.id}")
    page.click("button:has-text('Delete selected')")
    expect(page.locator("h1")).to_contain_text("Delete 2 aggregates?")
    page.click("button:has-text('Delete 2 aggregates')")
    expect(page.locator(".alert.success")).to_contain_text("Deleted 2 aggregate(s): reload-a, reload-b.")
    assert page.url == f"{demo_url}/aggregates/?name=reload"
    expect(page.locator("table tbody")).to_contain_text("No aggregate matches.")
