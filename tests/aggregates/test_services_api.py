"""os-services through HTTP: the list per microversion, both update styles
(actions before 2.53, by uuid from 2.53) and delete (§1.3, §2.4)."""

import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from aggregates import errors
from aggregates.audit.models import Event
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import AggregateHost
from aggregates.hosts.models import ComputeNode, Service
from aggregates.mirroring.models import ProviderSyncRequest
from tests.helpers import fault

V253_FIELDS = {"binary", "host", "id", "zone", "status", "state", "updated_at", "disabled_reason", "forced_down"}


def other_service(host, binary):
    now = timezone.now()
    return Service.objects.create(host=host, binary=binary, last_seen_up=now, updated_at=now)


def compute(host):
    return Service.objects.get(host=host, binary="nova-compute")


def state():
    """Everything a services request could change."""
    return (
        sorted(Service.objects.values_list("id", "host", "binary", "disabled", "disabled_reason", "forced_down")),
        sorted(ComputeNode.objects.values_list("id", "host", "hypervisor_hostname")),
        sorted(AggregateHost.objects.values_list("aggregate_id", "host")),
    )


def listing(api, query="", version=None):
    response = api.get(f"/os-services{query}", version=version)
    assert response.status_code == 200, response.content
    return response.json()["services"]


@pytest.fixture
def node1(make_host):
    make_host("node1")
    return compute("node1")


# --- list --------------------------------------------------------------------


def test_list_at_2_1_has_integer_ids_and_no_forced_down(admin_api, node1):
    (item,) = listing(admin_api)
    assert item == {
        "binary": "nova-compute",
        "host": "node1",
        "id": node1.id,
        "zone": "nova",
        "status": "enabled",
        "state": "up",
        "updated_at": node1.updated_at.replace(tzinfo=None).isoformat(timespec="microseconds"),
        "disabled_reason": None,
    }


def test_list_adds_forced_down_from_2_11(admin_api, node1):
    assert "forced_down" not in listing(admin_api, version="2.10")[0]
    (item,) = listing(admin_api, version="2.11")
    assert item["forced_down"] is False and item["id"] == node1.id


def test_list_ids_are_uuids_from_2_53(admin_api, node1):
    assert listing(admin_api, version="2.52")[0]["id"] == node1.id
    (item,) = listing(admin_api, version="2.53")
    assert set(item) == V253_FIELDS
    assert item["id"] == str(node1.uuid)


def test_list_never_shows_api_services(admin_api, node1):
    other_service("ctl", "nova-osapi_compute")
    other_service("ctl", "nova-metadata")
    other_service("ctl", "nova-scheduler")
    assert [(s["host"], s["binary"]) for s in listing(admin_api)] == [
        ("node1", "nova-compute"),
        ("ctl", "nova-scheduler"),
    ]
    assert listing(admin_api, "?binary=nova-osapi_compute") == []


def test_list_zones(admin_api, make_host, system):
    make_host("node1")
    make_host("node2")
    other_service("ctl", "nova-conductor")
    aggregate = services.create_aggregate(system, "rack1", "az1")
    services.add_host(system, aggregate.id, "node2")
    zones = {s["host"]: s["zone"] for s in listing(admin_api)}
    assert zones == {"node1": "nova", "node2": "az1", "ctl": "internal"}


def test_list_zone_names_follow_the_settings(admin_api, node1, settings):
    settings.DEFAULT_AVAILABILITY_ZONE = "default-az"
    settings.INTERNAL_SERVICE_AVAILABILITY_ZONE = "services"
    other_service("ctl", "nova-conductor")
    assert {s["host"]: s["zone"] for s in listing(admin_api)} == {"node1": "default-az", "ctl": "services"}


def test_list_filters_match_exactly(admin_api, make_host):
    make_host("node1")
    make_host("node10")
    other_service("node1", "nova-scheduler")
    assert [s["binary"] for s in listing(admin_api, "?host=node1")] == ["nova-compute", "nova-scheduler"]
    assert [s["host"] for s in listing(admin_api, "?binary=nova-compute")] == ["node1", "node10"]
    assert [(s["host"], s["binary"]) for s in listing(admin_api, "?host=node1&binary=nova-scheduler")] == [
        ("node1", "nova-scheduler")
    ]
    assert listing(admin_api, "?host=NODE1") == []
    assert listing(admin_api, "?host=node") == []


def test_empty_filters_filter_nothing(admin_api, make_host):
    make_host("node1")
    make_host("node2")
    assert len(listing(admin_api, "?host=&binary=")) == 2


def test_state_follows_service_down_time(admin_api, node1, settings):
    settings.SERVICE_DOWN_TIME = 30
    Service.objects.update(last_seen_up=timezone.now() - timedelta(seconds=20))
    assert listing(admin_api)[0]["state"] == "up"
    Service.objects.update(last_seen_up=timezone.now() - timedelta(seconds=40))
    assert listing(admin_api)[0]["state"] == "down"


def test_service_never_seen_up_counts_from_its_creation(admin_api, node1):
    Service.objects.update(last_seen_up=None, created_at=timezone.now())
    assert listing(admin_api)[0]["state"] == "up"
    Service.objects.update(created_at=timezone.now() - timedelta(seconds=settings.SERVICE_DOWN_TIME + 5))
    assert listing(admin_api)[0]["state"] == "down"


def test_forced_down_service_is_down(admin_api, node1):
    Service.objects.update(forced_down=True)
    (item,) = listing(admin_api, version="2.11")
    assert item["state"] == "down" and item["forced_down"] is True


def test_disabled_service_shows_status_and_reason(admin_api, node1):
    Service.objects.update(disabled=True, disabled_reason="maintenance")
    (item,) = listing(admin_api)
    assert item["status"] == "disabled" and item["disabled_reason"] == "maintenance"


def test_unknown_query_parameters_are_ignored_before_2_75(admin_api, node1):
    assert len(listing(admin_api, "?foo=1", version="2.74")) == 1


def test_unknown_query_parameters_are_400_from_2_75(admin_api, node1):
    message = fault(admin_api.get("/os-services?foo=1", version="2.75"), 400, "badRequest")
    assert message.startswith("Invalid input for query parameters foo.")
    assert len(listing(admin_api, "?host=node1&binary=nova-compute", version="2.75")) == 1


def test_reader_may_list(reader_api, node1):
    assert [s["host"] for s in listing(reader_api)] == ["node1"]


def test_member_may_not_list(member_api, node1):
    assert "os_compute_api:os-services:list" in fault(member_api.get("/os-services"), 403, "forbidden")


def test_list_needs_a_token(anon_api):
    fault(anon_api.get("/os-services"), 401, "unauthorized")


# --- update before 2.53: PUT /os-services/{action} ----------------------------

TARGET = {"host": "node1", "binary": "nova-compute"}


def test_disable(admin_api, node1):
    response = admin_api.put("/os-services/disable", TARGET)
    assert response.status_code == 200
    assert response.json() == {"service": {**TARGET, "status": "disabled"}}
    node1.refresh_from_db()
    assert node1.disabled is True and node1.disabled_reason is None


def test_disable_log_reason(admin_api, node1):
    response = admin_api.put("/os-services/disable-log-reason", {**TARGET, "disabled_reason": "new disk"})
    assert response.json() == {"service": {**TARGET, "status": "disabled", "disabled_reason": "new disk"}}
    node1.refresh_from_db()
    assert node1.disabled is True and node1.disabled_reason == "new disk"


def test_disable_clears_an_earlier_reason(admin_api, node1):
    Service.objects.update(disabled=True, disabled_reason="old")
    admin_api.put("/os-services/disable", TARGET)
    node1.refresh_from_db()
    assert node1.disabled is True and node1.disabled_reason is None


def test_enable_clears_the_reason(admin_api, node1):
    Service.objects.update(disabled=True, disabled_reason="maintenance")
    response = admin_api.put("/os-services/enable", TARGET)
    assert response.json() == {"service": {**TARGET, "status": "enabled"}}
    node1.refresh_from_db()
    assert node1.disabled is False and node1.disabled_reason is None


def test_status_change_records_a_service_update_event(admin_api, node1):
    admin_api.put("/os-services/disable-log-reason", {**TARGET, "disabled_reason": "x"})
    event = Event.objects.get(event_type="service.update")
    assert event.object_type == "service"
    assert event.object_uuid == str(node1.uuid)
    assert event.username == "admin-user"
    assert event.payload["disabled"] is True and event.payload["disabled_reason"] == "x"
    assert event.payload["host"] == "node1" and event.payload["availability_zone"] == "nova"


def test_status_change_updates_updated_at(admin_api, node1):
    before = node1.updated_at
    admin_api.put("/os-services/disable", TARGET)
    node1.refresh_from_db()
    assert node1.updated_at > before


@pytest.mark.parametrize(
    "value, expected", [(True, True), ("true", True), ("yes", True), (False, False), ("off", False)]
)
def test_force_down_from_2_11(admin_api, node1, value, expected):
    Service.objects.update(forced_down=not expected)
    response = admin_api.put("/os-services/force-down", {**TARGET, "forced_down": value}, version="2.11")
    assert response.status_code == 200
    assert response.json() == {"service": {**TARGET, "forced_down": expected}}
    node1.refresh_from_db()
    assert node1.forced_down is expected


def test_force_down_needs_the_field(admin_api, node1):
    before = state()
    assert (
        fault(admin_api.put("/os-services/force-down", TARGET, version="2.11"), 400, "badRequest")
        == "Missing forced_down field"
    )
    assert state() == before


def test_force_down_is_unknown_before_2_11(admin_api, node1):
    assert (
        fault(admin_api.put("/os-services/force-down", TARGET, version="2.10"), 404, "itemNotFound") == "Unknown action"
    )


def test_forced_down_field_is_refused_before_2_11(admin_api, node1):
    message = fault(
        admin_api.put("/os-services/force-down", {**TARGET, "forced_down": True}, version="2.10"), 400, "badRequest"
    )
    assert "'forced_down' was unexpected" in message


def test_disable_log_reason_needs_a_reason(admin_api, node1):
    before = state()
    assert (
        fault(admin_api.put("/os-services/disable-log-reason", TARGET), 400, "badRequest")
        == "Missing disabled reason field"
    )
    assert state() == before


def test_unknown_action_is_404(admin_api, node1):
    assert fault(admin_api.put("/os-services/pause", TARGET), 404, "itemNotFound") == "Unknown action"


def test_action_on_a_non_compute_service_is_400(admin_api, node1):
    other_service("ctl", "nova-scheduler")
    before = state()
    message = fault(
        admin_api.put("/os-services/disable", {"host": "ctl", "binary": "nova-scheduler"}), 400, "badRequest"
    )
    assert message == ("Updating a nova-scheduler service is not supported. Only nova-compute services can be updated.")
    assert state() == before


def test_action_on_an_unknown_host_is_404(admin_api, node1):
    message = fault(
        admin_api.put("/os-services/disable", {"host": "nope", "binary": "nova-compute"}), 404, "itemNotFound"
    )
    assert message.startswith("Could not find binary nova-compute on host nope.")


def test_action_host_matches_exactly(admin_api, node1):
    fault(admin_api.put("/os-services/disable", {"host": "NODE1", "binary": "nova-compute"}), 404, "itemNotFound")
    assert compute("node1").disabled is False


@pytest.mark.parametrize(
    "body, field",
    [
        ({"binary": "nova-compute"}, "'host' is a required property"),
        ({"host": "node1"}, "'binary' is a required property"),
        ({**TARGET, "host": "node 1"}, "host"),
        ({**TARGET, "host": ""}, "host"),
        ({**TARGET, "host": "n" * 256}, "host"),
        ({**TARGET, "binary": ""}, "binary"),
        ({**TARGET, "binary": 7}, "binary"),
        ({**TARGET, "disabled_reason": ""}, "disabled_reason"),
        ({**TARGET, "disabled_reason": "r" * 256}, "disabled_reason"),
        ({**TARGET, "disabled_reason": None}, "disabled_reason"),
        ({**TARGET, "status": "disabled"}, "'status' was unexpected"),
        (["node1"], "is not of type 'object'"),
    ],
)
def test_action_rejects_bad_input(admin_api, node1, body, field):
    before = state()
    message = fault(admin_api.put("/os-services/disable-log-reason", body), 400, "badRequest")
    assert field in message
    assert state() == before


def test_force_down_rejects_a_non_boolean(admin_api, node1):
    message = fault(
        admin_api.put("/os-services/force-down", {**TARGET, "forced_down": "maybe"}, version="2.11"), 400, "badRequest"
    )
    assert message.startswith("Invalid input for field/attribute forced_down.")
    assert compute("node1").forced_down is False


def test_action_rejects_malformed_json(admin_api, node1):
    before = state()
    fault(admin_api.put("/os-services/disable", raw="{not json"), 400, "badRequest")
    assert state() == before


def test_action_body_is_checked_before_the_action_name(admin_api, node1):
    fault(admin_api.put("/os-services/pause", {"host": "node1"}), 400, "badRequest")


@pytest.mark.parametrize("api_name", ["reader_api", "member_api"])
def test_only_admins_update(request, node1, api_name):
    api = request.getfixturevalue(api_name)
    message = fault(api.put("/os-services/disable", TARGET), 403, "forbidden")
    assert "os_compute_api:os-services:update" in message
    assert compute("node1").disabled is False


def test_update_needs_a_token(anon_api, node1):
    fault(anon_api.put("/os-services/disable", TARGET), 401, "unauthorized")


# --- update from 2.53: PUT /os-services/{uuid} ---------------------------------


def put(api, service, body):
    return api.put(f"/os-services/{service.uuid}", body, version="2.53")


def test_disable_by_uuid_returns_the_full_service(admin_api, node1):
    response = put(admin_api, node1, {"status": "disabled", "disabled_reason": "maintenance"})
    assert response.status_code == 200
    item = response.json()["service"]
    assert set(item) == V253_FIELDS
    assert item["id"] == str(node1.uuid)
    assert (item["status"], item["disabled_reason"], item["zone"], item["state"]) == (
        "disabled",
        "maintenance",
        "nova",
        "up",
    )
    node1.refresh_from_db()
    assert node1.disabled is True and node1.disabled_reason == "maintenance"
    assert Event.objects.filter(event_type="service.update", object_uuid=str(node1.uuid)).count() == 1


def test_disable_without_reason_clears_the_reason(admin_api, node1):
    Service.objects.update(disabled=True, disabled_reason="old")
    item = put(admin_api, node1, {"status": "disabled"}).json()["service"]
    assert item["status"] == "disabled" and item["disabled_reason"] is None


def test_enable_by_uuid_clears_the_reason(admin_api, node1):
    Service.objects.update(disabled=True, disabled_reason="old")
    item = put(admin_api, node1, {"status": "enabled"}).json()["service"]
    assert item["status"] == "enabled" and item["disabled_reason"] is None
    assert compute("node1").disabled is False


def test_force_down_by_uuid(admin_api, node1):
    item = put(admin_api, node1, {"forced_down": True}).json()["service"]
    assert item["forced_down"] is True and item["state"] == "down" and item["status"] == "enabled"
    item = put(admin_api, node1, {"forced_down": "false"}).json()["service"]
    assert item["forced_down"] is False and item["state"] == "up"


def test_status_and_forced_down_together(admin_api, node1):
    item = put(admin_api, node1, {"status": "disabled", "forced_down": True}).json()["service"]
    assert item["status"] == "disabled" and item["forced_down"] is True


def test_zone_of_the_updated_service_follows_its_aggregates(admin_api, node1, system):
    aggregate = services.create_aggregate(system, "rack1", "az1")
    services.add_host(system, aggregate.id, "node1")
    assert put(admin_api, node1, {"status": "disabled"}).json()["service"]["zone"] == "az1"


def test_enable_with_a_reason_is_400(admin_api, node1):
    Service.objects.update(disabled=True, disabled_reason="old")
    before = state()
    message = fault(put(admin_api, node1, {"status": "enabled", "disabled_reason": "x"}), 400, "badRequest")
    assert message == "Specifying 'disabled_reason' with status 'enabled' is invalid."
    assert state() == before


@pytest.mark.parametrize("body", [{}, {"disabled_reason": "only a reason"}])
def test_no_update_requested_is_400(admin_api, node1, body):
    before = state()
    message = fault(put(admin_api, node1, body), 400, "badRequest")
    assert message == "No updates were requested. Fields 'status' or 'forced_down' should be specified."
    assert state() == before
    assert not Event.objects.filter(event_type="service.update").exists()


def test_update_of_a_non_compute_service_is_400(admin_api, node1):
    scheduler = other_service("ctl", "nova-scheduler")
    message = fault(put(admin_api, scheduler, {"status": "disabled"}), 400, "badRequest")
    assert message.startswith("Updating a nova-scheduler service is not supported.")
    scheduler.refresh_from_db()
    assert scheduler.disabled is False


def test_update_of_an_unknown_uuid_is_404(admin_api, node1):
    missing = uuid.uuid4()
    message = fault(
        admin_api.put(f"/os-services/{missing}", {"status": "disabled"}, version="2.53"), 404, "itemNotFound"
    )
    assert message == f"Service {missing} could not be found."


@pytest.mark.parametrize("ref", ["disable", "1", "not-a-uuid"])
def test_update_path_must_be_a_uuid_from_2_53(admin_api, node1, ref):
    message = fault(admin_api.put(f"/os-services/{ref}", {"status": "disabled"}, version="2.53"), 400, "badRequest")
    assert message == f"Invalid uuid {ref}"
    assert compute("node1").disabled is False


@pytest.mark.parametrize(
    "body, field",
    [
        ({"status": "paused"}, "status"),
        ({"status": None}, "status"),
        ({"status": "disabled", "disabled_reason": ""}, "disabled_reason"),
        ({"status": "disabled", "disabled_reason": "r" * 256}, "disabled_reason"),
        ({"forced_down": "maybe"}, "forced_down"),
        ({"status": "disabled", "host": "node1"}, "'host' was unexpected"),
        ("disabled", "is not of type 'object'"),
    ],
)
def test_update_rejects_bad_input(admin_api, node1, body, field):
    before = state()
    message = fault(put(admin_api, node1, body), 400, "badRequest")
    assert field in message
    assert state() == before


def test_update_rejects_malformed_json(admin_api, node1):
    response = admin_api.put(f"/os-services/{node1.uuid}", raw="{", version="2.53")
    fault(response, 400, "badRequest")


def test_update_checks_the_body_then_the_uuid_then_the_policy(member_api, node1):
    assert "status" in fault(member_api.put("/os-services/x", {"status": "on"}, version="2.53"), 400, "badRequest")
    assert (
        fault(member_api.put("/os-services/x", {"status": "enabled"}, version="2.53"), 400, "badRequest")
        == "Invalid uuid x"
    )
    fault(put(member_api, node1, {"status": "disabled"}), 403, "forbidden")
    assert compute("node1").disabled is False


def test_reader_may_not_update_by_uuid(reader_api, node1):
    fault(put(reader_api, node1, {"status": "disabled"}), 403, "forbidden")


# --- delete ------------------------------------------------------------------


def test_delete_compute_service_by_id(admin_api, make_host, system):
    make_host("node1")
    make_host("node1", "node1-b")
    make_host("node2")
    service_id = compute("node1").id
    rack = services.create_aggregate(system, "rack1", "az1")
    fast = services.create_aggregate(system, "fast")
    for aggregate in (rack, fast):
        services.add_host(system, aggregate.id, "node1")
        services.add_host(system, aggregate.id, "node2")
    response = admin_api.delete(f"/os-services/{service_id}")
    assert response.status_code == 204
    assert response.content == b""
    assert not Service.objects.filter(host="node1").exists()
    assert not ComputeNode.objects.filter(host="node1").exists()
    assert sorted(AggregateHost.objects.values_list("aggregate_id", "host")) == [(rack.id, "node2"), (fast.id, "node2")]
    # The host left each aggregate through the aggregate API, with its events.
    removed = Event.objects.filter(event_type="aggregate.remove_host.end").order_by("id")
    assert [e.object_id for e in removed] == [str(rack.id), str(fast.id)]
    deleted = Event.objects.get(event_type="service.delete")
    assert (deleted.object_type, deleted.object_id, deleted.payload["host"]) == ("service", str(service_id), "node1")


def test_deleted_host_leaves_the_zone_list(admin_api, make_host, system):
    make_host("node1")
    make_host("node2")
    aggregate = services.create_aggregate(system, "rack1", "az1")
    services.add_host(system, aggregate.id, "node1")
    admin_api.delete(f"/os-services/{compute('node1').uuid}", version="2.53")
    zones = admin_api.get("/os-availability-zone").json()["availabilityZoneInfo"]
    assert [z["zoneName"] for z in zones] == ["nova"]


def provider_rows(action):
    return list(ProviderSyncRequest.objects.filter(action=action).values_list("hypervisor_hostname", flat=True))


def test_delete_compute_service_writes_a_provider_deletion_per_node(admin_api, make_host):
    make_host("node1")
    make_host("node1", "node1-b")
    make_host("node2")
    assert admin_api.delete(f"/os-services/{compute('node1').uuid}", version="2.53").status_code == 204
    assert provider_rows(ProviderSyncRequest.DELETE) == ["node1", "node1-b"]


@pytest.mark.parametrize(
    "request_args",
    [
        ("put", "/os-services/disable", TARGET, None),
        ("put", "/os-services/disable-log-reason", {**TARGET, "disabled_reason": "new disk"}, None),
        ("put", "uuid", {"status": "disabled"}, "2.53"),
    ],
)
def test_enabling_and_disabling_have_the_providers_follow(admin_api, node1, request_args):
    method, path, body, version = request_args
    ProviderSyncRequest.objects.all().delete()  # the registration's
    path = f"/os-services/{node1.uuid}" if path == "uuid" else path
    assert admin_api.request(method, path, body, version=version).status_code == 200
    assert provider_rows(ProviderSyncRequest.SYNC) == ["node1"]
    assert admin_api.request(method, path, body, version=version).status_code == 200  # no change: no row
    assert provider_rows(ProviderSyncRequest.SYNC) == ["node1"]
    assert admin_api.put("/os-services/enable", TARGET).status_code == 200
    assert provider_rows(ProviderSyncRequest.SYNC) == ["node1", "node1"]


def test_forcing_down_leaves_the_providers_alone(admin_api, node1):
    ProviderSyncRequest.objects.all().delete()
    assert put(admin_api, node1, {"forced_down": True}).status_code == 200
    assert not ProviderSyncRequest.objects.exists()


def test_delete_by_uuid_from_2_53(admin_api, node1):
    assert admin_api.delete(f"/os-services/{node1.uuid}", version="2.53").status_code == 204
    assert not Service.objects.exists()


def test_delete_non_compute_service(admin_api, node1):
    scheduler = other_service("ctl", "nova-scheduler")
    assert admin_api.delete(f"/os-services/{scheduler.id}").status_code == 204
    assert list(Service.objects.values_list("host", flat=True)) == ["node1"]


@pytest.mark.parametrize("nodes", [["node1"], ["node1", "node1-b"]])
def test_delete_of_a_host_with_instances_is_409(admin_api, make_host, system, nodes):
    for node in nodes:
        make_host("node1", node)
    ComputeNode.objects.filter(hypervisor_hostname=nodes[-1]).update(running_vms=2)
    aggregate = services.create_aggregate(system, "fast")
    services.add_host(system, aggregate.id, "node1")
    before = state()
    message = fault(admin_api.delete(f"/os-services/{compute('node1').id}"), 409, "conflictingRequest")
    assert message.startswith(
        "Unable to delete compute service that is hosting instances. Migrate or delete the instances first"
    )
    assert state() == before
    assert not Event.objects.filter(event_type__startswith="service.delete").exists()


def test_delete_is_all_or_nothing(admin_api, make_host, system, monkeypatch):
    make_host("node1")
    first = services.create_aggregate(system, "first")
    second = services.create_aggregate(system, "second")
    for aggregate in (first, second):
        services.add_host(system, aggregate.id, "node1")
    before = state()
    events_before = Event.objects.count()
    real_remove_host = services.remove_host

    def remove_host_failing_on_second(caller, aggregate_id, host):
        if aggregate_id == second.id:
            raise errors.Conflict("placement is unreachable")
        return real_remove_host(caller, aggregate_id, host)

    monkeypatch.setattr("aggregates.hosts.services.aggregate_services.remove_host", remove_host_failing_on_second)
    fault(admin_api.delete(f"/os-services/{compute('node1').id}"), 409, "conflictingRequest")
    assert state() == before
    assert Event.objects.count() == events_before


def test_delete_of_an_unknown_service_is_404(admin_api, node1):
    assert fault(admin_api.delete("/os-services/999"), 404, "itemNotFound") == "Service 999 not found."
    missing = uuid.uuid4()
    assert (
        fault(admin_api.delete(f"/os-services/{missing}", version="2.53"), 404, "itemNotFound")
        == f"Service {missing} not found."
    )


@pytest.mark.parametrize("ref", ["abc", "1.5", "{node_uuid}"])
def test_delete_id_must_be_an_integer_before_2_53(admin_api, node1, ref):
    ref = ref.format(node_uuid=node1.uuid)
    message = fault(admin_api.delete(f"/os-services/{ref}", version="2.52"), 400, "badRequest")
    assert message == "Invalid input received: id must be an integer"
    assert Service.objects.exists()


@pytest.mark.parametrize("ref", ["abc", "{node_id}"])
def test_delete_id_must_be_a_uuid_from_2_53(admin_api, node1, ref):
    ref = ref.format(node_id=node1.id)
    assert fault(admin_api.delete(f"/os-services/{ref}", version="2.53"), 400, "badRequest") == f"Invalid uuid {ref}"
    assert Service.objects.exists()


@pytest.mark.parametrize("api_name", ["reader_api", "member_api"])
def test_only_admins_delete(request, node1, api_name):
    api = request.getfixturevalue(api_name)
    assert "os_compute_api:os-services:delete" in fault(api.delete(f"/os-services/{node1.id}"), 403, "forbidden")
    # The policy is checked before the id.
    fault(api.delete("/os-services/abc"), 403, "forbidden")
    assert Service.objects.exists()


def test_delete_needs_a_token(anon_api, node1):
    fault(anon_api.delete(f"/os-services/{node1.id}"), 401, "unauthorized")
    assert Service.objects.exists()
