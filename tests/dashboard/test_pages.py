"""The console's other pages: overview, hosts, zones, flavors, events and placement."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.flavors import services as flavors
from aggregates.flavors.models import Flavor
from aggregates.host_aggregates import services
from aggregates.hosts.models import Service
from aggregates.mirroring.models import PlacementMirrorRequest, ReconciliationRun
from placement.services import aggregates as placement_aggregates
from placement.services import allocations as placement_allocations
from placement.services import inventories as placement_inventories
from placement.services import provider_traits as placement_provider_traits
from placement.services import providers as placement_providers
from placement.services import traits as placement_traits

# --- overview ---------------------------------------------------------------------


def test_overview_counts_hosts_up_down_disabled_and_providers(admin_client, system, make_host, settings):
    settings.PLACEMENT_URL = ""  # Corral's own placement, in process: the count is read through the client
    for name in ("a", "b", "c"):
        make_host(name)
    Service.objects.filter(host="b").update(last_seen_up=timezone.now() - timedelta(hours=1))
    Service.objects.filter(host="c").update(disabled=True)
    placement_providers.create_provider("rp1", str(uuid.uuid4()))
    counts = admin_client.get("/").context["counts"]
    assert (counts["hosts"], counts["hosts_up"], counts["hosts_down"], counts["hosts_disabled"]) == (3, 2, 1, 1)
    assert counts["providers"] == 1


def test_overview_shows_mirror_status_and_last_reconciliation(admin_client, system, make_host):
    make_host("node1")
    aggregate = services.create_aggregate(system, "fast-io", None)
    services.add_host(system, aggregate.id, "node1")
    PlacementMirrorRequest.objects.update(status=PlacementMirrorRequest.PENDING)
    ReconciliationRun.objects.create(
        trigger="schedule", missing_found=3, stale_found=1, added=3, removed=1, exit_code=0, finished_at=timezone.now()
    )
    response = admin_client.get("/")
    assert response.context["mirror"]["pending"] == 1
    content = response.content.decode()
    assert "1 pending" in content and "3 missing, 1 stale" in content


def test_overview_queries_do_not_grow_with_hosts(admin_client, make_host, django_assert_max_num_queries):
    for n in range(40):
        make_host(f"h{n}")
    with django_assert_max_num_queries(14):
        assert admin_client.get("/").status_code == 200


# --- hosts ------------------------------------------------------------------------------


@pytest.fixture
def zoned(system, make_host):
    make_host("node1")
    make_host("node2")
    aggregate = services.create_aggregate(system, "az1-general", "az1")
    services.add_host(system, aggregate.id, "node1")
    make_host("node1", running_vms=2)
    return aggregate


def test_host_list_shows_zone_aggregates_and_resources(admin_client, zoned):
    response = admin_client.get("/hosts/")
    rows = {r["service"].host: r for r in response.context["rows"]}
    assert rows["node1"]["zone"] == "az1" and rows["node1"]["aggregates"] == [(zoned.id, "az1-general")]
    assert rows["node2"]["zone"] == "nova" and rows["node2"]["in_default"]
    assert rows["node1"]["nodes"][0].running_vms == 2


@pytest.mark.parametrize(
    "query, expected",
    [
        ("host=node2", ["node2"]),
        ("zone=az1", ["node1"]),
        ("zone=nova", ["node2"]),
        ("aggregate=az1-general", ["node1"]),
        ("state=up", ["node1", "node2"]),
        ("state=disabled", []),
        ("state=down", []),
        ("state=attention", []),
    ],
)
def test_host_list_filters(admin_client, zoned, query, expected):
    assert [r["service"].host for r in admin_client.get(f"/hosts/?{query}").context["rows"]] == expected


def test_host_list_queries_are_bounded(admin_client, system, make_host, django_assert_max_num_queries):
    aggregate = services.create_aggregate(system, "az1-general", "az1")
    for n in range(60):
        make_host(f"h{n:02d}")
        services.add_host(system, aggregate.id, f"h{n:02d}")
    with django_assert_max_num_queries(10):
        response = admin_client.get("/hosts/?sort=-host")
    assert len(response.context["rows"]) == 50 and response.context["rows"][0]["service"].host == "h59"


def test_host_detail(admin_client, zoned):
    response = admin_client.get("/hosts/node1/")
    assert response.context["zone"] == "az1" and response.context["aggregates"] == [(zoned.id, "az1-general")]
    assert admin_client.get("/hosts/nope/").status_code == 404


def test_disable_with_reason_then_enable(admin_client, zoned):
    response = admin_client.post(
        "/hosts/node1/status/", {"action": "disable", "disabled_reason": "DIMM swap", "next": "/hosts/node1/"}
    )
    assert response.status_code == 302 and response["Location"] == "/hosts/node1/"
    service = Service.objects.get(host="node1")
    assert service.disabled and service.disabled_reason == "DIMM swap"
    assert Event.objects.filter(event_type="service.update", username="console-admin").exists()
    admin_client.post("/hosts/node1/status/", {"action": "enable"})
    service.refresh_from_db()
    assert not service.disabled and service.disabled_reason is None


def test_disable_reason_follows_the_api_rule(admin_client, zoned):
    response = admin_client.post("/hosts/node1/status/", {"action": "disable", "disabled_reason": "x" * 256})
    assert response.status_code == 400
    assert "is too long" in response.context["disable_form"].errors["disabled_reason"][0]
    assert not Service.objects.get(host="node1").disabled


# --- zones -----------------------------------------------------------------------------------


def test_zones_page_lists_aggregates_hosts_and_default_only_hosts(admin_client, zoned):
    response = admin_client.get("/zones/")
    (zone,) = response.context["zones"]
    assert zone["name"] == "az1" and zone["aggregates"] == [(zoned.id, "az1-general")] and zone["hosts"] == ["node1"]
    assert response.context["default_only"] == ["node2"]
    assert b"default zone named explicitly" not in response.content


def test_zones_page_warns_when_an_aggregate_names_the_default_zone(admin_client, system, zoned):
    services.create_aggregate(system, "pinned", "nova")
    response = admin_client.get("/zones/")
    assert [z["name"] for z in response.context["zones"] if z["explicit_default"]] == ["nova"]
    assert b"default zone named explicitly" in response.content


# --- flavors --------------------------------------------------------------------------------


FLAVOR = {
    "name": "ssd.large",
    "id": "ssd.large",
    "ram": "8192",
    "vcpus": "4",
    "disk": "80",
    "ephemeral": "0",
    "swap": "0",
    "is_public": "on",
    "description": "",
}


def test_create_flavor(admin_client, db):
    response = admin_client.post("/flavors/new/", FLAVOR)
    assert response.status_code == 302 and response["Location"] == "/flavors/ssd.large/"
    flavor = Flavor.objects.get(flavorid="ssd.large")
    assert (flavor.memory_mb, flavor.vcpus, flavor.root_gb, flavor.is_public) == (8192, 4, 80, True)


@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"ram": "0"}, "ram", "Invalid input received: ram must be >= 1"),
        ({"vcpus": "two"}, "vcpus", "does not match"),
        ({"name": " x"}, "name", "can not start or end with whitespace"),
        ({"id": "bad id!"}, "id", "does not match"),
    ],
)
def test_create_flavor_shows_api_errors_beside_the_field(admin_client, db, changes, field, message):
    response = admin_client.post("/flavors/new/", {**FLAVOR, **changes})
    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert not Flavor.objects.exists()
    assert f'value="{changes[field]}"'.encode() in response.content


def test_create_flavor_with_a_taken_id(admin_client, system):
    flavors.create_flavor(system, name="other", flavorid="ssd.large", ram=1, vcpus=1, disk=0)
    response = admin_client.post("/flavors/new/", FLAVOR)
    assert response.status_code == 400
    assert "Flavor with ID ssd.large already exists." in response.context["form"].errors["id"]


def test_extra_specs_set_validated_and_removed(admin_client, system):
    flavors.create_flavor(system, name="ssd.large", flavorid="ssd.large", ram=1, vcpus=1, disk=0)
    url = "/flavors/ssd.large/extra-specs/"
    assert admin_client.post(url, {"key": "aggregate_instance_extra_specs:ssd", "value": "true"}).status_code == 302
    response = admin_client.post(url, {"key": "hw:cpu_policy", "value": "sometimes"})
    assert response.status_code == 400
    assert "'sometimes' is not one of" in response.context["spec_form"].errors["value"][0]
    response = admin_client.post(url, {"key": "hw:no_such_thing", "value": "1"})
    assert "does not appear to be a valid extra spec" in response.context["spec_form"].errors["key"][0]
    response = admin_client.post(url, {"key": "bad/key", "value": "1"})
    assert "Invalid input for field/attribute key" in response.context["spec_form"].errors["key"][0]
    assert flavors.extra_specs_of(Flavor.objects.get()) == {"aggregate_instance_extra_specs:ssd": "true"}
    admin_client.post("/flavors/ssd.large/extra-specs/delete/", {"key": "aggregate_instance_extra_specs:ssd"})
    assert flavors.extra_specs_of(Flavor.objects.get()) == {}


def test_flavor_list_and_delete(admin_client, system):
    flavors.create_flavor(system, name="m1.tiny", flavorid="1", ram=512, vcpus=1, disk=1)
    flavors.set_extra_specs(system, "1", {"hw:cpu_policy": "dedicated"})
    response = admin_client.get("/flavors/?name=tiny")
    assert [f.name for f in response.context["page"]] == ["m1.tiny"] and b"hw:cpu_policy=dedicated" in response.content
    assert admin_client.post("/flavors/1/delete/").status_code == 302
    assert not Flavor.objects.exists()
    assert admin_client.get("/flavors/1/").status_code == 404


# --- events ------------------------------------------------------------------------------------


def test_events_filter_by_type_object_and_user(admin_client, system, zoned):
    admin_client.post("/hosts/node2/status/", {"action": "disable", "disabled_reason": "x"})
    page_of = lambda query: list(admin_client.get(f"/events/?{query}").context["page"])  # noqa: E731
    assert {e.event_type for e in page_of("event_type=add_host")} == {
        "aggregate.add_host.start",
        "aggregate.add_host.end",
    }
    assert all(e.object_id == str(zoned.id) for e in page_of(f"object_type=aggregate&object_id={zoned.id}"))
    assert [e.event_type for e in page_of("username=console-admin")] == ["service.update"]


def test_events_show_refusals(admin_client, system, zoned):
    other = services.create_aggregate(system, "az2-general", "az2")
    admin_client.post(f"/aggregates/{other.id}/hosts/add/", {"hosts": ["node1"]})
    response = admin_client.get("/events/?priority=ERROR")
    (refusal,) = response.context["page"]
    assert refusal.event_type == "compute.exception" and refusal.object_id == str(other.id)
    assert "Host node1 can be in only one availability zone" in refusal.payload["exception_message"]
    assert b"Host node1 can be in only one availability zone" in response.content


# --- placement -------------------------------------------------------------------------------


@pytest.fixture
def provider_tree(system, make_host, settings):
    settings.PLACEMENT_URL = ""  # the console reads Corral's own placement, in process
    node = make_host("node1", vcpus=8)
    aggregate = services.create_aggregate(system, "fast-io", None)
    root = str(node.uuid)
    placement_providers.create_provider("node1", root)
    child = str(uuid.uuid4())
    placement_providers.create_provider("node1_gpu0", child, parent_uuid=root)
    placement_inventories.create_inventory(
        root,
        "VCPU",
        {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1, "allocation_ratio": 2.0},
        False,
    )
    placement_traits.ensure_trait("CUSTOM_GPU")
    placement_provider_traits.set_provider_traits(root, None, ["CUSTOM_GPU"])
    placement_aggregates.set_provider_aggregates(root, [str(aggregate.uuid), str(uuid.uuid4())])
    placement_allocations.replace_allocations(  # 12 used, 6 a consumer (the max_unit is 8)
        [placement_allocations.ConsumerRequest(str(uuid.uuid4()), {root: {"VCPU": 6}}, "p", "u") for _ in range(2)]
    )
    return root, child, aggregate


def test_providers_page_shows_trees_usage_and_aggregates(admin_client, provider_tree):
    root, child, aggregate = provider_tree
    response = admin_client.get("/resource-providers/")
    tree = response.context["tree"]
    assert [(r["provider"]["uuid"], r["depth"]) for r in tree] == [(root, 0), (child, 1)]
    (vcpu,) = tree[0]["inventories"]
    assert (vcpu["used"], vcpu["capacity"]) == (12, 16)
    assert tree[0]["host"] == "node1" and tree[0]["traits"] == ["CUSTOM_GPU"]
    names = [a.name if a else None for _, a in tree[0]["aggregates"]]
    assert sorted(names, key=str) == [None, "fast-io"]
    assert b"12 / 16 (75%)" in response.content


def test_provider_detail(admin_client, provider_tree):
    root, child, _ = provider_tree
    response = admin_client.get(f"/resource-providers/{child}/")
    assert response.context["parent"]["uuid"] == root
    assert admin_client.get(f"/resource-providers/{uuid.uuid4()}/").status_code == 404


def test_overview_lists_hosts_needing_attention(admin_client, make_host):
    for name in ("a", "b", "c"):
        make_host(name)
    Service.objects.filter(host="b").update(last_seen_up=timezone.now() - timedelta(hours=1))
    Service.objects.filter(host="c").update(disabled=True, disabled_reason="DIMM swap")
    response = admin_client.get("/")
    assert [s.host for s in response.context["attention"]["first"]] == ["b", "c"]
    assert b"DIMM swap" in response.content
    hosts = admin_client.get("/hosts/?state=attention").context["rows"]
    assert [r["service"].host for r in hosts] == ["b", "c"]


@pytest.mark.parametrize(
    "url",
    [
        "/aggregates/?sort=bogus",
        "/aggregates/?page=abc",
        "/aggregates/?page=999",
        "/hosts/?state=sideways",
        "/hosts/?sort=nope&page=-1",
        "/events/?priority=LOUD",
        "/events/?object_type=spaceship",
        "/flavors/?page=x",
        "/resource-providers/?page=0",
    ],
)
def test_odd_query_strings_never_break_a_list(admin_client, zoned, url):
    assert admin_client.get(url).status_code == 200


def test_create_flavor_with_a_taken_name(admin_client, system):
    flavors.create_flavor(system, name="ssd.large", flavorid="other", ram=1, vcpus=1, disk=0)
    response = admin_client.post("/flavors/new/", FLAVOR)
    assert response.status_code == 400
    assert "Flavor with name ssd.large already exists." in response.context["form"].errors["name"]
