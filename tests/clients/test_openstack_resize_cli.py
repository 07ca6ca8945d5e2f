"""End to end: the stock ``openstack`` CLI resizes a server on a live Corral
(``server resize --flavor F --wait``, ``server resize revert``, again, then
``server resize confirm``) with Corral's own placement in process holding
the allocations, and lists the projects' usage (``usage list``). One test,
few invocations: the CLI is slow to start."""

from aggregates.flavors import services as flavors
from aggregates.images.models import Image
from aggregates.moves.models import ServerMigration
from aggregates.servers.models import Server
from tests.plugins.openstack_cli import run_json


def usages(client, node):
    return {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0, **client.provider_usages(str(node.uuid))}


def test_server_resize_revert_confirm_and_usage_list(openstack, own_placement, make_host, system):
    nodes = {name: make_host(name) for name in ("rs-h1", "rs-h2")}
    flavors.create_flavor(system, name="m1.tiny", ram=512, vcpus=1, disk=1, flavorid="42")
    flavors.create_flavor(system, name="m1.small", ram=1024, vcpus=2, disk=1, flavorid="43")
    Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    run_json(
        openstack, "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none", "--wait", "vm1"
    )
    server = Server.objects.get()
    source = server.host
    (target,) = set(nodes) - {source}

    returncode, stdout, stderr = openstack("server", "resize", "--flavor", "m1.small", "--wait", "vm1")
    assert returncode == 0, stderr
    assert "Complete" in stdout, stdout
    shown = run_json(openstack, "server", "show", "vm1")
    assert shown["status"] == "VERIFY_RESIZE" and shown["OS-EXT-SRV-ATTR:host"] == target
    assert "m1.small" in str(shown["flavor"])
    assert usages(own_placement, nodes[source])["VCPU"] == 1  # the old flavor, held by the migration
    assert usages(own_placement, nodes[target])["VCPU"] == 2

    returncode, _, stderr = openstack("server", "resize", "revert", "vm1")
    assert returncode == 0, stderr
    server.refresh_from_db()
    assert (server.vm_state, server.host, server.flavorid) == ("active", source, "42")
    assert usages(own_placement, nodes[source])["VCPU"] == 1 and usages(own_placement, nodes[target])["VCPU"] == 0

    returncode, _, stderr = openstack("server", "resize", "--flavor", "m1.small", "--wait", "vm1")
    assert returncode == 0, stderr
    returncode, _, stderr = openstack("server", "resize", "confirm", "vm1")
    assert returncode == 0, stderr
    server.refresh_from_db()
    assert (server.vm_state, server.host, server.flavorid) == ("active", target, "43")
    assert usages(own_placement, nodes[source])["VCPU"] == 0 and usages(own_placement, nodes[target])["VCPU"] == 2
    statuses = list(ServerMigration.objects.order_by("id").values_list("migration_type", "status"))
    assert statuses == [("resize", "reverted"), ("resize", "confirmed")]

    # The CLI asks for detailed=True, which Nova (and Corral) read as not "1":
    # no per-server rows, so its Servers column stays empty, as against Nova.
    (row,) = run_json(openstack, "usage", "list")
    assert row["Project"] == server.project_id, row
    assert row["Servers"] is None
    assert 0 < row["CPU Hours"] < 1 and 0 < row["RAM MB-Hours"]
