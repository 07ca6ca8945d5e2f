"""End to end: the stock ``openstack`` CLI stops, starts, reboots, locks and
unlocks a server on a live Corral (``server stop``, ``server start``,
``server reboot --hard``, ``server lock --reason``, ``server unlock``), its
allocation kept in Corral's own placement throughout. One test, few
invocations: the CLI is slow to start."""

from aggregates.flavors import services as flavors
from aggregates.images.models import Image
from aggregates.servers.models import Server
from tests.plugins.openstack_cli import run_json


def test_server_stop_start_reboot_lock_unlock(openstack, own_placement, make_host, system):
    node = make_host("pw-h1")
    flavors.create_flavor(system, name="m1.tiny", ram=512, vcpus=1, disk=1, flavorid="42")
    Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    run_json(
        openstack, "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none", "--wait", "vm1"
    )
    server = Server.objects.get()

    returncode, _, stderr = openstack("server", "stop", "vm1")
    assert returncode == 0, stderr
    shown = run_json(openstack, "server", "show", "vm1")
    assert (shown["status"], shown["OS-EXT-STS:power_state"]) == ("SHUTOFF", 4), shown
    assert own_placement.provider_usages(str(node.uuid))["VCPU"] == 1  # a stopped server keeps its allocation

    returncode, _, stderr = openstack("server", "start", "vm1")
    assert returncode == 0, stderr
    returncode, _, stderr = openstack("server", "reboot", "--hard", "--wait", "vm1")
    assert returncode == 0, stderr
    server.refresh_from_db()
    assert (server.vm_state, server.power_state) == ("active", Server.POWER_RUNNING)

    returncode, _, stderr = openstack("--os-compute-api-version", "2.73", "server", "lock", "--reason", "audit", "vm1")
    assert returncode == 0, stderr
    shown = run_json(openstack, "--os-compute-api-version", "2.73", "server", "show", "vm1")
    assert (shown["locked"], shown["locked_reason"]) == (True, "audit"), shown
    returncode, _, stderr = openstack("server", "unlock", "vm1")
    assert returncode == 0, stderr
    server.refresh_from_db()
    assert (server.locked, server.locked_reason) == (False, None)
    actions = [row["Action"] for row in run_json(openstack, "server", "event", "list", "vm1")]
    assert actions[:5] == ["unlock", "lock", "reboot", "start", "stop"], actions
