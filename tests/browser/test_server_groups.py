"""Server groups in the console at 1400 and 390 px, on the demo cloud
mirrored into its own placement: an admin creates an anti-affinity group
with the form, two servers booted into it are listed as its members on
two hosts, and the group is deleted; no page scrolls sideways."""

import pytest

from aggregates.flavors.models import Flavor
from aggregates.identity.caller import Caller
from aggregates.identity.models import Project
from aggregates.images.models import Image
from aggregates.server_groups.models import ServerGroup
from aggregates.servers import services as servers

from .conftest import log_in, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect

WIDE = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}


def no_sideways_scroll(page):
    return page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("label, viewport", [("wide", WIDE), ("phone", PHONE)])
def test_create_show_members_and_delete_a_server_group(browser, mirrored_demo_url, settings, label, viewport):
    settings.ENABLED_FILTERS = ["ComputeFilter", "ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter"]
    base = mirrored_demo_url
    context = browser.new_context(viewport=viewport, color_scheme="light")
    page = context.new_page()
    page.set_default_timeout(15000)
    page.on("dialog", lambda dialog: dialog.accept())
    try:
        log_in(page, base, "admin")
        page.goto(f"{base}/servers/")
        page.click("a:has-text('Server groups')")
        expect(page.locator("h1")).to_have_text("Server groups")
        page.click("a:has-text('Create server group')")
        page.fill("input[name=name]", "web-tier")
        page.select_option("select[name=policy]", "anti-affinity")
        page.fill("input[name=project]", "demo")
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-server-group-create")
        page.click("button:has-text('Create')")
        expect(page.locator("h1")).to_contain_text("web-tier")

        group = ServerGroup.objects.get(name="web-tier")
        project = Project.objects.get(name="demo")
        caller = Caller(username="admin", project_id=str(project.id), roles=frozenset({"admin"}))
        flavor = Flavor.objects.filter(is_public=True, root_gb__gt=0).order_by("memory_mb").first()
        image = Image.objects.filter(status=Image.ACTIVE, visibility=Image.PUBLIC).order_by("name").first()
        for name in ("web-1", "web-2"):
            servers.create_servers(
                caller, name=name, flavor_ref=flavor.flavorid, image_ref=str(image.id), networks="none",
                scheduler_hints={"group": str(group.uuid)},
            )  # fmt: skip

        page.reload()
        rows = page.locator("#group-members tbody tr")
        expect(rows).to_have_count(2)
        hosts = {rows.nth(i).locator("td").nth(2).inner_text() for i in range(2)}
        assert len(hosts) == 2 and "—" not in hosts, hosts
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-server-group", readme=label == "wide")

        page.goto(f"{base}/server-groups/")
        expect(page.locator("#server-groups tbody tr")).to_have_count(2)  # and the demo's own "web"
        assert no_sideways_scroll(page)
        screenshot(page, f"{label}-server-groups")

        page.goto(f"{base}/server-groups/{group.uuid}/")
        page.click("button:has-text('Delete group')")
        expect(page.locator("#server-groups tbody tr")).to_have_count(1)
        expect(page.locator("#server-groups tbody")).not_to_contain_text("web-tier")
    finally:
        context.close()
