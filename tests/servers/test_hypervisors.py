"""os-hypervisors agrees with the servers: up to 2.87 the usage fields come
from placement (the node provider's usages) and running_vms counts the VMs
the host's agent reports running outside Corral plus the node's servers;
the servers route and with_servers list them. The console's host page
counts a node's instances by the same rule."""

from django.contrib.auth import get_user_model
from django.test import Client

from aggregates.hosts.models import ComputeNode
from tests.plugins.cloud import cli_body

V = "2.100"


def boot(api, flavor, image, name, zone=None):
    response = api.post("/servers", cli_body(flavor, image, name=name, zone=zone), version=V)
    assert response.status_code == 202, response.content
    return response.json()["server"]["id"]


def test_detail_usage_comes_from_placement_and_the_servers(cloud, admin_api):
    node = cloud.host("h1", vcpus=8, memory_mb=4096, local_gb=100)
    # Stale usage figures; one VM the agent reports running outside Corral.
    ComputeNode.objects.update(vcpus_used=7, memory_mb_used=7, local_gb_used=7, running_vms=1)
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    first = boot(admin_api, flavor, image, "a")
    boot(admin_api, flavor, image, "b")
    for path in ("/os-hypervisors/detail", f"/os-hypervisors/{node.id}"):
        body = admin_api.get(path, version="2.27").json()
        (item,) = body["hypervisors"] if "hypervisors" in body else [body["hypervisor"]]
        assert {key: item[key] for key in ("vcpus_used", "memory_mb_used", "local_gb_used", "running_vms")} == {
            "vcpus_used": 4,
            "memory_mb_used": 2048,
            "local_gb_used": 20,
            "running_vms": 3,
        }, path
        assert (item["free_ram_mb"], item["free_disk_gb"]) == (4096 - 2048, 100 - 20)
    stats = admin_api.get("/os-hypervisors/statistics", version="2.87").json()["hypervisor_statistics"]
    assert (stats["vcpus_used"], stats["memory_mb_used"], stats["running_vms"], stats["free_disk_gb"]) == (
        4,
        2048,
        3,
        80,
    )
    assert admin_api.delete(f"/servers/{first}").status_code == 204
    (item,) = admin_api.get("/os-hypervisors/detail", version="2.87").json()["hypervisors"]
    assert (item["vcpus_used"], item["running_vms"]) == (2, 2)  # one server and the reported VM
    (item,) = admin_api.get("/os-hypervisors/detail", version="2.88").json()["hypervisors"]
    assert "running_vms" not in item


def test_the_console_host_page_counts_instances_as_os_hypervisors_does(cloud, admin_api):
    node = cloud.host("h1")
    cloud.host("h2")
    # Two VMs the agent reports running outside Corral, two servers, one of them deleted.
    ComputeNode.objects.filter(pk=node.pk).update(running_vms=2)
    flavor, image = cloud.flavor(), cloud.image()
    boot(admin_api, flavor, image, "kept", zone="nova:h1")
    gone = boot(admin_api, flavor, image, "gone", zone="nova:h1")
    assert admin_api.delete(f"/servers/{gone}").status_code == 204
    shown = admin_api.get(f"/os-hypervisors/{node.uuid}", version="2.87").json()["hypervisor"]
    assert shown["running_vms"] == 3
    user = get_user_model().objects.create_user("hypervisor-admin", password="pw", is_staff=True, is_superuser=True)
    console = Client()
    console.force_login(user)
    page = console.get("/hosts/h1/")
    assert page.status_code == 200
    (row,) = page.context["nodes"]
    assert (row.instances, page.context["instance_count"]) == (3, 3)
    assert '/servers/?host=h1">3 instances</a>' in page.content.decode()
    other = console.get("/hosts/h2/")
    assert other.context["instance_count"] == 0 and other.context["nodes"][0].instances == 0


def test_stored_values_when_placement_is_unreachable(cloud, admin_api, settings):
    cloud.host("h1")
    ComputeNode.objects.update(vcpus_used=3, memory_mb_used=300, local_gb_used=30, running_vms=3)
    settings.PLACEMENT_URL = "http://127.0.0.1:9/placement"
    (item,) = admin_api.get("/os-hypervisors/detail", version="2.27").json()["hypervisors"]
    assert (item["vcpus_used"], item["memory_mb_used"], item["local_gb_used"], item["running_vms"]) == (3, 300, 30, 3)


def test_servers_route_and_with_servers_list_the_servers(cloud, admin_api):
    node = cloud.host("h1")
    cloud.host("h2")
    flavor, image = cloud.flavor(), cloud.image()
    server_id = boot(admin_api, flavor, image, "vm1", zone="nova:h1")
    deleted = boot(admin_api, flavor, image, "gone", zone="nova:h1")
    assert admin_api.delete(f"/servers/{deleted}").status_code == 204
    body = admin_api.get("/os-hypervisors/h/servers", version="2.52").json()
    by_name = {item["hypervisor_hostname"]: item for item in body["hypervisors"]}
    (listed,) = by_name["h1"]["servers"]
    assert listed["uuid"] == server_id and listed["name"].startswith("instance-")
    assert "servers" not in by_name["h2"]
    (item,) = [
        item
        for item in admin_api.get("/os-hypervisors?with_servers=true", version="2.53").json()["hypervisors"]
        if item["id"] == str(node.uuid)
    ]
    assert [entry["uuid"] for entry in item["servers"]] == [server_id]
    shown = admin_api.get(f"/os-hypervisors/{node.uuid}?with_servers=1", version="2.75").json()["hypervisor"]
    assert [entry["uuid"] for entry in shown["servers"]] == [server_id]
    other = [item for item in admin_api.get("/os-hypervisors?with_servers=1", version="2.75").json()["hypervisors"]]
    assert {item["hypervisor_hostname"]: len(item["servers"]) for item in other} == {"h1": 1, "h2": 0}


def test_a_listing_reads_every_node_usage_from_its_own_placement_in_one_request(cloud, admin_api, monkeypatch):
    from aggregates.placement_client import PlacementClient

    nodes = cloud.hosts("h1", "h2", "h3", vcpus=8, memory_mb=4096, local_gb=100)
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    boot(admin_api, flavor, image, "a")
    boot(admin_api, flavor, image, "b")
    sent = []
    real = PlacementClient.request

    def counted(self, method, path, *args, **kwargs):
        sent.append((method, path))
        return real(self, method, path, *args, **kwargs)

    monkeypatch.setattr(PlacementClient, "request", counted)
    items = admin_api.get("/os-hypervisors/detail", version="2.87").json()["hypervisors"]
    assert [path for _method, path in sent] == ["/_corral/provider_usages"]
    used = {item["hypervisor_hostname"]: (item["vcpus_used"], item["memory_mb_used"]) for item in items}
    assert sorted(used.values()) == [(0, 0), (2, 1024), (2, 1024)]
    for node in nodes:
        assert used[node.hypervisor_hostname] == (
            cloud.usages(node.uuid).get("VCPU", 0),
            cloud.usages(node.uuid).get("MEMORY_MB", 0),
        )


def test_the_many_providers_read_is_not_on_placements_public_routes(admin_api):
    from tests.plugins.api import ApiClient

    placement = ApiClient(admin_api.token, prefix="/placement")
    response = placement.get("/_corral/provider_usages?uuids=")
    assert response.status_code == 404
    assert response.json()["errors"][0]["status"] == 404
