"""A real Celery worker killed in the middle of a job (SIGKILL): the job is
left running with its lease; once the lease expires the drain, run by a new
worker, resumes the hosts not done and the job completes. A Corral server
(gunicorn), the workers and the test share one database (PostgreSQL when
the suite runs on it, else a SQLite file). Skipped when Redis does not
answer on 127.0.0.1:6379."""

import json
import os
import signal
import time

import pytest
import requests

from tests.plugins.tiers import many_connections
from tests.process_stack import VENV_BIN, process_stack, redis_answers, wait_until

REDIS_URL = "redis://127.0.0.1:6379/3"
HOSTS = ("wk-1", "wk-2", "wk-3", "wk-4")

pytestmark = [
    pytest.mark.skipif(not redis_answers(), reason="Redis is not reachable on 127.0.0.1:6379"),
    pytest.mark.processes,
    many_connections,
]

SETUP = """
import io
from aggregates.host_aggregates import services as aggregates
from aggregates.hosts import services as hosts
from aggregates.identity.caller import Caller
from aggregates.images import services as images
from aggregates.mirroring import outbox
system = Caller.system("tests")
with outbox.left_to_the_drain():
    agg = aggregates.create_aggregate(system, "killed")
    for host in HOSTS:
        hosts.register_host(system, host, vcpus=4, memory_mb=4096, local_gb=10)
        aggregates.add_host(system, agg.id, host)
image = images.create_image(system, {"name": "cirros", "disk_format": "qcow2", "container_format": "bare"})
images.upload_image_data(system, str(image.id), [b"cirros" * 10000])
print(json.dumps({"aggregate": agg.id, "image": str(image.id)}))
"""


@pytest.fixture
def stack(tmp_path):
    yield from process_stack(
        tmp_path,
        "precache_killed",
        REDIS_URL,
        {"CACHE_DRIVER": "inprocess", "HOST_CACHE_SIMULATED_DELAY": "1", "IMAGE_CACHE_LEASE_SECONDS": "3"},
    )


def test_killed_worker_job_resumed_by_the_drain(stack):
    url, run, start, workdir = stack
    script = "import json\nHOSTS = " + repr(HOSTS) + "\n" + SETUP
    made = json.loads(run(str(VENV_BIN / "python"), "manage.py", "shell", "-c", script).stdout.strip().splitlines()[-1])
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.81"}
    worker = start("worker1", str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-l", "info")
    response = requests.post(
        f"{url}/compute/v2.1/os-aggregates/{made['aggregate']}/images",
        json={"cache": [{"id": made["image"]}]},
        headers=headers,
        timeout=10,
    )
    assert response.status_code == 202, response.text
    job_url = response.headers["Location"]

    def job():
        return requests.get(job_url, headers=headers, timeout=5).json()["job"]

    # the worker has cached one host (of four, one second each): kill it
    wait_until(lambda: job()["done"] >= 1, what="the first host to be cached")
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    killed = job()
    assert killed["status"] == "running"
    assert killed["done"] < killed["total"] == 4
    finished_before = {h["host"] for h in killed["hosts"] if h["status"] == "completed"}

    # a new worker runs the drain once the lease (3 s) has expired
    start("worker2", str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-l", "info")
    time.sleep(3.5)
    run(str(VENV_BIN / "celery"), "-A", "config", "call", "corral.precache.drain_jobs")
    done = wait_until(lambda: (lambda j: j if j["status"] != "running" else None)(job()), what="the resumed job")
    assert done["status"] == "completed", done
    assert (done["done"], done["percent"]) == (4, 100)
    assert all(h["status"] == "completed" for h in done["hosts"])
    for host in HOSTS:
        assert (workdir / "host-cache" / host / made["image"]).exists()
    assert finished_before  # those were kept, not redone: one start event, four progress events
    events = run(
        str(VENV_BIN / "python"),
        "manage.py",
        "shell",
        "-c",
        "from aggregates.audit.models import Event; print(list(Event.objects.filter("
        "event_type__startswith='aggregate.cache_images').order_by('id').values_list('event_type', flat=True)))",
    ).stdout
    assert events.count(".start") == 1 and events.count(".progress") == 4 and events.count(".end") == 1, events
    assert "corral.precache.drain_jobs" in (workdir / "worker2.log").read_text()
