"""An IPv6 pool end to end through the APIs: created through
/os-address-pools, a boot gets a `version: 6` address in Nova's shapes and
in /ips, delete frees it; IPv6 CIDRs and gateways are checked as IPv4's are."""

import pytest

from aggregates.addressing.models import AddressAllocation, AddressPool
from tests.helpers import fault


def create(api, **pool):
    return api.post("/os-address-pools", {"address_pool": pool})


def test_an_ipv6_pool_end_to_end(cloud, boot, admin_api):
    cloud.host("h1")
    response = create(admin_api, name="v6", cidr="2001:db8:0:1::/64", gateway="2001:db8:0:1::1")
    assert response.status_code == 201, response.content
    pool = response.json()["address_pool"]
    assert (pool["cidr"], pool["gateway"]) == ("2001:db8:0:1::/64", "2001:db8:0:1::1")
    # 2**64 addresses less the subnet-router anycast (the network address) and the gateway
    assert (pool["capacity"], pool["used"], pool["free"]) == (2**64 - 2, 0, 2**64 - 2)

    server = boot()
    assert server["status"] == "ACTIVE", server.get("fault")
    [entry] = server["addresses"]["v6"]
    assert entry["version"] == 6 and entry["addr"] == "2001:db8:0:1::2" and entry["OS-EXT-IPS:type"] == "fixed"
    assert server["accessIPv6"] == ""
    assert admin_api.get(f"/servers/{server['id']}/ips").json() == {
        "addresses": {"v6": [{"version": 6, "addr": "2001:db8:0:1::2"}]}
    }
    assert admin_api.get(f"/servers/{server['id']}/ips/v6").json() == {
        "v6": [{"version": 6, "addr": "2001:db8:0:1::2"}]
    }
    assert admin_api.get("/os-address-pools/v6").json()["address_pool"]["used"] == 1

    assert admin_api.delete(f"/servers/{server['id']}").status_code == 204
    assert not AddressAllocation.objects.exists()
    assert admin_api.get("/os-address-pools/v6").json()["address_pool"]["used"] == 0
    assert admin_api.delete("/os-address-pools/v6").status_code == 204


def test_ipv4_and_ipv6_pools_together(cloud, boot, admin_api):
    """A boot naming both pools gets one address of each version."""
    cloud.host("h1")
    v4 = create(admin_api, name="v4", cidr="10.0.0.0/24", gateway="10.0.0.1").json()["address_pool"]
    v6 = create(admin_api, name="v6", cidr="fd00:1::/120").json()["address_pool"]
    server = boot(networks=[{"uuid": v4["id"]}, {"uuid": v6["id"]}])
    versions = {name: [e["version"] for e in entries] for name, entries in server["addresses"].items()}
    assert versions == {"v4": [4], "v6": [6]}
    assert server["addresses"]["v6"][0]["addr"] == "fd00:1::1"  # no gateway given: the first after the network


@pytest.mark.parametrize(
    ("pool", "status", "message"),
    [
        ({"cidr": "2001:db8::1/64"}, 400, "Invalid CIDR '2001:db8::1/64': 2001:db8::1/64 has host bits set."),
        ({"cidr": "2001:db8::/64", "gateway": "2001:db9::1"}, 400, "Gateway 2001:db9::1 is not inside 2001:db8::/64."),
        ({"cidr": "2001:db8::/64", "gateway": "10.0.0.1"}, 400, "Gateway 10.0.0.1 is not inside 2001:db8::/64."),
        (
            {"cidr": "2001:db8::/64", "gateway": "2001:db8::"},
            400,
            "Gateway 2001:db8:: is the subnet-router anycast address of 2001:db8::/64.",
        ),
        ({"cidr": "2001:db8::/64", "gateway": "not-an-ip"}, 400, "Invalid gateway 'not-an-ip': not an IP address."),
        ({"cidr": "2001:db8:0:0:1::/80"}, 409, "CIDR 2001:db8:0:0:1::/80 overlaps address pool taken (2001:db8::/64)."),
        ({"cidr": "2001:db8::/128"}, 409, "overlaps address pool taken"),
        ({"cidr": "2001:db9::/128", "gateway": "2001:db9::"}, 400, "CIDR 2001:db9::/128 leaves no address to give."),
    ],
)
def test_bad_ipv6_pools_are_refused_and_change_nothing(admin_api, db, pool, status, message):
    assert create(admin_api, name="taken", cidr="2001:db8::/64").status_code == 201
    response = create(admin_api, name="x", **pool)
    name = {400: "badRequest", 409: "conflictingRequest"}[status]
    assert message in fault(response, status, name)
    assert AddressPool.objects.count() == 1


def test_the_last_address_of_an_ipv6_pool_may_be_its_gateway(admin_api, db):
    """IPv6 has no broadcast address: the last one is an address like any other."""
    response = create(admin_api, name="v6", cidr="2001:db8::/126", gateway="2001:db8::3")
    assert response.status_code == 201, response.content
    assert response.json()["address_pool"]["capacity"] == 2  # ::1 and ::2


def test_floating_addresses_are_ipv4_only(cloud, boot, admin_api, settings):
    """With auto-assignment on, the floating address comes from an external
    IPv4 pool even when an external IPv6 pool sorts first (floating IPs are
    IPv4 in nova-network and Neutron; the SDK wants an external IPv4)."""
    settings.AUTO_ASSIGN_FLOATING_IP = True
    cloud.host("h1")
    assert create(admin_api, name="private", cidr="10.0.0.0/24", gateway="10.0.0.1").status_code == 201
    assert create(admin_api, name="a-public-v6", cidr="2001:db8:f::/64", kind="external").status_code == 201
    public = create(admin_api, name="public", cidr="203.0.113.0/24", gateway="203.0.113.1", kind="external")
    assert public.status_code == 201
    entries = boot()["addresses"]["private"]
    assert [(e["OS-EXT-IPS:type"], e["version"], e["addr"]) for e in entries] == [
        ("fixed", 4, "10.0.0.2"),
        ("floating", 4, "203.0.113.2"),
    ]
    assert admin_api.get("/os-address-pools/a-public-v6").json()["address_pool"]["used"] == 0
