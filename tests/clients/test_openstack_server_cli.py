"""End to end: the stock ``openstack`` CLI boots a server on a live Corral
(``server create --wait``), lists and shows it, and deletes it (``--wait``),
with Corral's own placement in process holding the server's allocation.
Skipped without a CLI, like test_openstack_cli.py (same fixtures)."""

from aggregates.flavors import services as flavors
from aggregates.host_aggregates import services as aggregates
from aggregates.images.models import Image
from aggregates.servers.models import Server
from tests.plugins.cloud import Cloud
from tests.plugins.openstack_cli import run_json


def test_server_create_list_show_delete(openstack, own_placement, make_host, system):
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
        openstack,
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
    assert list(Cloud.allocations(server.uuid)) == [str(node.uuid)]

    (listed,) = run_json(openstack, "server", "list", "--long")
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

    shown = run_json(openstack, "server", "show", "vm1")
    assert shown["id"] == str(server.uuid) and shown["status"] == "ACTIVE"
    assert shown["OS-EXT-SRV-ATTR:hypervisor_hostname"] == "cli-h2"

    returncode, stdout, stderr = openstack("server", "delete", "--wait", "vm1")
    assert returncode == 0, stderr
    assert Cloud.allocations(server.uuid) == {}
    assert run_json(openstack, "server", "list") == []
    server.refresh_from_db()
    assert server.vm_state == "deleted"


def test_server_create_errors(openstack, own_placement, make_host, system):
    make_host("cli-h1", vcpus=1)
    flavors.create_flavor(system, name="huge", ram=512, vcpus=64, disk=1)
    Image.objects.create(name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, size=1024)
    returncode, _, stderr = openstack(
        "server", "create", "--flavor", "huge", "--image", "cirros", "--nic", "none", "--wait", "big"
    )
    assert returncode != 0 and "Error creating server: big" in stderr
    assert Server.objects.get().vm_state == "error"
    returncode, _, stderr = openstack(
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
