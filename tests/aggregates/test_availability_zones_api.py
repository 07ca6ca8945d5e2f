"""os-availability-zone through HTTP: zones come from services (§1.2, §2.2)."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts.models import Service
from tests.helpers import fault


def service(host, binary, disabled=False, seen=None):
    """A non-compute (or API) service row, as its own process would write it."""
    now = timezone.now()
    return Service.objects.create(
        host=host, binary=binary, disabled=disabled, last_seen_up=seen or now, updated_at=seen or now
    )


@pytest.fixture
def zone(system):
    """An aggregate with an availability zone holding ``hosts``."""

    def _zone(name, *hosts, aggregate_name=None):
        aggregate = services.create_aggregate(system, aggregate_name or f"agg-{name}", name)
        for host in hosts:
            services.add_host(system, aggregate.id, host)
        return aggregate

    return _zone


def naive(moment):
    """A timestamp as Nova writes it: UTC, microseconds, no zone suffix."""
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds")


def zones(response):
    assert response.status_code == 200, response.content
    return response.json()["availabilityZoneInfo"]


def names(info):
    return [(z["zoneName"], z["zoneState"]["available"]) for z in info]


# --- GET /os-availability-zone -----------------------------------------------


def test_list_hides_the_internal_zone_and_never_shows_hosts(admin_api, make_host):
    make_host("node1")
    service("ctl", "nova-scheduler")
    assert zones(admin_api.get("/os-availability-zone")) == [
        {"zoneName": "nova", "zoneState": {"available": True}, "hosts": None}
    ]


def test_list_is_empty_without_services(admin_api):
    assert zones(admin_api.get("/os-availability-zone")) == []


def test_any_authenticated_user_may_list(member_api, reader_api, make_host):
    make_host("node1")
    assert names(zones(member_api.get("/os-availability-zone"))) == [("nova", True)]
    assert names(zones(reader_api.get("/os-availability-zone"))) == [("nova", True)]


def test_list_needs_a_token(anon_api):
    fault(anon_api.get("/os-availability-zone"), 401, "unauthorized")
    fault(anon_api.get("/os-availability-zone/detail"), 401, "unauthorized")


def test_zones_come_from_the_aggregates_of_hosts(admin_api, make_host, zone):
    for host in ("node1", "node2", "node3"):
        make_host(host)
    zone("az1", "node1")
    zone("az2", "node2")
    # node3 is in no AZ aggregate, so it is in the default zone.
    assert names(zones(admin_api.get("/os-availability-zone"))) == [("az1", True), ("az2", True), ("nova", True)]


def test_an_az_aggregate_without_hosts_names_no_zone(admin_api, make_host, zone):
    make_host("node1")
    zone("empty-az")
    assert names(zones(admin_api.get("/os-availability-zone"))) == [("nova", True)]
    assert names(zones(admin_api.get("/os-availability-zone/detail"))) == [("nova", True)]


def test_aggregates_without_zone_do_not_change_the_zone(admin_api, make_host, system):
    make_host("node1")
    aggregate = services.create_aggregate(system, "fast-io")
    services.add_host(system, aggregate.id, "node1")
    assert names(zones(admin_api.get("/os-availability-zone"))) == [("nova", True)]


def test_zone_whose_services_are_all_disabled_is_listed_unavailable_after_available_ones(admin_api, make_host, zone):
    for host in ("a1", "b1", "z1"):
        make_host(host)
    zone("zz", "z1")
    zone("aa", "a1")
    Service.objects.filter(host="a1").update(disabled=True)
    assert names(zones(admin_api.get("/os-availability-zone"))) == [("nova", True), ("zz", True), ("aa", False)]


def test_one_enabled_service_keeps_a_zone_available(admin_api, make_host, zone):
    make_host("n1")
    make_host("n2")
    zone("az1", "n1", "n2")
    Service.objects.filter(host="n1").update(disabled=True)
    assert names(zones(admin_api.get("/os-availability-zone"))) == [("az1", True)]


def test_zone_availability_ignores_liveness(admin_api, make_host):
    make_host("node1")
    Service.objects.update(last_seen_up=timezone.now() - timedelta(days=1))
    assert names(zones(admin_api.get("/os-availability-zone"))) == [("nova", True)]


def test_zone_names_follow_the_settings(admin_api, make_host, settings):
    settings.DEFAULT_AVAILABILITY_ZONE = "default-az"
    settings.INTERNAL_SERVICE_AVAILABILITY_ZONE = "services"
    make_host("node1")
    service("ctl", "nova-conductor")
    assert names(zones(admin_api.get("/os-availability-zone"))) == [("default-az", True)]
    assert names(zones(admin_api.get("/os-availability-zone/detail"))) == [("default-az", True), ("services", True)]


def test_host_in_two_zones_shows_the_joined_name(admin_api, make_host, zone):
    # The API refuses this; only database edits or races can produce it.
    make_host("node1")
    zone("az1", "node1")
    second = Aggregate.objects.create(name="agg-az2")
    AggregateMetadata.objects.create(aggregate=second, key="availability_zone", value="az2")
    AggregateHost.objects.create(aggregate=second, host="node1")
    assert names(zones(admin_api.get("/os-availability-zone"))) == [("az1,az2", True)]


# --- GET /os-availability-zone/detail -----------------------------------------


def test_detail_shows_internal_zone_and_hosts_of_enabled_services(admin_api, make_host, zone):
    make_host("node1")
    make_host("node2")
    zone("az1", "node2")
    scheduler = service("ctl", "nova-scheduler")
    conductor = service("ctl", "nova-conductor")
    service("ctl", "nova-osapi_compute")
    service("ctl", "nova-metadata")
    node1 = Service.objects.get(host="node1")
    info = zones(admin_api.get("/os-availability-zone/detail"))
    assert names(info) == [("az1", True), ("internal", True), ("nova", True)]
    by_name = {z["zoneName"]: z["hosts"] for z in info}
    assert by_name["internal"] == {
        "ctl": {
            "nova-conductor": {"available": True, "active": True, "updated_at": naive(conductor.updated_at)},
            "nova-scheduler": {"available": True, "active": True, "updated_at": naive(scheduler.updated_at)},
        }
    }
    assert by_name["nova"] == {
        "node1": {"nova-compute": {"available": True, "active": True, "updated_at": naive(node1.updated_at)}}
    }
    assert list(by_name["az1"]) == ["node2"]


def test_detail_leaves_disabled_services_out_of_hosts(admin_api, make_host):
    make_host("node1")
    make_host("node2")
    Service.objects.filter(host="node2").update(disabled=True)
    (nova,) = zones(admin_api.get("/os-availability-zone/detail"))
    assert list(nova["hosts"]) == ["node1"]


def test_detail_unavailable_zone_has_null_hosts(admin_api, make_host, zone):
    make_host("node1")
    zone("az1", "node1")
    Service.objects.update(disabled=True)
    assert zones(admin_api.get("/os-availability-zone/detail")) == [
        {"zoneName": "az1", "zoneState": {"available": False}, "hosts": None}
    ]


def test_detail_reports_down_services_as_not_available(admin_api, make_host):
    make_host("node1")
    stale = timezone.now() - timedelta(seconds=settings.SERVICE_DOWN_TIME + 5)
    Service.objects.update(last_seen_up=stale)
    (nova,) = zones(admin_api.get("/os-availability-zone/detail"))
    assert nova["zoneState"]["available"] is True
    assert nova["hosts"]["node1"]["nova-compute"]["available"] is False
    assert nova["hosts"]["node1"]["nova-compute"]["active"] is True


def test_detail_zone_with_only_api_services_is_available_without_hosts(admin_api):
    service("api1", "nova-osapi_compute")
    assert zones(admin_api.get("/os-availability-zone/detail")) == [
        {"zoneName": "internal", "zoneState": {"available": True}, "hosts": {}}
    ]


def test_reader_may_see_detail(reader_api, make_host):
    make_host("node1")
    assert list(zones(reader_api.get("/os-availability-zone/detail"))[0]["hosts"]) == ["node1"]


def test_member_may_not_see_detail(member_api, make_host):
    make_host("node1")
    message = fault(member_api.get("/os-availability-zone/detail"), 403, "forbidden")
    assert "os_compute_api:os-availability-zone:detail" in message


# --- query parameters --------------------------------------------------------


@pytest.mark.parametrize("path", ["/os-availability-zone", "/os-availability-zone/detail"])
def test_unknown_query_parameters_are_ignored_before_2_102(admin_api, make_host, path):
    make_host("node1")
    assert names(zones(admin_api.get(f"{path}?foo=1", version="2.101"))) == [("nova", True)]


@pytest.mark.parametrize("path", ["/os-availability-zone", "/os-availability-zone/detail"])
def test_unknown_query_parameters_are_400_from_2_102(admin_api, path):
    message = fault(admin_api.get(f"{path}?foo=1", version="2.102"), 400, "badRequest")
    assert message.startswith("Invalid input for query parameters foo.")
