"""One id follows an operator's request: the compute API answers with a
new local request id, keeps a valid inbound X-OpenStack-Request-ID as the
global one, and both are in the log lines, the audit events and the outbox
row the request causes; placement is sent the global id (else the local
one), and Corral's placement logs it as its caller's global request id."""

import re

import pytest

from aggregates.audit.models import Event
from aggregates.mirroring.models import PlacementMirrorRequest, ProviderSyncRequest
from tests.plugins.api import create_aggregate

pytestmark = pytest.mark.django_db(transaction=True)

LOCAL_ID = re.compile(r"req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def add_host(api, aggregate, host, headers):
    response = api.post(
        f"/os-aggregates/{aggregate['id']}/action", {"add_host": {"host": host}}, version="2.41", headers=headers
    )
    assert response.status_code == 200, response.content
    return response


def sent_ids(headers):
    return [sent.get("X-OpenStack-Request-ID") for sent in headers]


def test_an_inbound_global_id_follows_add_host_to_placement(
    cloud, admin_api, log_records, placement_headers, global_id
):
    node = cloud.host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    placement_headers.clear()
    log_records.records.clear()

    response = add_host(admin_api, aggregate, "h1", {"X-OpenStack-Request-ID": global_id})

    local_id = response["X-OpenStack-Request-ID"]
    assert LOCAL_ID.fullmatch(local_id) and local_id != global_id
    assert response["X-Compute-Request-ID"] == local_id
    # The service's own line, naming what it did, with both ids.
    (added,) = log_records.with_message("Added host h1 to aggregate agg1")
    assert (added.levelname, added.request_id, added.global_request_id) == ("INFO", local_id, global_id)
    assert added.route.startswith("POST /compute/v2.1/os-aggregates/<") and added.route.endswith("/action")
    assert added.user == "admin-user" and added.project != "-"
    # Every line of the request's own work carries them.
    compute_side = [r for r in log_records.records if not r.name.startswith("placement")]
    assert compute_side and all((r.request_id, r.global_request_id) == (local_id, global_id) for r in compute_side), [
        (r.name, r.getMessage(), r.request_id) for r in compute_side
    ]
    # The audit events and the outbox row.
    events = Event.objects.filter(event_type__startswith="aggregate.add_host")
    assert {(e.event_type, e.request_id, e.global_request_id) for e in events} == {
        ("aggregate.add_host.start", local_id, global_id),
        ("aggregate.add_host.end", local_id, global_id),
    }
    row = PlacementMirrorRequest.objects.get()
    assert (row.status, row.request_id, row.global_request_id) == ("done", local_id, global_id)
    # Placement is sent the global id, and its own log names it as the caller's.
    assert placement_headers and set(sent_ids(placement_headers)) == {global_id}
    placement_lines = log_records.of_logger("placement.api.base")
    assert placement_lines and all(r.global_request_id == global_id for r in placement_lines)
    assert all(LOCAL_ID.fullmatch(r.request_id) and r.request_id not in (local_id, global_id) for r in placement_lines)
    assert any(f"/resource_providers/{node.uuid}/aggregates" in r.getMessage() for r in placement_lines)


def test_without_an_inbound_id_placement_is_sent_the_local_one(cloud, admin_api, log_records, placement_headers):
    cloud.host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    placement_headers.clear()
    log_records.records.clear()

    local_id = add_host(admin_api, aggregate, "h1", {})["X-OpenStack-Request-ID"]

    (added,) = log_records.with_message("Added host h1 to aggregate agg1")
    assert (added.request_id, added.global_request_id) == (local_id, "-")
    assert set(Event.objects.filter(request_id=local_id).values_list("global_request_id", flat=True)) == {""}
    row = PlacementMirrorRequest.objects.get()
    assert (row.request_id, row.global_request_id) == (local_id, "")
    assert placement_headers and set(sent_ids(placement_headers)) == {local_id}
    assert {r.global_request_id for r in log_records.of_logger("placement.api.base")} == {local_id}


# Fixed values: xdist workers must collect the same test ids.
SOME_UUID = "0b54c7ab-34e8-4e16-b041-7d96eb1793fa"


@pytest.mark.parametrize(
    "inbound",
    [
        "not-a-request-id",
        SOME_UUID,  # no "req-"
        f"req-{SOME_UUID.upper()}",  # oslo's form is lower-case hex
        f"req-{SOME_UUID}x",
        f" req-{SOME_UUID}",
        f"req-{SOME_UUID.replace('-', '')}",  # no dashes
        f"req-{SOME_UUID}\nreq-{SOME_UUID}",
    ],
)
def test_an_invalid_inbound_id_is_ignored(cloud, admin_api, log_records, placement_headers, inbound):
    cloud.host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    placement_headers.clear()
    log_records.records.clear()

    local_id = add_host(admin_api, aggregate, "h1", {"X-OpenStack-Request-ID": inbound})["X-OpenStack-Request-ID"]

    assert LOCAL_ID.fullmatch(local_id) and local_id != inbound
    (added,) = log_records.with_message("Added host h1 to aggregate agg1")
    assert (added.request_id, added.global_request_id) == (local_id, "-")
    assert set(Event.objects.filter(request_id=local_id).values_list("global_request_id", flat=True)) == {""}
    assert PlacementMirrorRequest.objects.get().global_request_id == ""
    assert set(sent_ids(placement_headers)) == {local_id}
    assert all(inbound not in r.getMessage() for r in log_records.records)


def test_a_host_registration_logs_and_records_both_ids(cloud, admin_api, log_records, placement_headers, global_id):
    body = {"registration": {"host": "h9", "vcpus": 4, "memory_mb": 4096, "local_gb": 40}}
    response = admin_api.post("/os-host-registrations", body, headers={"X-OpenStack-Request-ID": global_id})
    assert response.status_code == 201, response.content
    local_id = response["X-OpenStack-Request-ID"]

    (registered,) = log_records.with_message("Registered compute node h9")
    assert (registered.levelname, registered.request_id, registered.global_request_id) == ("INFO", local_id, global_id)
    event = Event.objects.get(event_type="compute_node.register")
    assert (event.request_id, event.global_request_id) == (local_id, global_id)
    row = ProviderSyncRequest.objects.get(host="h9")
    assert (row.status, row.request_id, row.global_request_id) == ("done", local_id, global_id)
    assert placement_headers and set(sent_ids(placement_headers)) == {global_id}
