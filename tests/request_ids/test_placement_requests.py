"""Corral's placement API treats request ids as upstream's does: a new
local id answered in X-OpenStack-Request-ID (and in its error bodies), the
caller's valid X-OpenStack-Request-ID kept as the global id on its log
line. Pointed at a placement over HTTP, the compute side sends the global
id across the socket."""

import uuid

import pytest

from aggregates.mirroring.models import PlacementMirrorRequest
from tests.plugins.api import add_host, create_aggregate

PLACEMENT = {"OpenStack-API-Version": "placement 1.20"}


@pytest.mark.django_db
def test_placement_logs_the_callers_global_id(admin_api, log_records, global_id):
    missing = uuid.uuid4()
    response = admin_api.get(
        f"/placement/resource_providers/{missing}", headers={**PLACEMENT, "X-OpenStack-Request-ID": global_id}
    )

    assert response.status_code == 404
    local_id = response["X-OpenStack-Request-ID"]
    assert local_id != global_id and local_id.startswith("req-")
    assert response.json()["errors"][0]["request_id"] == local_id
    (line,) = log_records.of_logger("placement.api.base")
    assert (
        line.getMessage()
        == f'"GET /placement/resource_providers/{missing}" status: 404 len: {len(response.content)} microversion: 1.20'
    )
    assert (line.levelname, line.request_id, line.global_request_id) == ("INFO", local_id, global_id)
    assert line.user == "admin-user"


@pytest.mark.django_db
def test_placement_ignores_an_inbound_id_of_another_form(admin_api, log_records):
    response = admin_api.get("/placement/resource_providers", headers={**PLACEMENT, "X-OpenStack-Request-ID": "x"})
    assert response.status_code == 200
    (line,) = log_records.of_logger("placement.api.base")
    assert (line.request_id, line.global_request_id) == (response["X-OpenStack-Request-ID"], "-")


@pytest.mark.django_db(transaction=True)
def test_the_global_id_crosses_http_to_placement(admin_api, make_host, own_placement, log_records, global_id):
    node = make_host("h1")  # its provider is created over HTTP when the registration commits
    aggregate = create_aggregate(admin_api, "agg1")
    log_records.records.clear()

    admin_api.client.defaults["HTTP_X_OPENSTACK_REQUEST_ID"] = global_id
    local_id = add_host(admin_api, aggregate, "h1")["X-OpenStack-Request-ID"]

    # Served by the live server's thread, each request under a local id of its own.
    served = [r for r in log_records.of_logger("placement.api.base") if f"/{node.uuid}/aggregates" in r.getMessage()]
    assert [r.getMessage().split('"')[1].split()[0] for r in served] == ["GET", "PUT"]
    assert all(r.global_request_id == global_id for r in served)
    assert all(r.request_id not in (local_id, global_id) for r in served)
    assert PlacementMirrorRequest.objects.get().status == PlacementMirrorRequest.DONE
    assert own_placement.aggregates_of(node.uuid) == {aggregate["uuid"]}
