"""Fifty boots at once into a pool with forty free addresses (and room for
all fifty on the hosts): forty ACTIVE with forty distinct addresses, ten
ERROR servers refused for want of an address with the reason, never two
servers on one address. Runs on the database the suite runs on
(PostgreSQL in CI, SQLite by default)."""

from collections import Counter

import pytest

from aggregates.addressing import services as addressing
from aggregates.addressing.models import AddressAllocation
from aggregates.scheduling import reuse
from aggregates.servers.models import Server
from tests.helpers import run_together
from tests.plugins.cloud import cli_body
from tests.plugins.tiers import many_connections

pytestmark = many_connections

BOOTS = 50
FREE = 40


@pytest.mark.heavy
def test_fifty_parallel_boots_into_forty_free_addresses(cloud, admin_api, settings, system):
    settings.FOLLOW_UP_WAIT_SECONDS = None  # each build in its request's thread (one connection each)
    reuse.forget_all()
    names = [f"a{i}" for i in range(5)]
    cloud.hosts(*names, vcpus=64, memory_mb=65536, local_gb=1000)
    # A /26 gives 62 addresses, the gateway one of them: 61; 21 held already.
    pool = addressing.create_pool(system, name="crowded", cidr="10.20.0.0/26", gateway="10.20.0.1")
    flavor, image = cloud.flavor(), cloud.image()
    holder = Server.objects.create(name="holder", project_id="admin", flavorid=flavor.flavorid, vm_state="active")
    for address in list(addressing._usable(addressing.network_of(pool), pool.gateway))[-21:]:
        AddressAllocation.objects.create(pool=pool, server=holder, address=str(address), mac_addr="fa:16:3e:00:00:00")
    assert addressing.usage([pool])[0].free == FREE

    bodies = [cli_body(flavor, image, f"vm{i}", networks="auto") for i in range(BOOTS)]
    responses = run_together(*[(lambda b=b: admin_api.post("/servers", b, version="2.100")) for b in bodies])
    assert [r.status_code for r in responses] == [202] * BOOTS, responses[0].content

    booted = Server.objects.exclude(pk=holder.pk)
    assert Counter(booted.values_list("vm_state", flat=True)) == {"active": FREE, "error": BOOTS - FREE}
    held = list(AddressAllocation.objects.values_list("address", flat=True))
    assert len(held) == len(set(held)) == FREE + 21
    for server in booted.filter(vm_state="active"):
        assert server.address_rows.count() == 1
    for server in booted.filter(vm_state="error"):
        assert server.fault["message"].startswith("No valid host was found.")
        assert "AddressPoolFilter" in server.fault["message"]
        hosts = server.decision.explanation["hosts"]
        assert {row["filter"] for row in hosts} == {"AddressPoolFilter"}
        assert "have no free address" in hosts[0]["reason"]
        assert not server.address_rows.exists()
        assert cloud.allocations(server.uuid) == {}
    assert addressing.usage([pool])[0].free == 0
