"""Eight boots at once into one anti-affinity group on eight hosts: eight
different hosts, whatever order the decisions were made in (each member's
host is admitted under the group's row lock before its claim). Runs on the
database the suite runs on (PostgreSQL in CI, SQLite by default)."""

import pytest

from aggregates.scheduling import reuse
from aggregates.servers.models import Server
from tests.helpers import run_together
from tests.plugins.cloud import cli_body
from tests.plugins.tiers import many_connections

pytestmark = many_connections

HOSTS = 8


@pytest.mark.heavy
def test_eight_parallel_boots_into_one_anti_affinity_group_land_on_eight_hosts(cloud, admin_api, settings):
    settings.FOLLOW_UP_WAIT_SECONDS = None  # each build in its request's thread: all decide at once
    settings.SCHEDULER_DECISION_REUSE_SECONDS = 60  # not for group boots: each decides afresh
    reuse.forget_all()
    settings.ENABLED_FILTERS = ["ComputeFilter", "ServerGroupAntiAffinityFilter"]
    # The same free room everywhere: every decision, made before any claim, ranks the hosts alike.
    names = [f"g{i}" for i in range(HOSTS)]
    cloud.hosts(*names, vcpus=16, memory_mb=16384, local_gb=100)
    flavor, image = cloud.flavor(), cloud.image()
    response = admin_api.post(
        "/os-server-groups", {"server_group": {"name": "spread", "policy": "anti-affinity"}}, version="2.64"
    )
    group = response.json()["server_group"]["id"]

    def boot(i):
        body = cli_body(flavor, image, f"vm{i}")
        body["os:scheduler_hints"] = {"group": group}
        return admin_api.post("/servers", body, version="2.100")

    responses = run_together(*[(lambda i=i: boot(i)) for i in range(HOSTS)])
    assert [r.status_code for r in responses] == [202] * HOSTS, responses[0].content

    servers = list(Server.objects.all())
    assert [s.vm_state for s in servers] == ["active"] * HOSTS, [s.fault for s in servers]
    assert sorted(s.host for s in servers) == names
    members = admin_api.get(f"/os-server-groups/{group}").json()["server_group"]["members"]
    assert sorted(members) == sorted(str(s.uuid) for s in servers)
