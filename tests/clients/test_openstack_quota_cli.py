"""End to end: the stock ``openstack`` CLI sets and shows a project's compute
quotas with their usage (``quota set``, ``quota show --usage``), a boot over
quota is refused in Nova's words, and ``limits show --absolute`` shows the
limits and what is used, at the microversions the CLI picks."""

from aggregates.flavors import services as flavors
from aggregates.images.models import Image
from aggregates.servers.models import Server
from tests.plugins.openstack_cli import run_json


def test_quota_set_show_and_absolute_limits(openstack, own_placement, make_host, system, settings):
    settings.QUOTA_INSTANCES, settings.QUOTA_CORES, settings.QUOTA_RAM = 10, 20, 51200
    make_host("cli-h1")
    flavors.create_flavor(system, name="m1.tiny", ram=512, vcpus=1, disk=1, flavorid="42")
    Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    returncode, _, stderr = openstack("quota", "set", "--instances", "1", "--cores", "4", "admin")
    assert returncode == 0, stderr
    created = run_json(
        openstack, "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none", "--wait", "vm1"
    )
    assert created["status"] == "ACTIVE"
    returncode, _, stderr = openstack(
        "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none", "vm2"
    )
    assert returncode == 1
    assert "Quota exceeded for instances: Requested 1, but already used 1 of 1 instances" in stderr
    assert Server.objects.count() == 1

    shown = {row["Resource"]: row for row in run_json(openstack, "quota", "show", "--compute", "--usage", "admin")}
    assert (shown["instances"]["Limit"], shown["instances"]["In Use"]) == (1, 1)
    assert (shown["cores"]["Limit"], shown["cores"]["In Use"]) == (4, 1)
    assert (shown["ram"]["Limit"], shown["ram"]["In Use"]) == (51200, 512)

    limits = {row["Name"]: row["Value"] for row in run_json(openstack, "limits", "show", "--absolute")}
    assert (limits["max_total_instances"], limits["total_instances_used"]) == (1, 1)
    assert (limits["max_total_cores"], limits["total_cores_used"]) == (4, 1)
    assert (limits["max_total_ram_size"], limits["total_ram_used"]) == (51200, 512)
