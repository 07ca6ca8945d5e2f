"""Rules stated once and used everywhere: whether a service is up (the API's
state, the console's filters), why a host cannot join an aggregate (the
service's refusal, the console's picker), which hosts a zone holds (the
zone queries, os-availability-zone, the console's host list) and which
field a service error is about (the console shows it there)."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from aggregates.errors import Conflict, Invalid, NotFound, ServiceError
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import AggregateHost
from aggregates.hosts.models import Service
from dashboard.console import form_error
from dashboard.forms import AggregateCreateForm
from tests.helpers import fault

# --- "up" ------------------------------------------------------------------------


def api_state(admin_api, host):
    (item,) = [s for s in admin_api.get("/os-services").json()["services"] if s["host"] == host]
    return item["state"]


def console_hosts(admin_client, state):
    response = admin_client.get(f"/hosts/?state={state}")
    assert response.status_code == 200
    return [row["service"].host for row in response.context["rows"]]


def heartbeat_at(host, seen, created=None):
    changes = {"last_seen_up": seen}
    if created is not None:
        changes["created_at"] = created
    Service.objects.filter(host=host).update(**changes)


@pytest.mark.parametrize(
    "offset, expected",
    [
        # As Nova's servicegroup DB driver: |now - last seen| <= SERVICE_DOWN_TIME is up.
        (timedelta(seconds=settings.SERVICE_DOWN_TIME // 2), "up"),  # a little in the future (clock skew)
        (timedelta(seconds=settings.SERVICE_DOWN_TIME + 60), "down"),  # too far in the future
        (-timedelta(seconds=settings.SERVICE_DOWN_TIME // 2), "up"),
        (-timedelta(seconds=settings.SERVICE_DOWN_TIME + 60), "down"),
    ],
)
def test_a_heartbeat_counts_the_same_in_the_api_and_the_console_filters(
    admin_api, admin_client, make_host, offset, expected
):
    make_host("node1")
    heartbeat_at("node1", timezone.now() + offset)
    other = "down" if expected == "up" else "up"
    assert api_state(admin_api, "node1") == expected
    assert Service.objects.get(host="node1").is_up is (expected == "up")
    assert console_hosts(admin_client, expected) == ["node1"]
    assert console_hosts(admin_client, other) == []
    assert console_hosts(admin_client, "attention") == (["node1"] if expected == "down" else [])
    assert list(Service.objects.up().values_list("host", flat=True)) == (["node1"] if expected == "up" else [])
    assert list(Service.objects.down().values_list("host", flat=True)) == (["node1"] if expected == "down" else [])


def test_a_service_never_seen_counts_from_its_creation_everywhere(admin_api, admin_client, make_host):
    make_host("node1")
    long_ago = timezone.now() - timedelta(seconds=settings.SERVICE_DOWN_TIME + 60)
    heartbeat_at("node1", None, created=long_ago)
    assert api_state(admin_api, "node1") == "down"
    assert console_hosts(admin_client, "down") == ["node1"] and console_hosts(admin_client, "up") == []
    heartbeat_at("node1", None, created=timezone.now())
    assert api_state(admin_api, "node1") == "up"
    assert console_hosts(admin_client, "up") == ["node1"] and console_hosts(admin_client, "down") == []


def test_forced_down_is_down_everywhere(admin_api, admin_client, make_host):
    make_host("node1")
    Service.objects.update(forced_down=True)
    assert api_state(admin_api, "node1") == "down"
    assert console_hosts(admin_client, "down") == ["node1"] and console_hosts(admin_client, "up") == []


# --- who may join an aggregate ------------------------------------------------------


@pytest.fixture
def zones(system, make_host):
    """fast-io (zone nova) holds node1; az2-general (zone az2) holds node3;
    node2 runs 3 instances in the default zone; node4 is free."""
    for name in ("node1", "node3", "node4"):
        make_host(name)
    make_host("node2", running_vms=3)
    fast_io = services.create_aggregate(system, "fast-io", "nova")
    services.add_host(system, fast_io.id, "node1")
    az2 = services.create_aggregate(system, "az2-general", "az2")
    services.add_host(system, az2.id, "node3")
    return services.get_aggregate(fast_io.id)


def test_refusals_are_what_add_host_raises(admin_api, zones):
    refusals = services.add_host_refusals(zones, ["node1", "node2", "node3", "node4", "ghost"])
    assert set(refusals) == {"node1", "node2", "node3", "ghost"}
    for host, refusal in refusals.items():
        response = admin_api.post(f"/os-aggregates/{zones.id}/action", {"add_host": {"host": host}})
        name = {404: "itemNotFound", 409: "conflictingRequest"}[refusal.error.status]
        assert fault(response, refusal.error.status, name) == refusal.error.message
        assert refusal.error.field == "hosts"
    assert isinstance(refusals["ghost"].error, NotFound)
    assert refusals["node3"].other_zones == ("az2",)
    assert refusals["node2"].instances == 3
    assert refusals["node1"].error.message == f"Aggregate {zones.id} already has host node1."
    assert services.hosts_of(services.get_aggregate(zones.id)) == ["node1"]


def test_an_aggregate_without_zone_refuses_only_unknown_hosts_and_members(zones, system):
    plain = services.create_aggregate(system, "plain", None)
    services.add_host(system, plain.id, "node4")
    refusals = services.add_host_refusals(services.get_aggregate(plain.id), ["node2", "node3", "node4", "ghost"])
    assert set(refusals) == {"node4", "ghost"}


def test_refusals_take_a_fixed_number_of_queries(system, make_host, django_assert_max_num_queries):
    zoned = services.create_aggregate(system, "zoned", "az1")
    other = services.create_aggregate(system, "other", "az2")
    hosts = [f"h{n:02d}" for n in range(40)]
    for host in hosts:
        make_host(host, running_vms=1)
    AggregateHost.objects.bulk_create([AggregateHost(aggregate=other, host=h) for h in hosts[::2]])
    aggregate = services.get_aggregate(zoned.id)
    with django_assert_max_num_queries(4):  # registrations, other zones, reported instances, servers
        refusals = services.add_host_refusals(aggregate, hosts + ["ghost"])
    assert len(refusals) == 41


def test_the_picker_explains_with_the_services_own_refusal(admin_client, zones):
    response = admin_client.get(f"/aggregates/{zones.id}/?host_q=node")
    rows = {row["service"].host: row for row in response.context["picker"]["rows"]}
    assert set(rows) == {"node2", "node3", "node4"}
    assert rows["node4"]["refusal"] is None and rows["node4"]["reason"] == ""
    expected = services.add_host_refusals(zones, ["node2", "node3"])
    for host in ("node2", "node3"):
        # What the picker shows before submit is what the add then answers.
        refusal = rows[host]["refusal"]
        assert refusal.message == expected[host].error.message
        submitted = admin_client.post(f"/aggregates/{zones.id}/hosts/add/", {"hosts": [host]})
        assert submitted.status_code == 400
        assert submitted.context["hosts_form"].errors["hosts"] == [refusal.message]
        assert f'title="{refusal.message}"'.replace("'", "&#x27;").encode() in response.content


def test_add_hosts_checks_every_host_before_adding_any(system, zones):
    with pytest.raises(Conflict) as refused:
        services.add_hosts(system, zones.id, ["node4", "node3"])
    assert "Host node3 can be in only one availability zone" in refused.value.message
    assert services.hosts_of(services.get_aggregate(zones.id)) == ["node1"]
    with pytest.raises(NotFound, match="Compute host ghost could not be found"):
        services.create_aggregate_with_hosts(system, "new", "nova", ["node4", "ghost"])


# --- zone membership ------------------------------------------------------------------


def test_zone_membership_is_the_same_in_the_queries_the_api_and_the_console(admin_api, admin_client, system, make_host):
    """node1 in az1; node2 in an aggregate naming the default zone; node3 in an
    aggregate without zone; node4 in none."""
    from aggregates.zones import services as zones

    default = settings.DEFAULT_AVAILABILITY_ZONE
    for name in ("node1", "node2", "node3", "node4"):
        make_host(name)
    for aggregate_name, zone, host in (
        ("in-az1", "az1", "node1"),
        ("explicit", default, "node2"),
        ("plain", None, "node3"),
    ):
        services.add_host(system, services.create_aggregate(system, aggregate_name, zone).id, host)
    expected = {"az1": ["node1"], default: ["node2", "node3", "node4"]}
    assert {zone: list(zones.hosts_in_zone(zone)) for zone in expected} == expected
    assert list(zones.unzoned_hosts()) == ["node3", "node4"]
    assert [zones.zone_of_host(h) for h in ("node1", "node2", "node3", "node4")] == ["az1", default, default, default]
    assert zones.zones_by_host() == {"node1": ["az1"], "node2": [default]}
    detail = admin_api.get("/os-availability-zone/detail").json()["availabilityZoneInfo"]
    assert {z["zoneName"]: sorted(z["hosts"]) for z in detail if z["zoneName"] in expected} == expected
    for zone, hosts in expected.items():
        listed = admin_client.get("/hosts/", {"zone": zone}).context["rows"]
        assert [row["service"].host for row in listed] == hosts
        assert [row["zone"] for row in listed] == [zone] * len(hosts)
    page = admin_client.get("/hosts/node2/").context
    assert page["zone"] == default and [source.aggregate_name for source in page["zone_sources"]] == ["explicit"]


# --- errors beside their field ---------------------------------------------------------


def test_service_errors_name_their_field_and_stay_backwards_compatible():
    assert ServiceError("x").field is None
    assert Invalid("x", field="name").field == "name"
    assert Conflict("x", "hosts").field == "hosts" and Conflict("x", "hosts").message == "x"


def test_the_console_puts_an_error_beside_its_field_whatever_it_says(db):
    form = AggregateCreateForm({"name": "ok"})
    assert form.is_valid()
    # A message that talks about hosts and zones, but is about the name.
    form_error(form, Conflict("host zone already exists", field="name"))
    form_error(form, Invalid("no field", field="not_on_this_form"))
    form_error(form, Invalid("no field at all"))
    assert form.errors["name"] == ["host zone already exists"]
    assert form.non_field_errors() == ["no field", "no field at all"]


@pytest.mark.parametrize(
    "data, field",
    [
        ({"ram": "0"}, "ram"),
        ({"vcpus": "0"}, "vcpus"),
        ({"name": "taken"}, "name"),
        ({"id": "taken-id"}, "id"),
    ],
)
def test_flavor_errors_go_beside_the_field_the_service_names(admin_client, system, data, field):
    from aggregates.flavors import services as flavors

    flavors.create_flavor(system, name="taken", ram=512, vcpus=1, disk=1, flavorid="taken-id")
    form = {"name": "new", "id": "", "ram": "512", "vcpus": "1", "disk": "1", "is_public": "on", **data}
    response = admin_client.post("/flavors/new/", form)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert list(errors) == [field], errors


def test_the_picker_of_an_aggregate_without_zone_hides_nobody(admin_client, system, zones):
    plain = services.create_aggregate(system, "plain", None)
    picker = admin_client.get(f"/aggregates/{plain.id}/").context["picker"]
    assert picker["hidden"] == 0
    assert [(row["service"].host, row["reason"]) for row in picker["rows"]] == [
        ("node1", ""),
        ("node2", ""),
        ("node3", ""),
        ("node4", ""),
    ]
    zoned = admin_client.get(f"/aggregates/{zones.id}/").context["picker"]
    assert zoned["hidden"] == 1 and [row["service"].host for row in zoned["rows"]] == ["node2", "node4"]
