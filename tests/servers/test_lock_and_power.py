"""lock / unlock (os-lock-server) and the power actions os-stop, os-start
and reboot, as Nova's API answers them: the states, the 409s with Nova's
messages, the lock's guard on every state-changing action (admins
override), the policies, the instance actions, placement untouched."""

import pytest

from aggregates.servers.models import Server
from tests.helpers import fault
from tests.plugins.api import ApiClient

from .conftest import act

V = "2.100"
UNKNOWN = "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"


@pytest.fixture
def server_id(boot, member_api):
    return boot(member_api)


@pytest.fixture
def other_admin_api(token_for):
    """An admin of another project: its lock is locked_by "admin"."""
    return ApiClient(token_for("admin", "other-admin", project_name="admin"))


def shown(api, server_id, version=V):
    return api.get(f"/servers/{server_id}", version=version).json()["server"]


def last_action(api, server_id):
    return api.get(f"/servers/{server_id}/os-instance-actions", version=V).json()["instanceActions"][0]


# --- lock / unlock --------------------------------------------------------------------------


def test_lock_shows_locked_and_its_reason_per_microversion(server_id, member_api):
    assert "locked" not in shown(member_api, server_id, "2.8")
    assert shown(member_api, server_id, "2.9")["locked"] is False
    response = act(member_api, server_id, {"lock": {"locked_reason": "maintenance"}}, version="2.73")
    assert response.status_code == 202 and response.content == b""
    assert shown(member_api, server_id, "2.9")["locked"] is True and "locked_reason" not in shown(
        member_api, server_id, "2.72"
    )
    body = shown(member_api, server_id, "2.73")
    assert (body["locked"], body["locked_reason"]) == (True, "maintenance")
    action = last_action(member_api, server_id)
    assert (action["action"], action["request_id"]) == ("lock", response.headers["X-OpenStack-Request-ID"])

    response = act(member_api, server_id, {"unlock": None})
    assert response.status_code == 202
    body = shown(member_api, server_id, "2.73")
    assert (body["locked"], body["locked_reason"]) == (False, None)
    assert last_action(member_api, server_id)["action"] == "unlock"


def test_lock_bodies_per_microversion(server_id, member_api):
    # Before 2.73 any value is taken (and a reason ignored); from 2.73 null or {"locked_reason"}.
    assert act(member_api, server_id, {"lock": {"locked_reason": "x"}}, version="2.72").status_code == 202
    assert shown(member_api, server_id, "2.73")["locked_reason"] is None
    act(member_api, server_id, {"unlock": None})
    for body in ({"lock": {"reason": "x"}}, {"lock": {"locked_reason": ""}}, {"lock": "x"}, {"lock": None, "x": 1}):
        fault(act(member_api, server_id, body, version="2.73"), 400, "badRequest")
    assert shown(member_api, server_id)["locked"] is False
    message = fault(act(member_api, UNKNOWN, {"lock": None}), 404, "itemNotFound")
    assert message == f"Instance {UNKNOWN} could not be found."


def test_locked_list_filter_from_2_73(boot, member_api):
    locked, free = boot(member_api, name="locked-one"), boot(member_api, name="free-one")
    act(member_api, locked, {"lock": None})
    listed = member_api.get("/servers?locked=true", version="2.73").json()["servers"]
    assert [s["id"] for s in listed] == [locked]
    listed = member_api.get("/servers/detail?locked=false", version="2.73").json()["servers"]
    assert [s["id"] for s in listed] == [free]
    fault(member_api.get("/servers?locked=maybe", version="2.73"), 400, "badRequest")
    # Before 2.73 a non-admin's locked filter is stripped, as Nova strips it.
    assert len(member_api.get("/servers?locked=true", version="2.72").json()["servers"]) == 2


def test_a_locked_server_refuses_its_owner_every_change_and_admins_override(cloud, server_id, member_api, admin_api):
    act(member_api, server_id, {"lock": None})
    refused = f"Instance {server_id} is locked"
    for body in (
        {"os-stop": None},
        {"reboot": {"type": "HARD"}},
        {"forceDelete": None},
        {"resize": {"flavorRef": "2"}},
        {"revertResize": None},
    ):
        assert fault(act(member_api, server_id, body), 409, "conflictingRequest") == refused, body
    assert fault(member_api.delete(f"/servers/{server_id}", version=V), 409, "conflictingRequest") == refused
    metadata = {"metadata": {"k": "v"}}
    item = {"meta": {"k": "v"}}
    assert fault(member_api.post(f"/servers/{server_id}/metadata", metadata, version=V), 409, "conflictingRequest")
    assert fault(member_api.put(f"/servers/{server_id}/metadata/k", item, version=V), 409, "conflictingRequest")
    server = Server.objects.get(uuid=server_id)
    assert (server.vm_state, server.metadata, server.deleted_at) == ("active", {}, None)
    assert cloud.allocations(server_id) != {}

    # Nova's update (PUT /servers/{id}) does not check the lock.
    assert member_api.put(f"/servers/{server_id}", {"server": {"name": "renamed"}}, version=V).status_code == 200
    # An admin overrides the lock.
    assert act(admin_api, server_id, {"os-stop": None}).status_code == 202
    assert admin_api.post(f"/servers/{server_id}/metadata", metadata, version=V).status_code == 200
    assert admin_api.delete(f"/servers/{server_id}", version=V).status_code == 204
    assert admin_api.get(f"/servers/{server_id}", version=V).status_code == 404


def test_an_admins_lock_needs_an_admin_to_unlock(server_id, member_api, other_admin_api):
    admin_api = other_admin_api
    assert act(admin_api, server_id, {"lock": None}).status_code == 202
    message = fault(act(member_api, server_id, {"unlock": None}), 403, "forbidden")
    assert message == "Policy doesn't allow os_compute_api:os-lock-server:unlock:unlock_override to be performed."
    assert shown(member_api, server_id)["locked"] is True
    # The owner's lock again changes nothing (Nova: no action recorded); the admin unlocks.
    assert act(member_api, server_id, {"lock": None}).status_code == 202
    assert act(admin_api, server_id, {"unlock": None}).status_code == 202
    assert shown(member_api, server_id)["locked"] is False


def test_callers_of_other_projects_do_not_see_the_server(server_id, admin_api, token_for):
    stranger = ApiClient(token_for("member", "stranger", project_name="other"))
    assert fault(act(stranger, server_id, {"lock": None}), 404, "itemNotFound")
    assert fault(act(stranger, server_id, {"os-stop": None}), 404, "itemNotFound")
    assert (shown(admin_api, server_id)["locked"], shown(admin_api, server_id)["status"]) == (False, "ACTIVE")


# --- stop / start / reboot ------------------------------------------------------------------


def test_stop_and_start_keep_the_allocation(cloud, server_id, member_api):
    allocation = cloud.allocations(server_id)
    response = act(member_api, server_id, {"os-stop": None})
    assert response.status_code == 202 and response.content == b""
    body = shown(member_api, server_id)
    assert (body["status"], body["OS-EXT-STS:vm_state"], body["OS-EXT-STS:power_state"]) == ("SHUTOFF", "stopped", 4)
    assert cloud.allocations(server_id) == allocation
    action = last_action(member_api, server_id)
    assert (action["action"], action["request_id"]) == ("stop", response.headers["X-OpenStack-Request-ID"])
    listed = member_api.get("/servers?status=SHUTOFF", version=V).json()["servers"]
    assert [s["id"] for s in listed] == [server_id]

    message = fault(act(member_api, server_id, {"os-stop": None}), 409, "conflictingRequest")
    assert message == f"Cannot 'stop' instance {server_id} while it is in vm_state stopped"
    message = fault(act(member_api, server_id, {"reboot": {"type": "SOFT"}}), 409, "conflictingRequest")
    assert message == f"Cannot 'reboot' instance {server_id} while it is in vm_state stopped"

    assert act(member_api, server_id, {"os-start": None}).status_code == 202
    body = shown(member_api, server_id)
    assert (body["status"], body["OS-EXT-STS:vm_state"], body["OS-EXT-STS:power_state"]) == ("ACTIVE", "active", 1)
    assert last_action(member_api, server_id)["action"] == "start"
    assert cloud.allocations(server_id) == allocation
    message = fault(act(member_api, server_id, {"os-start": None}), 409, "conflictingRequest")
    assert message == f"Cannot 'start' instance {server_id} while it is in vm_state active"


def test_reboot_soft_and_hard_and_a_hard_reboot_starts_a_stopped_server(server_id, member_api):
    for reboot_type in ("SOFT", "hard", "Soft"):
        response = act(member_api, server_id, {"reboot": {"type": reboot_type}})
        assert response.status_code == 202
        assert shown(member_api, server_id)["status"] == "ACTIVE"
    assert last_action(member_api, server_id)["action"] == "reboot"
    act(member_api, server_id, {"os-stop": None})
    assert act(member_api, server_id, {"reboot": {"type": "HARD"}}).status_code == 202
    body = shown(member_api, server_id)
    assert (body["status"], body["OS-EXT-STS:power_state"]) == ("ACTIVE", 1)


def test_power_actions_bad_input_and_unknown_servers(server_id, member_api):
    for body in (
        {"reboot": {"type": "WARM"}},
        {"reboot": {}},
        {"reboot": None},
        {"reboot": {"type": "SOFT", "x": 1}},
        {"os-stop": None, "x": 1},
    ):
        fault(act(member_api, server_id, body), 400, "badRequest")
    for body in ({"os-stop": None}, {"os-start": None}, {"reboot": {"type": "SOFT"}}, {"unlock": None}):
        assert fault(act(member_api, UNKNOWN, body), 404, "itemNotFound") == f"Instance {UNKNOWN} could not be found."
    assert shown(member_api, server_id)["status"] == "ACTIVE"


def test_a_task_in_progress_refuses_power_actions(server_id, member_api):
    Server.objects.filter(uuid=server_id).update(task_state="migrating")
    message = fault(act(member_api, server_id, {"os-stop": None}), 409, "conflictingRequest")
    assert message == f"Cannot 'stop' instance {server_id} while it is in task_state migrating"


def test_live_migration_refuses_a_stopped_server(server_id, member_api, admin_api):
    act(member_api, server_id, {"os-stop": None})
    body = {"os-migrateLive": {"host": None, "block_migration": "auto"}}
    message = fault(act(admin_api, server_id, body), 409, "conflictingRequest")
    assert message == f"Cannot 'os-migrateLive' instance {server_id} while it is in vm_state stopped"
