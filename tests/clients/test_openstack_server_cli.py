"""End to end: the stock ``openstack`` CLI boots a server on a live Corral
(``server create --wait``), lists and shows it, and deletes it (``--wait``),
with Corral's own placement in process holding the server's allocation.
Skipped without a CLI, like test_openstack_cli.py (same fixtures)."""

import pytest

from aggregates import placement_client
from aggregates.flavors import services as flavors
from aggregates.host_aggregates import services as aggregates
from aggregates.identity import service_token
from aggregates.images.models import Image
from aggregates.servers.models import Server
from placement.standards import sync_standard_names

from .test_openstack_cli import cloud, run_json  # noqa: F401 - the `cloud` fixture


@pytest.fixture
def own_placement(cloud, settings, monkeypatch):  # noqa: F811
    settings.PLACEMENT_URL, settings.PLACEMENT_AUTH_TOKEN = "", ""
    service_token.forget_service_token()
    sync_standard_names()  # a transactional test starts from empty tables
    return placement_client.client()


def allocations(server_uuid):
    return placement_client.client().consumer_allocations(server_uuid)["allocations"]


def test_server_create_list_show_delete(cloud, own_placement, make_host, system):  # noqa: F811
    make_host("cli-h1")
    node = make_host("cli-h2")
    aggregate = aggregates.create_aggregate(system, "fast", "az1")
    aggregates.add_host(system, aggregate.id, "cli-h2")
    flavors.create_flavor(system, name="m1.tiny", ram=512, vcpus=1, disk=1, flavorid="42")
    image = Image.objects.create(
        name="cirros",
        status=Image.ACTIVE,
        visibility=Image.PUBLIC,
        disk_format="qcow2",
        container_format="bare",
        size=1024,
    )

    created = run_json(
        cloud,
        "server",
        "create",
        "--flavor",
        "m1.tiny",
        "--image",
        "cirros",
        "--availability-zone",
        "az1",
        "--nic",
        "none",
        "--wait",
        "vm1",
    )
    server = Server.objects.get()
    assert created["id"] == str(server.uuid) and created["name"] == "vm1"
    assert created["status"] == "ACTIVE"
    assert created["OS-EXT-SRV-ATTR:host"] == "cli-h2"
    assert created["OS-EXT-AZ:availability_zone"] == "az1"
    assert created["flavor"]["original_name"] == "m1.tiny"
    assert created["image"] == f"cirros ({image.id})"
    assert created["pinned_availability_zone"] == "az1"
    assert list(allocations(server.uuid)) == [str(node.uuid)]

    (listed,) = run_json(cloud, "server", "list", "--long")
    assert listed == {
        "ID": str(server.uuid),
        "Name": "vm1",
        "Status": "ACTIVE",
        "Task State": None,
        "Power State": 1,
        "Networks": {},
        "Image Name": "cirros",
        "Image ID": str(image.id),
        "Flavor": "m1.tiny",
        "Availability Zone": "az1",
        "Host": "cli-h2",
        "Properties": {},
        "Pinned Availability Zone": "az1",
        "Scheduler Hints": {},
        "Host Status": "UP",
    }

    shown = run_json(cloud, "server", "show", "vm1")
    assert shown["id"] == str(server.uuid) and shown["status"] == "ACTIVE"
    assert shown["OS-EXT-SRV-ATTR:hypervisor_hostname"] == "cli-h2"

    returncode, stdout, stderr = cloud("server", "delete", "--wait", "vm1")
    assert returncode == 0, stderr
    assert allocations(server.uuid) == {}
    assert run_json(cloud, "server", "list") == []
    server.refresh_from_db()
    assert server.vm_state == "deleted"


def test_server_create_errors(cloud, own_placement, make_host, system):  # noqa: F811
    make_host("cli-h1", vcpus=1)
    flavors.create_flavor(system, name="huge", ram=512, vcpus=64, disk=1)
    Image.objects.create(name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, size=1024)
    returncode, _, stderr = cloud(
        "server", "create", "--flavor", "huge", "--image", "cirros", "--nic", "none", "--wait", "big"
    )
    assert returncode != 0 and "Error creating server: big" in stderr
    assert Server.objects.get().vm_state == "error"
    returncode, _, stderr = cloud(
        "server",
        "create",
        "--flavor",
        "huge",
        "--image",
        "cirros",
        "--availability-zone",
        "nowhere",
        "--nic",
        "none",
        "nope",
    )
    assert returncode != 0 and "The requested availability zone is not available" in stderr
    assert Server.objects.count() == 1
