"""Capacity headroom counts free addresses like any other resource: the
pools that go on serving the hosts that remain, and the addresses the moved
servers would need from them."""

from aggregates.addressing import services as addressing
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body


def test_headroom_counts_free_addresses(cloud, admin_api, system):
    cloud.hosts("H1", "H2", vcpus=8, memory_mb=8192, local_gb=100)
    aggregate = cloud.aggregate("agg", ["H1", "H2"])
    cloud.aggregate("only-h1", ["H1"])
    rack = addressing.create_pool(system, name="p-h1", cidr="10.1.0.0/29", scope="aggregate", aggregate="only-h1")
    addressing.create_pool(system, name="shared", cidr="10.2.0.0/28")
    flavor, image = cloud.flavor(ram=1024), cloud.image()
    for name, host, networks in (("a", "H1", [{"uuid": str(rack.uuid)}]), ("b", "H1", "auto"), ("c", "H2", "auto")):
        body = cli_body(flavor, image, name=name, zone=f"nova:{host}", networks=networks)
        assert admin_api.post("/servers", body, version="2.100").status_code == 202
    assert set(Server.objects.values_list("vm_state", flat=True)) == {"active"}

    response = admin_api.get(f"/os-capacity-headroom?aggregate={aggregate.id}&hosts=1", version="2.100")
    assert response.status_code == 200, response.content
    body = response.json()["headroom"]
    assert body["lost_hosts"] == ["H1"]
    figures = body["resources"]["IPV4_ADDRESS"]
    # H2 is served by "shared" alone (14 addresses, 1 used); the two servers
    # moved from H1 hold addresses of p-h1 (6), which does not serve H2.
    assert (figures["capacity"], figures["used"], figures["free_after"]) == (14, 3, 11)
    assert (figures["lost_capacity"], figures["moved"]) == (6, 2)
