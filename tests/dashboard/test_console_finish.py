"""Issue 10, console: refusals that a refresh cannot post again and one
highlighted navigation item, refusals in the operator's words, metadata
changes counted as they are, one card per zone agreeing with the overview,
the default-zone warning at create time, "Log out" for refused accounts,
sort state on column headers, and a favicon."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.test import Client

from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import Service
from aggregates.identity import services as identity


@pytest.fixture
def fast_io(system, hosts):
    aggregate = services.create_aggregate(system, "fast-io", "az1")
    services.set_metadata(system, aggregate.id, {"ssd": "true", "tier": "gold"})
    services.add_host(system, aggregate.id, "node1")
    return aggregate


def active_nav(html):
    return re.findall(r'<a href="[^"]*" class="active">([^<]+)</a>', html)


# --- refusals: one highlighted item, and a refresh loads the page instead of posting -----------


def test_a_refused_add_hosts_highlights_only_aggregates_and_names_the_page_to_reload(admin_client, fast_io, other_zone):
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/add/", {"hosts": ["node3"]})
    assert response.status_code == 400
    html = response.content.decode()
    assert active_nav(html) == ["Aggregates"]
    assert f'data-canonical-url="/aggregates/{fast_io.id}/#add-hosts"' in html


def test_every_page_highlights_one_navigation_item(admin_client, fast_io):
    for url, item in [
        ("/", "Overview"),
        (f"/aggregates/{fast_io.id}/", "Aggregates"),
        ("/hosts/node1/", "Hosts"),
        ("/zones/", "Zones"),
        ("/flavors/", "Flavors"),
        ("/resource-providers/", "Placement"),
        ("/events/", "Events"),
    ]:
        assert active_nav(admin_client.get(url).content.decode()) == [item], url


def test_a_refused_host_status_names_the_host_page_to_reload(admin_client, hosts):
    response = admin_client.post("/hosts/node1/status/", {"action": "disable", "disabled_reason": "x" * 256})
    assert response.status_code == 400
    assert b'data-canonical-url="/hosts/node1/"' in response.content


def test_a_refused_create_names_its_own_page_to_reload(admin_client, db):
    response = admin_client.post("/aggregates/new/", {"name": ""})
    assert response.status_code == 400 and b'data-canonical-url="/aggregates/new/"' in response.content


def test_pages_answering_a_get_name_no_page_to_reload(admin_client, fast_io):
    assert b"data-canonical-url" not in admin_client.get(f"/aggregates/{fast_io.id}/").content


# --- create: the operator's words, and the default-zone warning -------------------------------


def test_a_refused_create_names_what_was_typed_and_says_nothing_was_created(admin_client, other_zone):
    before = Aggregate.objects.count()
    response = admin_client.post(
        "/aggregates/new/", {"name": "fast-io", "availability_zone": "az1", "hosts": "node1\nnode3"}
    )
    assert response.status_code == 400
    error = response.context["form"].errors["hosts"][0]
    assert "Cannot add host to aggregate fast-io" in error and "Nothing was created" in error
    assert not re.search(r"aggregate \d+", error)
    assert Aggregate.objects.count() == before


def test_create_in_the_default_zone_by_name_warns(admin_client, hosts):
    response = admin_client.post("/aggregates/new/", {"name": "pinned", "availability_zone": "nova"}, follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    assert "alert warning" in html and "names the default zone nova explicitly" in html


def test_create_in_a_named_zone_does_not_warn(admin_client, hosts):
    response = admin_client.post("/aggregates/new/", {"name": "ok", "availability_zone": "az7"}, follow=True)
    assert "names the default zone" not in response.content.decode()


# --- metadata: real changes only, named ---------------------------------------------------------


def metadata_post(rows):
    data = {"meta-TOTAL_FORMS": str(len(rows)), "meta-INITIAL_FORMS": "0"}
    for i, row in enumerate(rows):
        for key, value in row.items():
            data[f"meta-{i}-{key}"] = value
    return data


def test_metadata_counts_and_names_the_real_changes(admin_client, fast_io):
    rows = [
        {"key": "availability_zone", "value": "az1"},
        {"key": "ssd", "value": "true"},
        {"key": "tier", "value": "silver"},
        {"key": "new", "value": "1"},
        {"key": "gone", "value": "x", "remove": "on"},
    ]
    response = admin_client.post(f"/aggregates/{fast_io.id}/metadata/", metadata_post(rows), follow=True)
    html = response.content.decode()
    assert "Metadata saved: added new=1; changed tier=silver." in html
    assert services.metadata_of(services.get_aggregate(fast_io.id)) == {
        "availability_zone": "az1",
        "ssd": "true",
        "tier": "silver",
        "new": "1",
    }


def test_metadata_saved_unchanged_says_nothing_changed(admin_client, fast_io):
    rows = [{"key": "ssd", "value": "true"}, {"key": "tier", "value": "gold"}]
    response = admin_client.post(f"/aggregates/{fast_io.id}/metadata/", metadata_post(rows), follow=True)
    html = response.content.decode()
    assert "Nothing to change" in html and "Metadata saved" not in html


def test_metadata_removal_is_named(admin_client, fast_io):
    rows = [{"key": "tier", "value": "gold", "remove": "on"}]
    response = admin_client.post(f"/aggregates/{fast_io.id}/metadata/", metadata_post(rows), follow=True)
    assert "Metadata saved: removed tier." in response.content.decode()


# --- zones: one card per zone, and the overview agrees ---------------------------------------


def test_one_default_zone_card_holds_both_kinds_of_host(admin_client, system, hosts, other_zone):
    pinned = services.create_aggregate(system, "pinned", "nova")
    services.add_host(system, pinned.id, "node2")
    response = admin_client.get("/zones/")
    cards = response.context["cards"]
    names = [card["name"] for card in cards]
    assert names.count("nova") == 1
    nova = next(card for card in cards if card["name"] == "nova")
    assert nova["hosts"] == ["node1", "node2"] and nova["default_only"] == ["node1"] and nova["explicit_default"]
    assert response.content.decode().count('id="zone-nova"') == 1


def test_the_overview_counts_the_zones_the_zones_page_shows(admin_client, system, hosts, other_zone):
    Service.objects.create(host="controller", binary="nova-scheduler", topic="scheduler")
    services.create_aggregate(system, "empty-zone", "az9")
    cards = admin_client.get("/zones/").context["cards"]
    with_hosts = [card["name"] for card in cards if card["hosts"]]
    assert sorted(with_hosts) == ["az2", "internal", "nova"]
    counts = admin_client.get("/").context["counts"]
    assert counts["zones"] == len(with_hosts) == 3 and counts["zones_empty"] == 1


# --- refused accounts are offered "Log out" ------------------------------------------------


def test_a_member_refused_by_the_console_is_offered_log_out(db):
    user = get_user_model().objects.create_user("member", password="pw", is_staff=True)
    identity.grant(user, identity.ensure_project("demo"), "member")
    client = Client()
    client.force_login(user)
    response = client.get("/aggregates/")
    html = response.content.decode()
    assert response.status_code == 403 and "holds neither role" in html
    assert 'action="/logout/"' in html and ">Log out</button>" in html
    assert 'href="/aggregates/"' not in html and "Back to the overview" not in html


def test_a_non_staff_user_sent_to_login_is_offered_log_out(db):
    client = Client()
    client.force_login(get_user_model().objects.create_user("plain", password="pw"))
    response = client.get("/aggregates/", follow=True)
    html = response.content.decode()
    assert "an account the console does not serve" in html and 'action="/logout/"' in html
    assert 'name="password"' not in html


# --- sort headers and the favicon ------------------------------------------------------------


def test_sorted_column_shows_its_direction(admin_client, fast_io):
    html = admin_client.get("/aggregates/?sort=-hosts").content.decode()
    assert re.search(r'<th[^>]*aria-sort="descending"[^>]*>.*▼', html)
    html = admin_client.get("/aggregates/?sort=hosts").content.decode()
    assert 'aria-sort="ascending"' in html


def test_pages_link_a_favicon_that_exists(admin_client, db):
    html = admin_client.get("/").content.decode()
    href = re.search(r'<link rel="icon" href="/static/([^"]+)"', html).group(1)
    assert finders.find(href)


# --- the global search -------------------------------------------------------------------------


def test_the_header_has_a_global_search(admin_client, db):
    html = admin_client.get("/").content.decode()
    assert re.search(r'<form method="get" action="/search/"[^>]*role="search"><input type="search" name="q"', html)


def test_search_finds_hosts_aggregates_and_flavors_by_name_or_uuid(admin_client, fast_io, admin_api):
    admin_api.post("/flavors", {"flavor": {"name": "fast-small", "ram": 512, "vcpus": 1, "disk": 1, "id": "f1"}})
    response = admin_client.get("/search/?q=fast")
    results = response.context["results"]
    assert [a.name for a in results["aggregates"]] == ["fast-io"]
    assert [f.name for f in results["flavors"]] == ["fast-small"]
    assert results["hosts"] == []
    response = admin_client.get(f"/search/?q={fast_io.uuid}")
    assert [a.name for a in response.context["results"]["aggregates"]] == ["fast-io"]
    node = Service.objects.get(host="node2")
    response = admin_client.get(f"/search/?q={node.uuid}")
    assert [s.host for s in response.context["results"]["hosts"]] == ["node2"]
    assert active_nav(response.content.decode()) == []


def test_search_finds_resource_providers(admin_client, make_host, settings, monkeypatch):
    from aggregates import placement_client
    from aggregates.identity import service_token

    settings.PLACEMENT_URL, settings.AUTH_STRATEGY, settings.PLACEMENT_AUTH_TOKEN = "", "keystone", ""
    service_token.forget_service_token()
    placement_client.client().create_provider("7a2b7c1e-5d2a-4b0e-8f6e-1234567890ab", "node7-provider")
    response = admin_client.get("/search/?q=node7-prov")
    assert [p["name"] for p in response.context["results"]["providers"]] == ["node7-provider"]
    assert b"/resource-providers/7a2b7c1e-5d2a-4b0e-8f6e-1234567890ab/" in response.content


def test_an_empty_search_lists_nothing(admin_client, db):
    response = admin_client.get("/search/?q=")
    assert response.status_code == 200 and response.context["total"] == 0
