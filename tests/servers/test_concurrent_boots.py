"""Fifty boots at once into a ten-host zone with room for exactly forty
servers: forty ACTIVE, ten clean "No valid host" ERROR servers with their
explanations, and no provider allocated beyond its capacity. Runs on the
database the suite runs on (PostgreSQL in CI, SQLite by default)."""

from collections import Counter

import pytest

from aggregates.scheduling import reuse
from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server
from tests.helpers import run_together
from tests.plugins.cloud import cli_body
from tests.plugins.tiers import many_connections

pytestmark = many_connections

BOOTS = 50
HOSTS = 10
PER_HOST = 4


@pytest.mark.parametrize("reuse_seconds", [0, 60], ids=["fresh-decisions", "decision-reuse"])
@pytest.mark.heavy
def test_fifty_parallel_boots_into_room_for_forty(cloud, admin_api, settings, reuse_seconds):
    settings.SCHEDULER_DECISION_REUSE_SECONDS = reuse_seconds
    # Each build in the request's thread: a thread of its own per boot would
    # hold a second connection per request, 100 in all, PostgreSQL's limit.
    settings.FOLLOW_UP_WAIT_SECONDS = None
    reuse.forget_all()
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]
    # 512 MB reserved + 4 x 1024 MB: exactly four servers of the flavor per host.
    names = [f"c{i}" for i in range(HOSTS)]
    nodes = cloud.hosts(*names, vcpus=16, memory_mb=512 + PER_HOST * 1024, local_gb=100)
    cloud.aggregate("crowd", names, zone="az-crowd", crowd="yes")
    cloud.host("elsewhere", vcpus=64, memory_mb=65536)  # room, but not in the zone
    flavor = cloud.flavor("crowd.small", ram=1024, extra_specs={"aggregate_instance_extra_specs:crowd": "yes"})
    image = cloud.image()

    responses = run_together(
        *[
            (lambda i=i: admin_api.post("/servers", cli_body(flavor, image, f"vm{i}", "az-crowd"), version="2.100"))
            for i in range(BOOTS)
        ]
    )
    assert [r.status_code for r in responses] == [202] * BOOTS, responses[0].content

    states = Counter(Server.objects.values_list("vm_state", flat=True))
    assert states == {"active": HOSTS * PER_HOST, "error": BOOTS - HOSTS * PER_HOST}
    for server in Server.objects.filter(vm_state="error"):
        assert server.fault["message"].startswith("No valid host was found.")
        assert server.decision is not None and server.decision.outcome == SchedulingDecision.NO_VALID_HOST
        assert {row["host"] for row in server.decision.explanation["hosts"]} == {*names, "elsewhere"}
        assert cloud.allocations(server.uuid) == {}
    placed = Counter(Server.objects.filter(vm_state="active").values_list("host", flat=True))
    assert set(placed) <= set(names) and max(placed.values()) <= PER_HOST
    for node in nodes:
        usage = cloud.usages(node.uuid)
        assert usage.get("MEMORY_MB", 0) == placed[node.host] * 1024 <= PER_HOST * 1024
        assert usage.get("VCPU", 0) == placed[node.host]
