"""A boot gets its addresses in Nova's shapes, from a pool serving its host,
in the claim; delete frees them; no pool that can serve is an explained refusal."""

import pytest

from aggregates.addressing.models import AddressAllocation, AddressPool
from aggregates.servers.models import InstanceActionEvent, Server
from tests.helpers import fault
from tests.plugins.cloud import cli_body


def test_auto_gets_a_fixed_address_in_novas_shape(cloud, boot, pool, admin_api):
    cloud.host("h1")
    private = pool()
    server = boot()
    assert server["status"] == "ACTIVE"
    [entry] = server["addresses"]["private"]
    assert entry["version"] == 4 and entry["OS-EXT-IPS:type"] == "fixed"
    assert entry["addr"] == "10.0.0.2"  # the lowest, the gateway left out
    assert entry["OS-EXT-IPS-MAC:mac_addr"].startswith("fa:16:3e:")
    assert server["accessIPv4"] == "" and server["accessIPv6"] == ""
    listed = admin_api.get("/servers/detail", version="2.100").json()["servers"]
    assert listed[0]["addresses"] == server["addresses"]
    ips = admin_api.get(f"/servers/{server['id']}/ips").json()
    assert ips == {"addresses": {"private": [{"version": 4, "addr": "10.0.0.2"}]}}
    assert admin_api.get(f"/servers/{server['id']}/ips/private").json() == {
        "private": [{"version": 4, "addr": "10.0.0.2"}]
    }
    missing = admin_api.get(f"/servers/{server['id']}/ips/public")
    assert fault(missing, 404, "itemNotFound") == "Instance is not a member of specified network"
    assert AddressAllocation.objects.get().pool == private
    groups = admin_api.get(f"/servers/{server['id']}/os-security-groups")
    assert groups.status_code == 200 and groups.json() == {"security_groups": []}
    assert fault(admin_api.get("/servers/nope/os-security-groups"), 404, "itemNotFound")


def test_floating_address_when_auto_assign_is_on(cloud, boot, pool, settings):
    settings.AUTO_ASSIGN_FLOATING_IP = True
    cloud.host("h1")
    pool()
    pool("public", "203.0.113.0/24", "203.0.113.1", kind="external")
    server = boot()
    entries = server["addresses"]["private"]
    assert [(e["OS-EXT-IPS:type"], e["addr"]) for e in entries] == [("fixed", "10.0.0.2"), ("floating", "203.0.113.2")]
    assert entries[0]["OS-EXT-IPS-MAC:mac_addr"] == entries[1]["OS-EXT-IPS-MAC:mac_addr"]


def test_networks_none_gets_no_address_and_no_pools_means_none(cloud, boot, pool):
    cloud.host("h1")
    assert boot("legacy")["addresses"] == {}  # no pool defined: addressing is off
    pool()
    assert boot("bare", networks="none")["addresses"] == {}
    assert not AddressAllocation.objects.exists()


def test_a_named_pool_is_used(cloud, boot, pool, admin_api):
    cloud.host("h1")
    pool()
    other = pool("lab", "192.168.5.0/28", "")
    server = boot(networks=[{"uuid": str(other.uuid)}])
    assert list(server["addresses"]) == ["lab"]
    assert server["addresses"]["lab"][0]["addr"] == "192.168.5.1"


def test_unknown_network_is_novas_400(cloud, boot, pool, admin_api):
    cloud.host("h1")
    pool()
    body = cli_body(boot.flavor, boot.image, networks=[{"uuid": "9f1c1a1e-0000-4000-8000-000000000000"}])
    response = admin_api.post("/servers", body, version="2.100")
    assert fault(response, 400, "badRequest") == "Network 9f1c1a1e-0000-4000-8000-000000000000 could not be found."
    assert not Server.objects.exists()


def test_delete_frees_the_addresses(cloud, boot, pool, admin_api):
    cloud.host("h1")
    pool()
    server = boot()
    assert admin_api.delete(f"/servers/{server['id']}").status_code == 204
    assert not AddressAllocation.objects.exists()
    assert boot("again")["addresses"]["private"][0]["addr"] == "10.0.0.2"


def test_no_pool_serving_a_host_is_an_explained_refusal(cloud, boot, pool, admin_api):
    cloud.host("h1")
    cloud.host("h2")
    cloud.zone("az-a", "h1")
    cloud.zone("az-b", "h2")
    pool("only-a", scope="zone", zone="az-a")
    placed = boot("in-a")
    assert placed["OS-EXT-AZ:availability_zone"] == "az-a"
    server = boot("in-b", availability_zone="az-b")
    assert server["status"] == "ERROR"
    assert "AddressPoolFilter" in server["fault"]["message"]
    row = Server.objects.get(uuid=server["id"])
    [h2] = [h for h in row.decision.explanation["hosts"] if h["host"] == "h2"]
    assert h2["filter"] == "AddressPoolFilter"
    assert "needs a fixed address from an internal pool" in h2["reason"] and "only-a" in h2["reason"]
    assert AddressAllocation.objects.count() == 1


def test_a_full_pool_refuses_with_the_reason(cloud, boot, pool):
    cloud.host("h1")
    pool("tiny", "10.9.0.0/30", "10.9.0.1")  # one address: .2
    assert boot("first")["status"] == "ACTIVE"
    server = boot("second")
    assert server["status"] == "ERROR"
    row = Server.objects.get(uuid=server["id"])
    [h1] = row.decision.explanation["hosts"]
    assert h1["filter"] == "AddressPoolFilter" and "have no free address" in h1["reason"]
    assert cloud.allocations(server["id"]) == {}


def test_a_move_keeps_or_replaces_the_address(cloud, boot, pool, two_racks, admin_api):
    pool("everywhere", "10.3.0.0/24", "")
    server = boot(networks=[{"uuid": str(AddressPool.objects.get(name="net1").uuid)}])
    assert server["OS-EXT-SRV-ATTR:host"] == "h1"
    response = admin_api.post(
        f"/servers/{server['id']}/action", {"os-migrateLive": {"host": None, "block_migration": "auto"}}, version="2.30"
    )
    assert response.status_code == 202, response.content
    moved = admin_api.get(f"/servers/{server['id']}", version="2.100").json()["server"]
    assert moved["OS-EXT-SRV-ATTR:host"] == "h2"
    [(name, [entry])] = moved["addresses"].items()
    assert name in {"net2", "everywhere"} and entry["OS-EXT-IPS:type"] == "fixed"
    event = InstanceActionEvent.objects.get(event="compute_readdress")
    assert event.action.action == "live-migration" and event.result == "Success"
    assert "10.1.0.1 (fixed, pool net1) replaced by" in event.details


def test_a_reverted_resize_takes_the_address_back_where_the_server_returns(cloud, boot, two_racks, admin_api):
    server = boot()
    source = server["OS-EXT-SRV-ATTR:host"]
    bigger = cloud.flavor("m1.bigger", vcpus=2, ram=1024, disk=1)
    response = admin_api.post(f"/servers/{server['id']}/action", {"resize": {"flavorRef": bigger.flavorid}})
    assert response.status_code == 202, response.content
    resized = admin_api.get(f"/servers/{server['id']}", version="2.100").json()["server"]
    assert resized["status"] == "VERIFY_RESIZE" and resized["OS-EXT-SRV-ATTR:host"] != source
    assert set(resized["addresses"]) == {"net1", "net2"} - set(server["addresses"])

    response = admin_api.post(f"/servers/{server['id']}/action", {"revertResize": None})
    assert response.status_code == 202, response.content
    reverted = admin_api.get(f"/servers/{server['id']}", version="2.100").json()["server"]
    assert reverted["OS-EXT-SRV-ATTR:host"] == source
    assert set(reverted["addresses"]) == set(server["addresses"])
    events = InstanceActionEvent.objects.filter(event="compute_readdress").order_by("id")
    assert [event.action.action for event in events] == ["resize", "revertResize"]


@pytest.mark.parametrize("form", ["zone", "host"])
def test_a_forced_host_no_pool_serves_fails_the_build_with_the_reason(cloud, boot, pool, form):
    """A forced host skips the filters (as in Nova), but not the address
    pools: as Nova's build failing to allocate the network, the server goes
    to ERROR with the reason and its claim released, never ACTIVE without an
    address."""
    cloud.host("h1")
    cloud.host("h2")
    cloud.zone("az-a", "h1")
    cloud.zone("az-b", "h2")
    pool("only-a", scope="zone", zone="az-a")
    where = {"availability_zone": "az-b:h2"} if form == "zone" else {"host": "h2"}
    server = boot("forced", **where)
    assert server["status"] == "ERROR"
    message = server["fault"]["message"]
    assert "AddressPoolFilter" in message, message
    assert "host h2 (zone az-b) needs a fixed address from an internal pool, but no pool" in message, message
    assert cloud.allocations(server["id"]) == {}
    assert not AddressAllocation.objects.exists()
    assert (
        boot("forced-a", **({"availability_zone": "az-a:h1"} if form == "zone" else {"host": "h1"}))["status"]
        == "ACTIVE"
    )


def test_a_forced_host_whose_pool_is_full_fails_the_build_with_the_reason(cloud, boot, pool):
    cloud.host("h1")
    pool("tiny", "10.9.0.0/30", "10.9.0.1")  # one address: .2
    assert boot("first", availability_zone="nova:h1")["status"] == "ACTIVE"
    server = boot("second", availability_zone="nova:h1")
    assert server["status"] == "ERROR"
    assert "the pools serving it (tiny) have no free address" in server["fault"]["message"]
    assert cloud.allocations(server["id"]) == {}
