"""A boot, a move and a maintenance job started through the API: each logs
what it did with the request's ids, its events record both, and the
placement calls of the work done after the request (the build, the move,
the job's moves in their threads) are sent the global id."""

import time

import pytest

from aggregates.audit.models import Event
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

pytestmark = pytest.mark.django_db(transaction=True)

V = "2.100"


def boot(api, flavor, image, headers=None, **kw):
    response = api.post("/servers", cli_body(flavor, image, **kw), version=V, headers=headers)
    assert response.status_code == 202, response.content
    server = Server.objects.get(uuid=response.json()["server"]["id"])
    assert server.vm_state == "active", server.fault
    return server, response["X-OpenStack-Request-ID"]


def sent_ids(headers):
    return {sent.get("X-OpenStack-Request-ID") for sent in headers}


def test_a_boot_logs_and_sends_the_global_id(cloud, admin_api, log_records, placement_headers, global_id):
    cloud.hosts("h1", "h2")
    flavor, image = cloud.flavor(), cloud.image()
    placement_headers.clear()

    server, local_id = boot(admin_api, flavor, image, headers={"X-OpenStack-Request-ID": global_id})

    (accepted,) = log_records.with_message("Accepted the boot of")
    assert str(server.uuid) in accepted.getMessage()
    assert (accepted.levelname, accepted.request_id, accepted.global_request_id) == ("INFO", local_id, global_id)
    events = Event.objects.filter(object_uuid=str(server.uuid))
    assert {e.event_type for e in events} >= {"instance.create.start"}
    assert {(e.request_id, e.global_request_id) for e in events} == {(local_id, global_id)}
    # The scheduler's candidates and the claim, after the commit, went with it.
    assert len(placement_headers) >= 2 and sent_ids(placement_headers) == {global_id}


def test_a_move_logs_and_sends_the_global_id(cloud, admin_api, log_records, placement_headers, global_id):
    cloud.hosts("h1", "h2")
    server, _ = boot(admin_api, cloud.flavor(), cloud.image())
    placement_headers.clear()
    log_records.records.clear()

    response = admin_api.post(
        f"/servers/{server.uuid}/action",
        {"os-migrateLive": {"host": None, "block_migration": "auto"}},
        version=V,
        headers={"X-OpenStack-Request-ID": global_id},
    )
    assert response.status_code == 202, response.content
    local_id = response["X-OpenStack-Request-ID"]

    (accepted,) = log_records.with_message(f"Accepted the live-migration of server {server.uuid}")
    assert (accepted.levelname, accepted.request_id, accepted.global_request_id) == ("INFO", local_id, global_id)
    start = Event.objects.get(event_type="instance.live_migration.start")
    assert (start.request_id, start.global_request_id) == (local_id, global_id)
    assert Server.objects.get(pk=server.pk).host != server.host
    assert placement_headers and sent_ids(placement_headers) == {global_id}


def test_a_job_started_through_the_api_runs_with_the_ids(cloud, admin_api, log_records, placement_headers, global_id):
    cloud.hosts("A", "B")
    cloud.aggregate("rack1", ["A", "B"])
    server, _ = boot(admin_api, cloud.flavor(), cloud.image(), zone="nova:A")
    placement_headers.clear()
    log_records.records.clear()

    response = admin_api.post(
        "/os-hosts/A/maintenance",
        {"maintenance": {"action": "start"}},
        version=V,
        headers={"X-OpenStack-Request-ID": global_id},
    )
    assert response.status_code == 202, response.content
    local_id = response["X-OpenStack-Request-ID"]
    job_id = response.json()["job"]["id"]
    deadline = time.monotonic() + 30
    while admin_api.get(f"/os-maintenance-jobs/{job_id}", version=V).json()["job"]["status"] in ("queued", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.05)

    (started,) = log_records.with_message(f"Started maintenance job {job_id}")
    assert (started.levelname, started.request_id, started.global_request_id) == ("INFO", local_id, global_id)
    assert Server.objects.get(pk=server.pk).host == "B"
    # The job's own move, in its pool thread, logged and called placement with them.
    (moved,) = log_records.with_message(f"of server {server.uuid}")
    assert (moved.request_id, moved.global_request_id) == (local_id, global_id)
    assert placement_headers and sent_ids(placement_headers) == {global_id}
