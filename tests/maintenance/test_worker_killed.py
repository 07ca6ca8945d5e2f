"""A real Celery worker killed (SIGKILL) in the middle of a drain: the job
is left running with its lease; once the lease expires the drain, run by a
new worker, settles the server being moved and moves the rest; every server
ends on a peer with its allocation there. A Corral server (gunicorn), the
workers and the test share one database (PostgreSQL when the suite runs on
it, else a SQLite file). Skipped when Redis does not answer on
127.0.0.1:6379."""

import json
import os
import signal
import time

import pytest
import requests

from tests.plugins.tiers import many_connections
from tests.process_stack import VENV_BIN, process_stack, redis_answers, wait_until

REDIS_URL = "redis://127.0.0.1:6379/4"
SERVERS = 6

pytestmark = [
    pytest.mark.skipif(not redis_answers(), reason="Redis is not reachable on 127.0.0.1:6379"),
    pytest.mark.processes,
    many_connections,
]

SETUP = """
import json
from config import celery_app
celery_app.conf.task_always_eager = True  # the setup's own outbox rows, in this process
from aggregates.flavors import services as flavors
from aggregates.host_aggregates import services as aggregates
from aggregates.hosts import services as hosts
from aggregates.identity.caller import Caller
from aggregates.images.models import Image
from placement.standards import sync_standard_names
sync_standard_names()
system = Caller.system("tests")
nodes = {}
for host in ("A", "B", "C"):
    node, _ = hosts.register_host(system, host, vcpus=16, memory_mb=65536, local_gb=1000)
    nodes[host] = str(node.uuid)
agg = aggregates.create_aggregate(system, "rack")
for host in ("A", "B", "C"):
    aggregates.add_host(system, agg.id, host)
flavor = flavors.create_flavor(system, name="small", ram=1024, vcpus=2, disk=10)
image = Image.objects.create(name="cirros", status="active", visibility="public", disk_format="qcow2",
                             container_format="bare", size=1024)
print(json.dumps({"nodes": nodes, "flavor": flavor.flavorid, "image": str(image.id)}))
"""


@pytest.fixture
def stack(tmp_path):
    yield from process_stack(
        tmp_path,
        "maintenance_killed",
        REDIS_URL,
        {"MAINTENANCE_SIMULATED_DELAY": "1", "MAINTENANCE_LEASE_SECONDS": "3"},
    )


def test_killed_worker_drain_resumed_by_the_drain_task(stack):
    url, run, start, workdir = stack
    made = json.loads(run(str(VENV_BIN / "python"), "manage.py", "shell", "-c", SETUP).stdout.strip().splitlines()[-1])
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.100"}
    worker = start("worker1", str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-l", "info")
    body = {
        "server": {
            "name": "vm",
            "imageRef": made["image"],
            "flavorRef": made["flavor"],
            "availability_zone": "nova:A",
            "min_count": SERVERS,
            "max_count": SERVERS,
            "networks": "none",
        }
    }
    assert requests.post(f"{url}/compute/v2.1/servers", json=body, headers=headers, timeout=30).status_code == 202

    def servers():
        return requests.get(f"{url}/compute/v2.1/servers/detail", headers=headers, timeout=10).json()["servers"]

    def hosts():
        return sorted(s["OS-EXT-SRV-ATTR:host"] or "" for s in servers() if s["status"] == "ACTIVE")

    wait_until(lambda: hosts() == ["A"] * SERVERS, what="the servers to be active on A")
    response = requests.post(
        f"{url}/compute/v2.1/os-hosts/A/maintenance", json={"maintenance": {"action": "start"}}, headers=headers
    )
    assert response.status_code == 202, response.text
    job_url = response.headers["Location"]

    def job():
        return requests.get(job_url, headers=headers, timeout=5).json()["job"]

    # One second per server: kill the worker once one has moved.
    wait_until(lambda: job()["done"] >= 1, what="the first server to move")
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    killed = job()
    assert killed["status"] == "running" and killed["done"] < killed["total"] == SERVERS, killed
    # Never half-recorded: each server on A or on a peer, with its allocation where its row says.
    for server in servers():
        assert server["OS-EXT-SRV-ATTR:host"] in ("A", "B", "C")

    start("worker2", str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-l", "info")
    time.sleep(3.5)  # the lease (3 s) expires
    run(str(VENV_BIN / "celery"), "-A", "config", "call", "corral.maintenance.drain")
    done = wait_until(lambda: (lambda j: j if j["status"] != "running" else None)(job()), what="the resumed job")
    assert done["status"] == "completed", done
    assert (done["done"], done["percent"]) == (SERVERS, 100)
    assert {s["status"] for s in done["servers"]} == {"moved"}
    assert set(hosts()) <= {"B", "C"} and len(hosts()) == SERVERS
    placement = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.28"}
    usages = requests.get(
        f"{url}/placement/resource_providers/{made['nodes']['A']}/usages", headers=placement, timeout=10
    ).json()["usages"]
    assert usages.get("VCPU", 0) == 0 and usages.get("MEMORY_MB", 0) == 0, usages
    total = 0
    for host in ("B", "C"):
        used = requests.get(
            f"{url}/placement/resource_providers/{made['nodes'][host]}/usages", headers=placement, timeout=10
        ).json()["usages"]
        total += used.get("VCPU", 0)
    assert total == 2 * SERVERS
    assert "corral.maintenance.drain" in (workdir / "worker2.log").read_text()
