"""The console reads placement through the placement client: the provider
pages, the overview's provider count and the aggregate page's mirror states
show what the configured placement holds (Corral's own in process, or an
upstream one), at a bounded number of placement requests per page, and
still render when placement is down."""

import uuid

import pytest

from aggregates import placement_client
from aggregates.host_aggregates import services
from aggregates.hosts.models import ComputeNode
from aggregates.identity import service_token
from aggregates.mirroring.models import PlacementMirrorRequest
from dashboard import placement_views
from placement.services import providers as placement_providers

# The upstream Placement 16.0.0 fixture (skipped without its virtualenv).

VCPU = {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1, "allocation_ratio": 2.0}


def new_uuid():
    return str(uuid.uuid4())


def get(client, url):
    """(response, placement requests the page made)."""
    placement = placement_client.client()
    before = placement.requests_made
    response = client.get(url)
    assert placement_client.client() is placement
    return response, placement.requests_made - before


@pytest.fixture
def own(settings, monkeypatch):
    """Corral's own placement, in process (the default), read with the
    service user's token (issued afresh: one kept from another test's
    rolled-back transaction would cost a 401 and a renewal)."""
    settings.PLACEMENT_URL, settings.AUTH_STRATEGY, settings.PLACEMENT_AUTH_TOKEN = "", "keystone", ""
    service_token.forget_service_token()
    return placement_client.client()


def make_tree(placement, name, children=0):
    root = new_uuid()
    placement.create_provider(root, name)
    placement.set_inventories(root, {"VCPU": VCPU}, ("VCPU",))
    kids = []
    for n in range(children):
        child = new_uuid()
        response = placement.request(
            "POST",
            "/resource_providers",
            "1.20",
            body={"uuid": child, "name": f"{name}_child{n}", "parent_provider_uuid": root},
        )
        assert response.status_code == 200, response.text
        kids.append(child)
    return root, kids


# --- provider list ----------------------------------------------------------------------------


def test_provider_list_is_read_through_the_client(admin_client, own, make_host, system):
    node = make_host("node1")
    aggregate = services.create_aggregate(system, "fast-io", None)
    root, (child,) = make_tree(own, "node1", children=1)
    # The host's node provider: named after the Corral host, aggregates named.
    own.create_provider(node.uuid, "node1-rp")
    own.change_provider_aggregates(node.uuid, add=[aggregate.uuid, new_uuid()])
    own.set_trait(node.uuid, "HW_GPU_API_VULKAN", True)
    placement_client.clear_read_cache()

    response, requests_made = get(admin_client, "/resource-providers/")
    assert response.status_code == 200
    tree = response.context["tree"]
    assert [(r["provider"]["name"], r["depth"]) for r in tree] == [("node1", 0), ("node1_child0", 1), ("node1-rp", 0)]
    (vcpu,) = tree[0]["inventories"]
    assert (vcpu["resource_class"], vcpu["used"], vcpu["capacity"], vcpu["total"]) == ("VCPU", 0, 16, 8)
    assert tree[2]["host"] == "node1" and tree[2]["traits"] == ["HW_GPU_API_VULKAN"]
    assert sorted((a.name if a else None for _, a in tree[2]["aggregates"]), key=str) == [None, "fast-io"]
    # One listing, then inventories, usages, traits and aggregates of each provider shown.
    assert requests_made == 1 + placement_views.REQUESTS_PER_PROVIDER * 3
    content = response.content.decode()
    assert "0 / 16 (0%)" in content and "fast-io" in content and "Corral&#x27;s own placement (in process)" in content


def test_a_page_holds_twenty_roots_with_their_trees(admin_client, own):
    for n in range(25):
        make_tree(own, f"rp-{n:02d}", children=1 if n in (0, 24) else 0)
    placement_client.clear_read_cache()
    response, requests_made = get(admin_client, "/resource-providers/")
    page = response.context["page"]
    assert page.paginator.count == 25 and len(page) == placement_views.ROOTS_PER_PAGE
    names = [r["provider"]["name"] for r in response.context["tree"]]
    assert names[:3] == ["rp-00", "rp-00_child0", "rp-01"] and names[-1] == "rp-19" and len(names) == 21
    assert requests_made == 1 + placement_views.REQUESTS_PER_PROVIDER * 21
    # The listing is cached: page 2 asks only for its own providers.
    response, requests_made = get(admin_client, "/resource-providers/?page=2")
    names = [r["provider"]["name"] for r in response.context["tree"]]
    assert names == ["rp-20", "rp-21", "rp-22", "rp-23", "rp-24", "rp-24_child0"]
    assert requests_made == placement_views.REQUESTS_PER_PROVIDER * 6
    assert b"Page 2 of 2" in response.content


def test_search_filters_roots_on_a_part_of_their_name(admin_client, own):
    make_tree(own, "Compute-A")
    make_tree(own, "storage-b", children=1)
    response = admin_client.get("/resource-providers/?name=STORAGE")
    assert [r["provider"]["name"] for r in response.context["tree"]] == ["storage-b", "storage-b_child0"]


def test_a_second_render_within_the_cache_time_asks_placement_nothing(admin_client, own, settings):
    make_tree(own, "node1", children=1)
    placement_client.clear_read_cache()
    first, requests_made = get(admin_client, "/resource-providers/")
    assert requests_made == 1 + placement_views.REQUESTS_PER_PROVIDER * 2
    second, requests_made = get(admin_client, "/resource-providers/")
    assert requests_made == 0
    assert second.context["tree"] == first.context["tree"]
    # A write through the client empties the cache: the console shows it at once.
    root = first.context["tree"][0]["provider"]["uuid"]
    own.set_trait(root, "HW_CPU_X86_AVX2", True)
    third, requests_made = get(admin_client, "/resource-providers/")
    assert third.context["tree"][0]["traits"] == ["HW_CPU_X86_AVX2"] and requests_made > 0
    # Without a cache, every render asks again.
    settings.PLACEMENT_CONSOLE_CACHE_SECONDS = 0
    _, again = get(admin_client, "/resource-providers/")
    _, and_again = get(admin_client, "/resource-providers/")
    assert again == and_again == 1 + placement_views.REQUESTS_PER_PROVIDER * 2


def test_the_cache_expires(admin_client, own, settings, monkeypatch):
    make_tree(own, "node1")
    placement_client.clear_read_cache()
    clock = [1000.0]
    monkeypatch.setattr(placement_client.read_cache.time, "monotonic", lambda: clock[0])
    _, requests_made = get(admin_client, "/resource-providers/")
    assert requests_made == 5
    clock[0] += settings.PLACEMENT_CONSOLE_CACHE_SECONDS - 0.5
    assert get(admin_client, "/resource-providers/")[1] == 0
    clock[0] += 1
    assert get(admin_client, "/resource-providers/")[1] == 5


# --- provider detail ---------------------------------------------------------------------------


def test_provider_detail(admin_client, own):
    root, (child, other) = make_tree(own, "node1", children=2)
    placement_client.clear_read_cache()
    response, requests_made = get(admin_client, f"/resource-providers/{child}/")
    assert response.status_code == 200
    assert response.context["provider"]["uuid"] == child
    assert response.context["parent"] == {**response.context["parent"], "uuid": root, "name": "node1"}
    assert [p["uuid"] for p in response.context["others_in_tree"]] == [root, other]
    assert requests_made == 2 + placement_views.REQUESTS_PER_PROVIDER
    response = admin_client.get(f"/resource-providers/{root}/")
    assert response.context["parent"] is None and b"(a root)" in response.content
    assert b"16 (0%)" in response.content  # 0 / 16 of VCPU


def test_provider_detail_of_an_unknown_provider_is_404(admin_client, own):
    assert get(admin_client, f"/resource-providers/{new_uuid()}/")[0].status_code == 404
    response, requests_made = get(admin_client, "/resource-providers/not-a-uuid/")
    assert response.status_code == 404 and requests_made == 0


# --- placement down ------------------------------------------------------------------------------


def test_provider_pages_say_placement_is_unreachable(admin_client, settings):
    """conftest points PLACEMENT_URL at a port where nothing listens."""
    response = admin_client.get("/resource-providers/")
    assert response.status_code == 200
    content = response.content.decode()
    assert 'class="alert error"' in content and "is unreachable" in content
    assert settings.PLACEMENT_URL in content and "Unable to communicate with the Placement API" in content
    response = admin_client.get(f"/resource-providers/{new_uuid()}/")
    assert response.status_code == 200 and b"is unreachable" in response.content


def test_overview_renders_with_placement_unreachable(admin_client):
    response = admin_client.get("/")
    assert response.status_code == 200
    assert response.context["counts"]["providers"] is None
    assert response.context["providers_unknown"]["label"] == "placement unreachable"
    assert b"placement unreachable" in response.content


def test_a_placement_error_is_shown_as_such(admin_client, settings):
    settings.PLACEMENT_URL, settings.AUTH_STRATEGY, settings.PLACEMENT_AUTH_TOKEN = "", "keystone", "not-a-token"
    response = admin_client.get("/resource-providers/")
    assert response.status_code == 200 and b"answered with an error" in response.content
    assert b"HTTP 401" in response.content
    assert admin_client.get("/").context["providers_unknown"]["label"] == "placement error"


# --- overview -------------------------------------------------------------------------------------


def test_overview_counts_providers_through_the_cached_listing(admin_client, own):
    make_tree(own, "node1", children=2)
    placement_client.clear_read_cache()
    response, requests_made = get(admin_client, "/")
    assert response.context["counts"]["providers"] == 3 and requests_made == 1
    assert get(admin_client, "/")[1] == 0
    # The providers page reuses the listing the overview read.
    assert get(admin_client, "/resource-providers/")[1] == placement_views.REQUESTS_PER_PROVIDER * 3


# --- mirror states on the aggregate page ------------------------------------------------------------


@pytest.fixture
def mirrored(system, make_host, own):
    """An aggregate of five hosts: h0 and h1 mirrored, h2 pending in the
    outbox, h3 failed, h4 with no node."""
    aggregate = services.create_aggregate(system, "agg", None)
    for n in range(4):
        node = make_host(f"h{n}")
        own.create_provider(node.uuid, node.hypervisor_hostname)
    make_host("h4")
    ComputeNode.objects.filter(host="h4").delete()
    for n in range(5):
        services.add_host(system, aggregate.id, f"h{n}")
    for n in (0, 1):
        own.change_provider_aggregates(ComputeNode.objects.get(host=f"h{n}").uuid, add=[aggregate.uuid])
    PlacementMirrorRequest.objects.filter(host__in=["h0", "h1"]).update(status=PlacementMirrorRequest.DONE)
    PlacementMirrorRequest.objects.filter(host="h3").update(status=PlacementMirrorRequest.FAILED, last_error="boom")
    return aggregate


def test_mirror_states_cost_one_placement_request_a_page(admin_client, mirrored):
    response, requests_made = get(admin_client, f"/aggregates/{mirrored.id}/")
    assert response.status_code == 200
    states = {row["host"]: row["mirror"][:2] for row in response.context["host_rows"]}
    assert states == {
        "h0": ("ok", "in placement"),
        "h1": ("ok", "in placement"),
        "h2": ("warn", "pending"),
        "h3": ("bad", "failed"),
        "h4": ("bad", "no compute node"),
    }
    assert requests_made == 1
    # Not cached: a change shows on the next render, still at one request.
    placement_client.client().change_provider_aggregates(ComputeNode.objects.get(host="h2").uuid, add=[mirrored.uuid])
    response, requests_made = get(admin_client, f"/aggregates/{mirrored.id}/")
    assert dict((r["host"], r["mirror"][1]) for r in response.context["host_rows"])["h2"] == "in placement"
    assert requests_made == 1


def test_mirror_state_missing_when_placement_lost_the_association(admin_client, mirrored):
    own = placement_client.client()
    own.change_provider_aggregates(ComputeNode.objects.get(host="h1").uuid, remove=[mirrored.uuid])
    response = admin_client.get(f"/aggregates/{mirrored.id}/")
    states = {row["host"]: row["mirror"][1] for row in response.context["host_rows"]}
    assert states["h1"] == "missing"


def test_an_aggregate_without_hosts_asks_placement_nothing(admin_client, system, own):
    aggregate = services.create_aggregate(system, "empty", None)
    response, requests_made = get(admin_client, f"/aggregates/{aggregate.id}/")
    assert response.status_code == 200 and requests_made == 0


def test_mirror_states_unknown_when_placement_is_unreachable(admin_client, mirrored, settings, closed_port_url):
    settings.PLACEMENT_URL = closed_port_url
    response, requests_made = get(admin_client, f"/aggregates/{mirrored.id}/")
    assert response.status_code == 200 and requests_made == 1
    rows = {row["host"]: row["mirror"] for row in response.context["host_rows"]}
    assert rows["h0"][:2] == ("warn", "unknown: placement unreachable")
    assert "Unable to communicate with the Placement API" in rows["h0"][2]
    assert "pending in the outbox" in rows["h2"][2] and "failed in the outbox: boom" in rows["h3"][2]
    assert rows["h4"][1] == "no compute node"
    assert b"unknown: placement unreachable" in response.content


@pytest.fixture
def closed_port_url():
    from tests.plugins.upstream_placement import free_port

    return f"http://127.0.0.1:{free_port()}"


# --- an upstream placement -------------------------------------------------------------------------


@pytest.fixture
def upstream(upstream_placement, settings):
    """Upstream Placement 16.0.0, emptied afterwards; Corral points at it."""
    settings.PLACEMENT_URL, settings.PLACEMENT_AUTH_TOKEN = upstream_placement.url, "admin"
    yield upstream_placement
    providers = upstream_placement.call("GET", "/resource_providers")["resource_providers"]
    for provider in providers:
        for consumer in upstream_placement.call("GET", f"/resource_providers/{provider['uuid']}/allocations")[
            "allocations"
        ]:
            upstream_placement.call("DELETE", f"/allocations/{consumer}")
    for provider in sorted(providers, key=lambda p: p["parent_provider_uuid"] is None):  # children first
        upstream_placement.call("DELETE", f"/resource_providers/{provider['uuid']}")


def test_the_console_shows_what_an_upstream_placement_holds(admin_client, upstream, system, make_host):
    # Corral's own placement tables hold a provider the console must not show.
    placement_providers.create_provider("only-in-corrals-tables", new_uuid())
    node = make_host("node1")
    aggregate = services.create_aggregate(system, "fast-io", None)
    services.add_host(system, aggregate.id, "node1")
    upstream.create_provider(str(node.uuid), "node1")
    child = new_uuid()
    upstream.call(
        "POST", "/resource_providers", {"uuid": child, "name": "node1_gpu", "parent_provider_uuid": str(node.uuid)}
    )
    upstream.call(
        "PUT",
        f"/resource_providers/{node.uuid}/inventories",
        {"resource_provider_generation": 0, "inventories": {"VCPU": VCPU}},
    )
    upstream.call(
        "PUT",
        f"/allocations/{new_uuid()}",
        {
            "allocations": {str(node.uuid): {"resources": {"VCPU": 6}}},
            "project_id": new_uuid(),
            "user_id": new_uuid(),
            "consumer_generation": None,
            "consumer_type": "INSTANCE",
        },
    )
    upstream.set_aggregates(str(node.uuid), [aggregate.uuid])
    placement_client.clear_read_cache()

    response, requests_made = get(admin_client, "/resource-providers/")
    assert response.status_code == 200
    tree = response.context["tree"]
    assert [(r["provider"]["name"], r["depth"]) for r in tree] == [("node1", 0), ("node1_gpu", 1)]
    assert (tree[0]["inventories"][0]["used"], tree[0]["inventories"][0]["capacity"]) == (6, 16)
    assert tree[0]["host"] == "node1" and [a.name for _, a in tree[0]["aggregates"]] == ["fast-io"]
    assert b"only-in-corrals-tables" not in response.content and upstream.url.encode() in response.content
    assert requests_made == 1 + placement_views.REQUESTS_PER_PROVIDER * 2

    response = admin_client.get(f"/resource-providers/{child}/")
    assert response.context["parent"]["name"] == "node1"

    overview = admin_client.get("/")
    assert overview.context["counts"]["providers"] == 2

    response, requests_made = get(admin_client, f"/aggregates/{aggregate.id}/")
    (row,) = response.context["host_rows"]
    assert row["mirror"][:2] == ("ok", "in placement") and requests_made == 1
    upstream.set_aggregates(str(node.uuid), [])
    response = admin_client.get(f"/aggregates/{aggregate.id}/")
    assert response.context["host_rows"][0]["mirror"][1] == "pending"  # the outbox row never ran here
