"""Scale-out: Corral as a small cluster on this machine (tests/cluster.py):
two web nodes behind Debian's HAProxy (health-checking /healthcheck), two
Celery workers, a beat and a second beat, on PostgreSQL and Redis. Under 8
clients of mixed load through the balancer, each web node is restarted in
turn as docs/operations.md says (drained by its disable file, stopped with
SIGTERM, started again): no request fails. A worker is killed (SIGKILL)
during a maintenance drain, and the worker holding a pre-cache job during
that job: each job finishes on the other worker, every server moved once
and every host cached once. The second beat sends nothing: no periodic
task is sent twice. Then the backup of docs/operations.md, taken while the
cluster runs, is restored and served whole.

Only on PostgreSQL and Redis (CI's first stage): the nodes, workers and
beats share a PostgreSQL database of its own and Redis database 9 on the
broker's server."""

import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

import psycopg
import pytest
import requests
from django.db import connection

from tests.cluster import ADMIN, Cluster, Load, free_port
from tests.plugins.tiers import connection_hungry
from tests.process_stack import PROJECT, VENV_BIN, Processes, _Database, flush_redis, stack_env, wait_until

# One xdist worker runs the module's tests: they share the running cluster (and Redis database 9).
pytestmark = [pytest.mark.processes, pytest.mark.xdist_group("cluster")]

REDIS_DB = 9
LEASE = 3  # the jobs' leases: a killed worker's job is resumed this long after its last renewal
DRAIN_EVERY = 2  # seconds between two sends of each job drain by the beat
SERVERS = 4
CACHE_HOSTS = ("c-1", "c-2", "c-3", "c-4")
COMPUTE = {**ADMIN, "OpenStack-API-Version": "compute 2.42"}

SETUP = """
import json
from config import celery_app
celery_app.conf.task_always_eager = True  # the setup's own follow-up work, in this process
from django_celery_beat.models import IntervalSchedule, PeriodicTask
from aggregates.flavors import services as flavors
from aggregates.host_aggregates import services as aggregates
from aggregates.hosts import services as hosts
from aggregates.identity.caller import Caller
from aggregates.images import services as images
from placement.standards import sync_standard_names
sync_standard_names()
system = Caller.system("tests")
for name, members in (("rack", ("A", "B", "C")), ("cache", CACHE_HOSTS)):
    agg = aggregates.create_aggregate(system, name)
    for host in members:
        hosts.register_host(system, host, vcpus=16, memory_mb=65536, local_gb=1000)
        aggregates.add_host(system, agg.id, host)
flavor = flavors.create_flavor(system, name="small", ram=1024, vcpus=2, disk=1)
image = images.create_image(system, {"name": "cirros", "disk_format": "qcow2", "container_format": "bare",
                                     "visibility": "public"})
images.upload_image_data(system, str(image.id), [b"cirros" * 10000])
# The job drains every DRAIN_EVERY seconds rather than every minute, so a killed worker's job resumes soon.
every = IntervalSchedule.objects.create(every=DRAIN_EVERY, period=IntervalSchedule.SECONDS)
PeriodicTask.objects.filter(task__in=["corral.maintenance.drain", "corral.precache.drain_jobs"]).update(interval=every)
print(json.dumps({"cache": agg.id, "flavor": flavor.flavorid, "image": str(image.id)}))
"""

SENT = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO celery\.beat \[[^\]]*\] Scheduler: Sending due task .+ \((\S+)\)$",
    re.M,
)


@dataclass
class Running:
    """The running cluster, its processes and database, what the setup made, and the balancer's URL."""

    cluster: Cluster
    processes: Processes
    database: _Database
    made: dict
    url: str
    workers: dict
    started: float

    def db(self, query, *args):
        with psycopg.connect(self.database.url.replace("postgres://", "postgresql://")) as conn:
            return conn.execute(query, args).fetchall()

    def get(self, path, base=None, **headers):
        answer = requests.get((base or self.url) + path, headers={**COMPUTE, **headers}, timeout=30)
        assert answer.status_code == 200, (path, answer.status_code, answer.text)
        return answer


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """The cluster, started once for the module's tests, holding the lock of
    the tests that open many database connections while it runs."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if connection.vendor != "postgresql" or not broker.startswith("redis://"):
        pytest.skip(
            "the cluster runs on PostgreSQL and Redis: set DATABASE_URL and CELERY_BROKER_URL (CI's first stage)"
        )
    clock = time.monotonic()
    workdir = tmp_path_factory.mktemp("cluster")
    database = _Database(workdir, "cluster")
    settings = {
        "CACHE_DRIVER": "inprocess",
        "HOST_CACHE_SIMULATED_DELAY": "1",
        "IMAGE_CACHE_LEASE_SECONDS": str(LEASE),
        "MAINTENANCE_SIMULATED_DELAY": "1",
        "MAINTENANCE_CONCURRENCY": "1",
        "MAINTENANCE_LEASE_SECONDS": str(LEASE),
        "SERVICE_DOWN_TIME": "3600",  # no agent heartbeats the hosts: they stay up the whole test
    }
    env = stack_env(workdir, database.url, f"redis://{urlsplit(broker).netloc}/{REDIS_DB}", settings)
    processes = Processes(workdir, env)
    cluster = Cluster(processes, nodes=2)
    with connection_hungry(tmp_path_factory):
        try:
            flush_redis(env["CELERY_BROKER_URL"])  # before any worker binds its queue there
            # The nodes and workers start while the migration and the setup run (a node
            # answers 200 once migrated); the beat once the setup has shortened the drains' period.
            for node in cluster.nodes:
                cluster.launch_web(node)
            workers = {name: cluster.start_worker(name) for name in ("w1", "w2")}
            processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
            script = f"CACHE_HOSTS = {CACHE_HOSTS!r}\nDRAIN_EVERY = {DRAIN_EVERY}\n" + SETUP
            made = json.loads(
                processes.run(str(VENV_BIN / "python"), "manage.py", "shell", "-c", script).stdout.split("\n")[-2]
            )
            cluster.start_beat("beat1")
            for node in cluster.nodes:
                cluster.wait_web(node)
            url = cluster.start_balancer()
            wait_until(lambda: "holds the beat lease" in cluster.log("beat1"), 60, "the first beat")
            cluster.start_beat("beat2")
            yield Running(cluster, processes, database, made, url, workers, clock)
        finally:
            processes.stop_all()
            database.drop()


def differences(before, after, where=""):
    """Where two JSON documents differ (for an assertion's message)."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = before.keys() | after.keys()
        return [d for k in sorted(keys) for d in differences(before.get(k), after.get(k), f"{where}.{k}")]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            d for i, (b, a) in enumerate(zip(before, after, strict=True)) for d in differences(b, a, f"{where}[{i}]")
        ]
    return [] if before == after else [f"{where}: {before!r} != {after!r}"]


def sends(text):
    """(time, task) of each schedule a beat's log says it sent."""
    return [(datetime.strptime(t, "%Y-%m-%d %H:%M:%S,%f").timestamp(), name) for t, name in SENT.findall(text)]


def test_rolling_restarts_and_killed_workers_lose_nothing_under_load(running):
    cluster, processes, made, url, workers = (
        running.cluster,
        running.processes,
        running.made,
        running.url,
        running.workers,
    )
    db = running.db
    took = {"started": time.monotonic() - running.started}

    def holder(table, job_uuid):
        """The pid of the worker holding the job (its lease token: host:pid:nonce)."""
        (worker,) = db(f"SELECT worker FROM aggregates_{table} WHERE uuid = %s", job_uuid)[0]
        return int(worker.split(":")[1])

    def job(location):
        return requests.get(location, headers=COMPUTE, timeout=10).json()["job"]

    def kill_holder(table, location):
        """Kill -9 the worker running the job once it has done one item (of several); its name."""
        wait_until(lambda: job(location)["done"] >= 1, 60, f"the {table} to start")
        pid = holder(table, job(location)["id"])
        (name,) = [name for name, worker in workers.items() if worker.pid == pid]
        os.killpg(pid, signal.SIGKILL)
        workers.pop(name).wait(10)
        killed = job(location)
        assert killed["status"] == "running" and killed["done"] < killed["total"], killed
        return name

    # Four servers on A, built by the workers.
    boot = {
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
    answer = requests.post(url + "/compute/v2.1/servers", json=boot, headers=COMPUTE, timeout=30)
    assert answer.status_code == 202, answer.text

    def servers():
        return requests.get(url + "/compute/v2.1/servers/detail", headers=COMPUTE, timeout=10).json()["servers"]

    wait_until(lambda: [s["status"] for s in servers()] == ["ACTIVE"] * SERVERS, 60, "the servers")

    took["booted"] = time.monotonic() - running.started
    load = Load(url, clients=8).start()

    # A worker killed in the middle of a maintenance drain of A; the web node 1 restarted meanwhile.
    answer = requests.post(
        url + "/compute/v2.1/os-hosts/A/maintenance", json={"maintenance": {"action": "start"}}, headers=COMPUTE
    )
    assert answer.status_code == 202, answer.text
    drain = answer.headers["Location"]
    killed = kill_holder("maintenancejob", drain)
    steps = [cluster.restart_web(cluster.nodes[0])]
    drained = wait_until(lambda: (j := job(drain))["status"] != "running" and j, 90, "the drain to finish")
    (survivor,) = workers
    assert holder("maintenancejob", drained["id"]) == workers[survivor].pid

    # The killed worker comes back (as its unit restarts it); the worker running a pre-cache job is killed.
    workers[f"{killed}-again"] = cluster.start_worker(f"{killed}-again")
    answer = requests.post(
        f"{url}/compute/v2.1/os-aggregates/{made['cache']}/images",
        json={"cache": [{"id": made["image"]}]},
        headers={**ADMIN, "OpenStack-API-Version": "compute 2.81"},
        timeout=30,
    )
    assert answer.status_code == 202, answer.text
    precache = answer.headers["Location"]
    kill_holder("imagecachejob", precache)
    steps.append(cluster.restart_web(cluster.nodes[1]))
    cached = wait_until(lambda: (j := job(precache))["status"] != "running" and j, 90, "the pre-cache to finish")
    (other,) = workers
    assert holder("imagecachejob", cached["id"]) == workers[other].pid

    result = load.stop()
    took["jobs and restarts"] = time.monotonic() - running.started
    print(f"\nunder load: {result.summary()}; rolling restarts (s): {steps}; since start (s): {took}")
    assert result.failures == [], result.failures[:10]
    assert result.requests > 50

    # Nothing lost, nothing done twice: each server moved once, off A; each host cached once.
    assert drained["status"] == "completed" and drained["done"] == SERVERS, drained
    assert {s["status"] for s in drained["servers"]} == {"moved"}
    hosts = Counter(s["OS-EXT-SRV-ATTR:host"] for s in servers())
    assert sum(hosts.values()) == SERVERS and set(hosts) <= {"B", "C"}, hosts
    migrations = requests.get(url + "/compute/v2.1/os-migrations", headers=COMPUTE, timeout=10).json()["migrations"]
    assert sorted(Counter(m["instance_uuid"] for m in migrations).values()) == [1] * SERVERS, migrations
    # Each server's allocation followed it: none left on A, every one on B or C.
    placement = {"OpenStack-API-Version": "placement 1.28"}
    vcpus = {}
    for host in ("A", "B", "C"):
        (provider,) = running.get(f"/placement/resource_providers?name={host}", **placement).json()[
            "resource_providers"
        ]
        usages = running.get(f"/placement/resource_providers/{provider['uuid']}/usages", **placement).json()
        vcpus[host] = usages["usages"].get("VCPU", 0)
    assert vcpus["A"] == 0 and vcpus["B"] + vcpus["C"] == 2 * SERVERS, vcpus
    moved = db("SELECT payload FROM aggregates_event WHERE event_type = 'compute.maintenance.progress'")
    assert sorted(Counter(p["server"]["id"] for (p,) in moved).values()) == [1] * SERVERS
    assert cached["status"] == "completed" and cached["done"] == len(CACHE_HOSTS), cached
    for host in CACHE_HOSTS:
        assert (processes.workdir / "host-cache" / host / made["image"]).exists()
    events = Counter(
        t for (t,) in db("SELECT event_type FROM aggregates_event WHERE event_type LIKE 'aggregate.cache_images.%%'")
    )
    assert events == {
        "aggregate.cache_images.start": 1,
        "aggregate.cache_images.progress": len(CACHE_HOSTS),
        "aggregate.cache_images.end": 1,
    }, events

    # One beat sent the schedules; the second waited the whole time; no schedule was sent twice.
    assert "waits" in cluster.log("beat2") and sends(cluster.log("beat2")) == []
    by_task: dict[str, list[float]] = {}
    for at, name in sends(cluster.log("beat1")):
        by_task.setdefault(name, []).append(at)
    assert len(by_task["corral.maintenance.drain"]) >= 2, by_task
    for name, times in by_task.items():
        gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
        assert all(gap >= DRAIN_EVERY * 0.5 for gap in gaps), (name, gaps)


def test_a_backup_of_the_running_cluster_restores_whole(running):
    """docs/operations.md's backup, taken while the cluster runs, restored
    into a new database and image store: a web node started on them answers
    as the cluster did, image data included."""
    workdir, backup = running.processes.workdir, running.processes.workdir / "backup"
    uploaded = requests.post(
        running.url + "/image/v2/images",
        json={"name": "fresh", "disk_format": "raw", "container_format": "bare"},
        headers=ADMIN,
        timeout=30,
    ).json()["id"]
    data = os.urandom(300_000)
    put = requests.put(
        f"{running.url}/image/v2/images/{uploaded}/file",
        data=data,
        headers={**ADMIN, "Content-Type": "application/octet-stream"},
        timeout=30,
    )
    assert put.status_code == 204, put.text

    # The backup: the database first (one consistent snapshot), then the image store.
    backup.mkdir()
    dump = backup / "corral.dump"
    subprocess.run(["pg_dump", "--format=custom", f"--file={dump}", running.database.url], check=True, timeout=120)
    store = workdir / "images"
    subprocess.run(["rsync", "-a", "--exclude=.*.part", f"{store}/", f"{backup}/images/"], check=True, timeout=120)
    paths = (
        "/compute/v2.1/servers/detail",
        "/compute/v2.1/os-aggregates",
        "/compute/v2.1/flavors/detail",
        "/image/v2/images",
        "/placement/resource_providers",
    )
    host = {"Host": urlsplit(running.url).netloc}  # the links in the answers name it
    before = {path: running.get(path).json() for path in paths}

    # The restore, into an empty database and image store, with nothing running on them.
    restored_var = workdir / "restored"
    restored_var.mkdir()
    restored = _Database(restored_var, "cluster_restored")
    try:
        subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={restored.url}", str(dump)],
            check=True,
            timeout=120,
        )
        subprocess.run(["rsync", "-a", f"{backup}/images/", f"{restored_var}/images/"], check=True, timeout=120)
        port = free_port("127.0.0.1")
        node = running.processes.start(
            "restored",
            str(VENV_BIN / "gunicorn"),
            "-c",
            str(PROJECT / "config" / "gunicorn.conf.py"),
            "-b",
            f"127.0.0.1:{port}",
            env={
                "DATABASE_URL": restored.url,
                "CORRAL_VAR_DIR": str(restored_var),
                "CELERY_BROKER_URL": "",
                "WEB_CONCURRENCY": "1",
            },
        )
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: requests.get(base + "/healthcheck", timeout=5).status_code == 200, 90, "the restored node")
        for path in paths:
            after = running.get(path, base, **host).json()
            assert after == before[path], (path, differences(before[path], after))
        assert running.get(f"/image/v2/images/{uploaded}/file", base).content == data
        cirros = running.get(f"/image/v2/images/{running.made['image']}/file", base)
        assert cirros.content == b"cirros" * 10000
        node.terminate()
        node.wait(30)
    finally:
        restored.drop()
