"""End to end: the stock ``openstack`` CLI creates an anti-affinity server
group, boots two servers into it with ``--hint group=...`` onto two hosts,
shows the group with both members and deletes it."""

from aggregates.flavors import services as flavors
from aggregates.images.models import Image
from aggregates.servers.models import Server
from tests.plugins.openstack_cli import run_json


def test_server_group_create_boot_with_hint_show_delete(openstack, own_placement, make_host, system, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter"]
    make_host("grp-h1")
    make_host("grp-h2")
    flavors.create_flavor(system, name="m1.tiny", ram=512, vcpus=1, disk=1, flavorid="42")
    Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )

    group = run_json(openstack, "server", "group", "create", "--policy", "anti-affinity", "web")
    assert group["name"] == "web" and group["policy"] == "anti-affinity"
    for name in ("web1", "web2"):
        created = run_json(
            openstack,
            "server",
            "create",
            "--flavor",
            "m1.tiny",
            "--image",
            "cirros",
            "--nic",
            "none",
            "--hint",
            f"group={group['id']}",
            "--wait",
            name,
        )
        assert created["status"] == "ACTIVE", created
    servers = list(Server.objects.order_by("name"))
    assert sorted(s.host for s in servers) == ["grp-h1", "grp-h2"]

    shown = run_json(openstack, "server", "group", "show", "web")
    assert sorted(shown["members"]) == sorted(str(s.uuid) for s in servers)

    returncode, _, stderr = openstack("server", "group", "delete", "web")
    assert returncode == 0, stderr
    assert run_json(openstack, "server", "group", "list") == []
