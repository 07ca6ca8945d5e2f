"""Builds: where servers land (zones, forced hosts, hints), what happens when
nothing fits (ERROR with Nova's fault and the decision linked), Nova's
min_count rule, several servers at once, and builds resumed after a crash."""

from datetime import timedelta

from aggregates.errors import Unavailable
from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers import build, tasks
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

from .conftest import new_uuid

V = "2.100"


def boot(api, body, version=V):
    response = api.post("/servers", body, version=version)
    assert response.status_code == 202, response.content
    return response.json()


def show(api, server_id, version=V):
    response = api.get(f"/servers/{server_id}", version=version)
    assert response.status_code == 200, response.content
    return response.json()["server"]


def test_nothing_fits_is_an_error_with_a_fault_and_a_decision(cloud, admin_api, member_api):
    node = cloud.host("h1", vcpus=2)
    flavor, image = cloud.flavor("huge", vcpus=64), cloud.image()
    server_id = boot(admin_api, cli_body(flavor, image))["server"]["id"]
    shown = show(admin_api, server_id)
    assert (shown["status"], shown["OS-EXT-STS:vm_state"], shown["OS-EXT-STS:task_state"]) == ("ERROR", "error", None)
    fault = shown["fault"]
    assert fault["code"] == 500 and fault["message"].startswith("No valid host was found.")
    assert fault["created"].endswith("Z") and fault["details"]
    assert shown["OS-EXT-SRV-ATTR:host"] is None and shown["hostId"] == ""
    assert "progress" not in shown
    server = Server.objects.get()
    assert server.decision.outcome == SchedulingDecision.NO_VALID_HOST
    # Admins reach the stored explanation through a Link header, not a key in Nova's body.
    link = admin_api.get(f"/servers/{server_id}", version=V)["Link"]
    assert link == (
        f'<http://testserver/compute/v2.1/os-scheduler-explain/{server.decision.uuid}>; rel="related"; '
        'title="scheduling decision"'
    )
    explained = admin_api.get(f"/os-scheduler-explain/{server.decision.uuid}").json()["explanation"]
    assert explained["outcome"] == SchedulingDecision.NO_VALID_HOST
    assert cloud.allocations(server_id) == {} and cloud.usages(node.uuid).get("VCPU", 0) == 0
    listed = admin_api.get("/servers/detail?status=ERROR", version=V).json()["servers"]
    assert [item["id"] for item in listed] == [server_id]
    # An error server can be deleted.
    assert admin_api.delete(f"/servers/{server_id}").status_code == 204
    assert admin_api.get(f"/servers/{server_id}").status_code == 404


def test_members_see_the_fault_without_its_details(cloud, member_api):
    cloud.host("h1", vcpus=2)
    flavor, image = cloud.flavor("huge", vcpus=64), cloud.image()
    server_id = boot(member_api, cli_body(flavor, image))["server"]["id"]
    shown = show(member_api, server_id)
    assert shown["status"] == "ERROR" and set(shown["fault"]) == {"code", "created", "message"}
    assert not member_api.get(f"/servers/{server_id}", version=V).has_header("Link")


def test_a_zone_pins_the_server_and_places_it_there(cloud, admin_api):
    cloud.host("h1")
    cloud.host("h2")
    cloud.zone("az1", "h2")
    flavor, image = cloud.flavor(), cloud.image()
    for _ in range(3):
        server_id = boot(admin_api, cli_body(flavor, image, zone="az1"))["server"]["id"]
        shown = show(admin_api, server_id)
        assert (shown["OS-EXT-SRV-ATTR:host"], shown["OS-EXT-AZ:availability_zone"]) == ("h2", "az1")
        assert shown["pinned_availability_zone"] == "az1"
    assert "pinned_availability_zone" not in show(admin_api, server_id, "2.95")


def test_the_default_schedule_zone_pins_servers_created_without_one(cloud, admin_api, settings):
    cloud.host("h1")
    cloud.host("h2")
    cloud.zone("az1", "h2")
    settings.DEFAULT_SCHEDULE_ZONE = "az1"
    flavor, image = cloud.flavor(), cloud.image()
    server_id = boot(admin_api, cli_body(flavor, image))["server"]["id"]
    shown = show(admin_api, server_id)
    assert (shown["OS-EXT-SRV-ATTR:host"], shown["pinned_availability_zone"]) == ("h2", "az1")
    # The empty zone part of ":host" is the default zone too.
    server_id = boot(admin_api, cli_body(flavor, image, zone=":h2"))["server"]["id"]
    assert show(admin_api, server_id)["pinned_availability_zone"] == "az1"


def test_admins_force_a_host_or_a_node(cloud, admin_api):
    cloud.host("h1")
    cloud.host("h2")
    flavor, image = cloud.flavor(), cloud.image()
    for zone, host in (("nova:h2", "h2"), ("nova::h1", "h1"), ("nova:h2:h2", "h2")):
        server_id = boot(admin_api, cli_body(flavor, image, zone=zone))["server"]["id"]
        assert show(admin_api, server_id)["OS-EXT-SRV-ATTR:host"] == host, zone
    server_id = boot(admin_api, cli_body(flavor, image, host="h1"))["server"]["id"]
    assert show(admin_api, server_id)["OS-EXT-SRV-ATTR:host"] == "h1"
    # A forced host that does not exist: no valid host.
    server_id = boot(admin_api, cli_body(flavor, image, zone="nova:nope"))["server"]["id"]
    assert show(admin_api, server_id)["status"] == "ERROR"


def test_same_host_and_different_host_hints(cloud, admin_api, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "SameHostFilter", "DifferentHostFilter"]
    cloud.host("h1")
    cloud.host("h2")
    flavor, image = cloud.flavor(), cloud.image()
    first = boot(admin_api, cli_body(flavor, image, name="a"))["server"]["id"]
    first_host = show(admin_api, first)["OS-EXT-SRV-ATTR:host"]
    for hint, expected in (("same_host", first_host), ("different_host", {"h1": "h2", "h2": "h1"}[first_host])):
        body = cli_body(flavor, image, name=hint)
        body["os:scheduler_hints"] = {hint: [first]}
        server_id = boot(admin_api, body)["server"]["id"]
        shown = show(admin_api, server_id)
        assert shown["OS-EXT-SRV-ATTR:host"] == expected, hint
        assert shown["scheduler_hints"] == {hint: [first]}
    body = cli_body(flavor, image, name="nowhere")
    body["OS-SCH-HNT:scheduler_hints"] = {"same_host": new_uuid()}
    assert show(admin_api, boot(admin_api, body)["server"]["id"])["status"] == "ERROR"


def test_several_servers_in_one_request(cloud, admin_api):
    cloud.host("h1", memory_mb=1536)
    cloud.host("h2", memory_mb=1536)
    flavor, image = cloud.flavor(ram=1024), cloud.image()  # one fits on each host (512 MB are reserved)
    body = cli_body(flavor, image, name="many", min_count=2, max_count=2, return_reservation_id=True)
    reservation_id = boot(admin_api, body)["reservation_id"]
    assert reservation_id.startswith("r-")
    servers = admin_api.get(f"/servers/detail?reservation_id={reservation_id}", version=V).json()["servers"]
    assert sorted(item["name"] for item in servers) == ["many-1", "many-2"]
    assert {item["OS-EXT-SRV-ATTR:host"] for item in servers} == {"h1", "h2"}
    assert {item["status"] for item in servers} == {"ACTIVE"}
    assert sorted(item["OS-EXT-SRV-ATTR:launch_index"] for item in servers) == [0, 1]


def test_max_count_beyond_the_room_builds_what_fits(cloud, admin_api):
    cloud.host("h1", memory_mb=1536)
    flavor, image = cloud.flavor(ram=1024), cloud.image()
    created = boot(admin_api, cli_body(flavor, image, name="some", min_count=1, max_count=2))
    assert set(created["server"]) >= {"id", "links", "adminPass"}  # the first server
    states = sorted(Server.objects.values_list("name", "vm_state"))
    assert states == [("some-1", "active"), ("some-2", "error")]


def test_fewer_than_min_count_placed_means_none_is_built(cloud, admin_api):
    node = cloud.host("h1", memory_mb=1536)
    flavor, image = cloud.flavor(ram=1024), cloud.image()
    boot(admin_api, cli_body(flavor, image, name="all", min_count=2, max_count=3))
    assert sorted(Server.objects.values_list("vm_state", flat=True)) == ["error"] * 3
    assert cloud.usages(node.uuid)["MEMORY_MB"] == 0  # the one claim that held was released
    for server in Server.objects.all():
        assert cloud.allocations(server.uuid) == {}
        assert server.fault["message"].startswith("No valid host was found.")


def test_builds_left_behind_by_a_dead_worker_are_resumed(cloud, admin_api, monkeypatch):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    monkeypatch.setattr(build, "build_servers", lambda reservation_id: None)  # the worker dies
    server_id = boot(admin_api, cli_body(flavor, image))["server"]["id"]
    monkeypatch.undo()
    assert show(admin_api, server_id)["status"] == "BUILD"
    assert show(admin_api, server_id)["addresses"] == {}
    assert tasks.resume_builds.delay().get() == 0  # not stale yet
    Server.objects.update(updated_at=Server.objects.get().updated_at - timedelta(minutes=2))
    assert tasks.resume_builds.delay().get() == 1
    assert show(admin_api, server_id)["status"] == "ACTIVE"
    assert tasks.build.delay(Server.objects.get().reservation_id).get() == {"active": 0, "error": 0}


def test_a_server_deleted_while_it_builds_gives_its_claim_back(cloud, admin_api, monkeypatch):
    node = cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    real_schedule = build.scheduling.schedule_and_claim

    def schedule_then_delete(spec, uuids, *rest, **kw):
        result = real_schedule(spec, uuids, *rest, **kw)
        assert admin_api.delete(f"/servers/{uuids[0]}").status_code == 204
        return result

    monkeypatch.setattr(build.scheduling, "schedule_and_claim", schedule_then_delete)
    server_id = boot(admin_api, cli_body(flavor, image))["server"]["id"]
    assert admin_api.get(f"/servers/{server_id}").status_code == 404
    assert cloud.allocations(server_id) == {} and cloud.usages(node.uuid)["VCPU"] == 0


def test_placement_down_during_the_build_is_an_error(cloud, admin_api, monkeypatch):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()

    def unavailable(spec, uuids, *rest, **kw):
        raise Unavailable("Scheduling is not possible now: placement is down")

    monkeypatch.setattr(build.scheduling, "schedule_and_claim", unavailable)
    server_id = boot(admin_api, cli_body(flavor, image))["server"]["id"]
    shown = show(admin_api, server_id)
    assert shown["status"] == "ERROR" and "placement is down" in shown["fault"]["message"]
    assert not admin_api.get(f"/servers/{server_id}", version=V).has_header("Link")  # no decision was made
