"""End to end: the stock ``openstack`` CLI moves a server on a live Corral
(``server migrate --live-migration --host H --wait``, ``server migrate
--wait`` then ``server resize confirm``), lists the migrations, and
evacuates a server off a host that is down, with Corral's own placement in
process holding the allocations. Same fixtures as test_openstack_server_cli.py."""

from aggregates.flavors import services as flavors
from aggregates.hosts.models import Service
from aggregates.images.models import Image
from aggregates.moves.models import ServerMigration
from aggregates.servers.models import Server
from tests.plugins.cloud import Cloud
from tests.plugins.openstack_cli import run_json


def usages(client, node):
    return {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0, **client.provider_usages(str(node.uuid))}


def test_server_migrate_live_cold_confirm_and_list(openstack, own_placement, make_host, system):
    nodes = {name: make_host(name) for name in ("mv-h1", "mv-h2", "mv-h3")}
    flavors.create_flavor(system, name="m1.tiny", ram=512, vcpus=1, disk=1, flavorid="42")
    Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    run_json(
        openstack, "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none", "--wait", "vm1"
    )
    server = Server.objects.get()
    first = server.host
    target = sorted(set(nodes) - {first})[0]

    returncode, stdout, stderr = openstack("server", "migrate", "--live-migration", "--host", target, "--wait", "vm1")
    assert returncode == 0, stderr
    assert "Complete" in stdout, stdout
    shown = run_json(openstack, "server", "show", "vm1")
    assert shown["status"] == "ACTIVE" and shown["OS-EXT-SRV-ATTR:host"] == target
    assert list(Cloud.allocations(server.uuid)) == [str(nodes[target].uuid)]
    assert usages(own_placement, nodes[first])["VCPU"] == 0

    returncode, stdout, stderr = openstack("server", "migrate", "--wait", "vm1")
    assert returncode == 0, stderr
    shown = run_json(openstack, "server", "show", "vm1")
    assert shown["status"] == "VERIFY_RESIZE"
    cold = ServerMigration.objects.get(migration_type="migration")
    assert cold.status == "finished" and shown["OS-EXT-SRV-ATTR:host"] == cold.dest_compute != target
    assert usages(own_placement, nodes[target])["VCPU"] == 1  # held by the migration until confirmed

    returncode, _, stderr = openstack("server", "resize", "confirm", "vm1")
    assert returncode == 0, stderr
    assert run_json(openstack, "server", "show", "vm1")["status"] == "ACTIVE"
    cold.refresh_from_db()
    assert cold.status == "confirmed"
    assert usages(own_placement, nodes[target])["VCPU"] == 0
    assert usages(own_placement, nodes[cold.dest_compute])["VCPU"] == 1

    listed = run_json(openstack, "server", "migration", "list")
    rows = [(row["Type"], row["Status"]) for row in listed]
    assert rows == [("migration", "confirmed"), ("live-migration", "completed")]
    assert listed[0]["UUID"] == str(cold.uuid) and listed[0]["Server UUID"] == str(server.uuid)
    assert listed[1]["Source Compute"] == first and listed[1]["Dest Compute"] == target
    only_live = run_json(openstack, "server", "migration", "list", "--type", "live-migration", "--server", "vm1")
    assert [row["Status"] for row in only_live] == ["completed"]


def test_server_evacuate_and_refusals(openstack, own_placement, make_host, system):
    make_host("ev-h1")
    make_host("ev-h2")
    flavors.create_flavor(system, name="m1.tiny", ram=512, vcpus=1, disk=1, flavorid="42")
    Image.objects.create(name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2")
    run_json(
        openstack, "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none", "--wait", "vm1"
    )
    server = Server.objects.get()
    source = server.host

    returncode, _, stderr = openstack("server", "migrate", "--live-migration", "--host", source, "vm1")
    assert returncode != 0 and "to current host" in stderr and "400" in stderr
    returncode, _, stderr = openstack("server", "evacuate", "vm1")
    assert returncode != 0 and "is still in use" in stderr
    assert not ServerMigration.objects.exists()

    Service.objects.filter(host=source).update(forced_down=True)
    shown = run_json(openstack, "server", "evacuate", "vm1")
    assert shown["OS-EXT-SRV-ATTR:host"] != source
    assert ServerMigration.objects.get().status == "done"
