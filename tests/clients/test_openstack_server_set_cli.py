"""End to end: the stock ``openstack`` CLI changes a server's name,
properties (metadata) and tags (``server set`` / ``server unset``) and lists
its instance actions (``server event list``, ``server event show``), at the
microversions it picks itself."""

from aggregates.flavors import services as flavors
from aggregates.images.models import Image
from aggregates.servers.models import Server
from tests.plugins.openstack_cli import run_json


def test_server_set_unset_and_event_list(openstack, own_placement, make_host, system):
    make_host("cli-h1")
    flavors.create_flavor(system, name="m1.tiny", ram=512, vcpus=1, disk=1, flavorid="42")
    Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    created = run_json(
        openstack, "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none", "--wait", "vm1"
    )
    assert created["status"] == "ACTIVE"

    returncode, _, stderr = openstack(
        "server", "set", "--property", "role=web", "--property", "tier=1", "--name", "web1", "--tag", "prod", "vm1"
    )
    assert returncode == 0, stderr
    server = Server.objects.get()
    assert (server.name, server.metadata) == ("web1", {"role": "web", "tier": "1"})
    assert list(server.tag_rows.values_list("tag", flat=True)) == ["prod"]
    shown = run_json(openstack, "server", "show", "web1")
    assert shown["properties"] == {"role": "web", "tier": "1"} and shown["tags"] == ["prod"]

    returncode, _, stderr = openstack("server", "unset", "--property", "role", "--tag", "prod", "web1")
    assert returncode == 0, stderr
    server.refresh_from_db()
    assert server.metadata == {"tier": "1"} and not server.tag_rows.exists()

    events = run_json(openstack, "server", "event", "list", "web1")
    assert [event["Action"] for event in events] == ["create"]
    request_id = events[0]["Request ID"]
    assert request_id.startswith("req-")
    shown = run_json(openstack, "server", "event", "show", "web1", request_id)
    assert shown["action"] == "create"
    assert {event["event"] for event in shown["events"]} == {
        "conductor_schedule_and_build_instances",
        "compute__do_build_and_run_instance",
    }
