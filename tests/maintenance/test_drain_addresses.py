"""A drain's plan and capacity headroom apply the address rule the boot's
AddressPoolFilter applies: a target must be served by a pool with a free
address, counting the addresses taken by the moves planned before (a pool
with one free address takes one re-addressed server, not two)."""

import pytest

from aggregates.addressing import services as addressing
from aggregates.addressing.models import AddressAllocation
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

from .conftest import V, maintenance, started


@pytest.fixture
def racks(cloud, admin_api, system):
    """A, B, C in aggregate "all"; A served by net-a alone, B by net-b (one
    free address), C by no pool; two servers on A holding net-a addresses."""
    cloud.hosts("A", "B", "C", vcpus=8, memory_mb=8192, local_gb=100)
    everything = cloud.aggregate("all", ["A", "B", "C"])
    cloud.aggregate("rack-a", ["A"])
    cloud.aggregate("rack-b", ["B"])
    addressing.create_pool(system, name="net-a", cidr="10.1.0.0/24", scope="aggregate", aggregate="rack-a")
    addressing.create_pool(
        system, name="net-b", cidr="10.2.0.0/30", gateway="10.2.0.1", scope="aggregate", aggregate="rack-b"
    )
    flavor, image = cloud.flavor(), cloud.image()
    for name in ("first", "second"):
        body = cli_body(flavor, image, name=name, zone="nova:A", networks="auto")
        assert admin_api.post("/servers", body, version=V).status_code == 202
    assert list(Server.objects.order_by("created_at", "id").values_list("host", "vm_state")) == [("A", "active")] * 2
    return everything


def test_the_dry_run_counts_free_addresses_and_says_why_a_server_stays(racks, admin_api):
    response = maintenance(admin_api, "A", "start", dry_run=True)
    assert response.status_code == 200, response.content
    first, second = response.json()["plan"]["servers"]
    assert (first["name"], first["target"]) == ("first", "B")  # net-b's one free address
    assert (second["name"], second["target"], second["status"]) == ("second", None, "would_stay")
    # B has room for both, but its pool's one address went to "first"; C has room but no pool.
    assert second["explanation"].startswith(
        "No valid host was found: no address pool with a free address serves host B, once the servers planned"
    )
    assert "the pools serving it (net-b) have no free address" in second["explanation"]
    assert second["rejected_by"] == {"AddressPoolFilter": 1}
    assert AddressAllocation.objects.filter(pool__name="net-b").count() == 0  # a dry run takes nothing


def test_the_plan_says_when_no_pool_serves_any_host(racks, cloud, admin_api):
    body = cli_body(cloud.flavor(name="other"), cloud.image(), name="on-b", zone="nova:B", networks="auto")
    assert admin_api.post("/servers", body, version=V).status_code == 202
    assert AddressAllocation.objects.get(server__name="on-b").address == "10.2.0.2"  # net-b full before the plan
    response = maintenance(admin_api, "A", "start", dry_run=True)
    plan = response.json()["plan"]
    assert [s["target"] for s in plan["servers"]] == [None, None]
    explanation = plan["servers"][0]["explanation"]
    assert "AddressPoolFilter: 2" in explanation, explanation
    assert "host C (zone nova) needs a fixed address from a pool like net-a, but no pool" in explanation


def test_headroom_strands_the_server_no_pool_can_address(racks, admin_api):
    response = admin_api.get(f"/os-capacity-headroom?aggregate={racks.id}&hosts=1", version=V)
    assert response.status_code == 200, response.content
    body = response.json()["headroom"]
    assert body["lost_hosts"] == ["A"] and body["fits"] is False
    (stranded,) = body["stranded"]
    assert (
        stranded["name"] == "second"
        and "no address pool with a free address serves host B" in (stranded["explanation"])
    )
    figures = body["resources"]["IPV4_ADDRESS"]
    assert (figures["capacity"], figures["used"], figures["moved"]) == (1, 2, 2)  # over: free_after -1


def test_the_drain_moves_what_its_plan_moves(racks, admin_api, settings):
    # Its moves run at once (MAINTENANCE_CONCURRENCY 4): each takes B's one
    # address with its claim, so whichever claims second finds net-b full and
    # stays on A with its own address (which one is the race's to decide).
    job = started(admin_api, "A")
    hosts = dict(Server.objects.values_list("name", "host"))
    assert sorted(hosts.values()) == ["A", "B"], hosts
    assert job["status"] in ("completed_with_errors", "failed", "partial"), job
    moved = [name for name, host in hosts.items() if host == "B"][0]
    stayed = [name for name, host in hosts.items() if host == "A"][0]
    [row] = AddressAllocation.objects.filter(server__name=moved)
    assert (row.pool.name, row.address) == ("net-b", "10.2.0.2")
    assert list(AddressAllocation.objects.filter(server__name=stayed).values_list("pool__name", flat=True)) == ["net-a"]
