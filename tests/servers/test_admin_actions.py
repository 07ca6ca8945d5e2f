"""os-resetState (admins, 202), and forceDelete and restore as Nova answers
them with its default reclaim_instance_interval of 0: a delete is
immediate, forceDelete deletes (202), restore finds nothing soft-deleted
(409)."""

import pytest

from aggregates.servers.models import Server
from tests.helpers import fault

from .conftest import act

V = "2.100"
UNKNOWN = "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"


@pytest.fixture
def server_id(boot, member_api):
    return boot(member_api)


def test_reset_state_sets_the_vm_state_clears_the_task_and_is_an_action(server_id, admin_api, member_api):
    Server.objects.filter(uuid=server_id).update(task_state="migrating")
    response = act(admin_api, server_id, {"os-resetState": {"state": "error"}})
    assert response.status_code == 202 and response.content == b""
    shown = admin_api.get(f"/servers/{server_id}", version=V).json()["server"]
    assert (shown["status"], shown["OS-EXT-STS:vm_state"], shown["OS-EXT-STS:task_state"]) == ("ERROR", "error", None)
    request_id = response.headers["X-OpenStack-Request-ID"]
    actions = admin_api.get(f"/servers/{server_id}/os-instance-actions", version=V).json()["instanceActions"]
    assert (actions[0]["action"], actions[0]["request_id"]) == ("resetState", request_id)

    assert act(admin_api, server_id, {"os-resetState": {"state": "active"}}).status_code == 202
    assert admin_api.get(f"/servers/{server_id}", version=V).json()["server"]["status"] == "ACTIVE"


def test_reset_state_refusals(server_id, admin_api, member_api):
    message = fault(act(member_api, server_id, {"os-resetState": {"state": "error"}}), 403, "forbidden")
    assert message == "Policy doesn't allow os_compute_api:os-admin-actions:reset_state to be performed."
    for body in ({"os-resetState": {"state": "stopped"}}, {"os-resetState": {}}, {"os-resetState": None}):
        fault(act(admin_api, server_id, body), 400, "badRequest")
    message = fault(act(admin_api, UNKNOWN, {"os-resetState": {"state": "error"}}), 404, "itemNotFound")
    assert message == f"Instance {UNKNOWN} could not be found."
    assert Server.objects.get(uuid=server_id).vm_state == "active"


def test_force_delete_deletes_at_once(cloud, server_id, member_api):
    node_uuid = Server.objects.get(uuid=server_id).node_uuid
    response = act(member_api, server_id, {"forceDelete": None})
    assert response.status_code == 202 and response.content == b""
    assert member_api.get(f"/servers/{server_id}", version=V).status_code == 404
    assert cloud.allocations(server_id) == {} and cloud.usages(node_uuid)["VCPU"] == 0
    actions = member_api.get(f"/servers/{server_id}/os-instance-actions", version=V).json()["instanceActions"]
    assert (actions[0]["action"], actions[0]["request_id"]) == ("delete", response.headers["X-OpenStack-Request-ID"])
    message = fault(act(member_api, server_id, {"forceDelete": None}), 404, "itemNotFound")
    assert message == f"Instance {server_id} could not be found."


def test_restore_finds_nothing_soft_deleted(server_id, member_api):
    message = fault(act(member_api, server_id, {"restore": None}), 409, "conflictingRequest")
    assert message == f"Cannot 'restore' instance {server_id} while it is in vm_state active"
    assert fault(act(member_api, UNKNOWN, {"restore": None}), 404, "itemNotFound")
    assert member_api.delete(f"/servers/{server_id}", version=V).status_code == 204
    assert fault(act(member_api, server_id, {"restore": None}), 404, "itemNotFound")
    fault(act(member_api, server_id, {"restore": None, "x": 1}), 400, "badRequest")
