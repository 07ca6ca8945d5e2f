"""GET /servers/{id}/os-instance-actions[/{request_id}]: an action under
Nova's name for every create, delete and move, with the request id, user
and project of the request that caused it, and its events; the shapes of
2.21, 2.51, 2.58, 2.62, 2.66 and 2.84."""

import hashlib

import pytest

from aggregates.hosts.models import Service
from aggregates.identity import services as identity
from aggregates.servers.models import Server
from tests.helpers import fault
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

V = "2.100"
ACTION_KEYS = {"action", "instance_uuid", "request_id", "user_id", "project_id", "start_time", "message"}
EVENT_KEYS = {"event", "start_time", "finish_time", "result"}


@pytest.fixture
def hosts(cloud):
    cloud.hosts("h1", "h2")
    return cloud.flavor(), cloud.image()


def boot(api, hosts, name="vm1"):
    flavor, image = hosts
    response = api.post("/servers", cli_body(flavor, image, name=name), version=V)
    assert response.status_code == 202, response.content
    return response.json()["server"]["id"], response.headers["X-OpenStack-Request-ID"]


def actions(api, server_id, version=V, query=""):
    response = api.get(f"/servers/{server_id}/os-instance-actions{query}", version=version)
    assert response.status_code == 200, response.content
    return response.json()


def action(api, server_id, request_id, version=V):
    response = api.get(f"/servers/{server_id}/os-instance-actions/{request_id}", version=version)
    assert response.status_code == 200, response.content
    return response.json()["instanceAction"]


def user_id(username):
    from django.contrib.auth import get_user_model

    return identity.user_id_of(get_user_model().objects.get(username=username))


def test_a_create_is_recorded_with_its_request_user_project_and_events(hosts, member_api, admin_api):
    server_id, request_id = boot(member_api, hosts)
    server = Server.objects.get(uuid=server_id)
    (listed,) = actions(member_api, server_id, version="2.1")["instanceActions"]
    assert set(listed) == ACTION_KEYS
    assert listed["action"] == "create" and listed["request_id"] == request_id
    assert listed["instance_uuid"] == server_id and listed["message"] is None
    assert (listed["user_id"], listed["project_id"]) == (user_id("member-user"), server.project_id)
    assert listed["start_time"].count(".") == 1 and not listed["start_time"].endswith("Z")
    assert set(actions(member_api, server_id, version="2.58")["instanceActions"][0]) == ACTION_KEYS | {"updated_at"}

    assert "events" not in action(member_api, server_id, request_id, version="2.50")
    shown = action(member_api, server_id, request_id, version="2.51")
    assert [(e["event"], e["result"]) for e in shown["events"]] == [
        ("compute__do_build_and_run_instance", "Success"),
        ("conductor_schedule_and_build_instances", "Success"),
    ]
    assert all(set(e) == EVENT_KEYS for e in shown["events"])
    admin_view = action(admin_api, server_id, request_id, version="2.51")
    assert all(set(e) == EVENT_KEYS | {"traceback"} for e in admin_view["events"])

    host_id = hashlib.sha224((server.project_id + "h1").encode()).hexdigest()
    at_62 = action(member_api, server_id, request_id, version="2.62")["events"][0]
    assert set(at_62) == EVENT_KEYS | {"hostId"} and at_62["hostId"] == host_id
    admin_62 = action(admin_api, server_id, request_id, version="2.62")["events"][0]
    assert (admin_62["host"], admin_62["hostId"]) == ("h1", host_id) and "details" not in admin_62
    admin_84 = action(admin_api, server_id, request_id, version="2.84")["events"][0]
    assert set(admin_84) == EVENT_KEYS | {"traceback", "host", "hostId", "details"}
    assert "details" not in action(member_api, server_id, request_id, version="2.84")["events"][0]


def test_a_failed_build_is_an_action_with_an_error_event(cloud, member_api):
    server_id, request_id = boot(member_api, (cloud.flavor(vcpus=4), cloud.image()))  # no host at all
    shown = action(member_api, server_id, request_id, version="2.84")
    assert shown["message"] == "Error"
    ((event),) = shown["events"]
    assert (event["event"], event["result"]) == ("conductor_schedule_and_build_instances", "Error")


def test_delete_and_deleted_servers_from_2_21(hosts, member_api):
    server_id, _ = boot(member_api, hosts)
    response = member_api.delete(f"/servers/{server_id}", version=V)
    assert response.status_code == 204
    delete_request = response.headers["X-OpenStack-Request-ID"]
    listed = actions(member_api, server_id, version="2.21")["instanceActions"]
    assert [(a["action"], a["request_id"]) for a in listed][0] == ("delete", delete_request)
    assert [a["action"] for a in listed] == ["delete", "create"]
    assert "events" not in action(member_api, server_id, delete_request, version="2.21")
    ((event),) = action(member_api, server_id, delete_request, version="2.51")["events"]
    assert (event["event"], event["result"]) == ("compute_terminate_instance", "Success")
    message = fault(member_api.get(f"/servers/{server_id}/os-instance-actions", version="2.20"), 404, "itemNotFound")
    assert message == f"Instance {server_id} could not be found."


def test_moves_are_recorded_under_nova_s_names(hosts, member_api, admin_api):
    server_id, _ = boot(member_api, hosts)
    moves = [
        ({"os-migrateLive": {"host": None, "block_migration": "auto"}}, "live-migration", 202),
        ({"migrate": None}, "migrate", 202),
        ({"confirmResize": None}, "confirmResize", 204),
    ]
    for body, name, status in moves:
        response = admin_api.post(f"/servers/{server_id}/action", body, version=V)
        assert response.status_code == status, response.content
        request_id = response.headers["X-OpenStack-Request-ID"]
        shown = action(admin_api, server_id, request_id, version="2.84")
        assert (shown["action"], shown["user_id"]) == (name, user_id("admin-user"))
        assert shown["events"] and all(event["result"] == "Success" for event in shown["events"]), shown
    listed = [a["action"] for a in actions(member_api, server_id)["instanceActions"]]
    assert listed == ["confirmResize", "migrate", "live-migration", "create"]
    live = action(admin_api, server_id, actions(member_api, server_id)["instanceActions"][2]["request_id"])
    assert {event["event"] for event in live["events"]} == {"conductor_live_migrate_instance", "compute_live_migration"}

    host = Server.objects.get(uuid=server_id).host
    Service.objects.filter(host=host, binary=Service.COMPUTE).update(forced_down=True)
    response = admin_api.post(f"/servers/{server_id}/action", {"evacuate": {}}, version=V)
    assert response.status_code == 200, response.content
    assert actions(member_api, server_id)["instanceActions"][0]["action"] == "evacuate"


def test_paging_and_time_filters_from_2_58(hosts, member_api):
    server_id, create_request = boot(member_api, hosts)
    member_api.put(f"/servers/{server_id}", {"server": {"name": "x"}}, version=V)  # not an action in Nova
    response = member_api.delete(f"/servers/{server_id}", version=V)
    delete_request = response.headers["X-OpenStack-Request-ID"]
    page = actions(member_api, server_id, version="2.58", query="?limit=1")
    assert [a["request_id"] for a in page["instanceActions"]] == [delete_request]
    ((link),) = page["links"]
    assert link["rel"] == "next" and f"marker={delete_request}" in link["href"] and "limit=1" in link["href"]
    rest = actions(member_api, server_id, version="2.58", query=f"?limit=1&marker={delete_request}")
    assert [a["request_id"] for a in rest["instanceActions"]] == [create_request]
    assert "links" in rest
    assert actions(member_api, server_id, version="2.58", query="?limit=5").get("links") is None

    message = fault(
        member_api.get(f"/servers/{server_id}/os-instance-actions?marker=req-nope", version="2.58"), 400, "badRequest"
    )
    assert message == "Marker req-nope could not be found."
    far = "2999-01-01T00:00:00Z"
    assert actions(member_api, server_id, version="2.58", query=f"?changes-since={far}")["instanceActions"] == []
    fault(
        member_api.get(f"/servers/{server_id}/os-instance-actions?changes-before={far}", version="2.65"),
        400,
        "badRequest",
    )
    early = actions(member_api, server_id, version="2.66", query="?changes-before=2000-01-01T00:00:00Z")
    assert early["instanceActions"] == []
    fault(member_api.get(f"/servers/{server_id}/os-instance-actions?bogus=1", version="2.58"), 400, "badRequest")
    assert actions(member_api, server_id, version="2.57", query="?bogus=1")["instanceActions"]


def test_unknown_actions_servers_and_other_projects_are_404(hosts, member_api, token_for):
    server_id, request_id = boot(member_api, hosts)
    message = fault(
        member_api.get(f"/servers/{server_id}/os-instance-actions/req-nope", version=V), 404, "itemNotFound"
    )
    assert message == "Action req-nope not found"
    other = ApiClient(token_for("member", username="other", project_name="other"))
    for path in (f"/servers/{server_id}/os-instance-actions", f"/servers/{server_id}/os-instance-actions/{request_id}"):
        assert fault(other.get(path, version=V), 404, "itemNotFound") == f"Instance {server_id} could not be found."
