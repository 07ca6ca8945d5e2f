"""Benchmark: throughput of the scale-out cluster with one and with two web
nodes (issue 21), the cluster of tests/deployment/test_cluster.py.

PostgreSQL and Redis, one Celery worker, and for each round N web nodes
(gunicorn with config/gunicorn.conf.py, WEB_CONCURRENCY workers of 4
threads each, on 127.0.0.2, 127.0.0.3) behind Debian's HAProxy (unpacked
into var/ when not installed, as the test does). CLIENTS threads send the
test's mixed load through the balancer (server, aggregate, flavor, image
and provider lists; 20 % of steps create, read and delete an aggregate)
for DURATION seconds after a warm-up. For each round it prints requests/s,
median and p99 latency, failures, and the CPU each part used (seconds of
CPU per second of the round: 2.0 is both cores), read from /proc: the web
nodes, HAProxy, PostgreSQL's backends for this database, the Celery
worker, and this process (the clients); and from these the CPU one
request costs, all parts together, and so the most requests/s the
machine's cores could serve, however many nodes share them.

    .venv/bin/python bench/cluster_bench.py [--nodes 1 2] [--duration 30] [--clients 8]
        [--web-concurrency 2] [--database-url postgres://postgres@127.0.0.1:5432/corral_cluster_bench]
        [--redis-url redis://127.0.0.1:6379/11]

The database is DROPPED and re-created: give it one of its own.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from process_cpu import Usage, postgres_backends  # noqa: E402  # bench/process_cpu.py, beside this script

from tests.cluster import ADMIN, Cluster, Load  # noqa: E402
from tests.process_stack import VENV_BIN, Processes, descendants, flush_redis, stack_env, wait_until  # noqa: E402

SETUP = """
import json
from config import celery_app
celery_app.conf.task_always_eager = True
from aggregates.flavors import services as flavors
from aggregates.host_aggregates import services as aggregates
from aggregates.hosts import services as hosts
from aggregates.identity.caller import Caller
from aggregates.images import services as images
from placement.standards import sync_standard_names
sync_standard_names()
system = Caller.system("bench")
for a in range(5):
    agg = aggregates.create_aggregate(system, f"rack-{a}")
    for h in range(4):
        hosts.register_host(system, f"h{a}-{h}", vcpus=64, memory_mb=262144, local_gb=4000)
        aggregates.add_host(system, agg.id, f"h{a}-{h}")
flavor = flavors.create_flavor(system, name="small", ram=1024, vcpus=1, disk=1)
image = images.create_image(system, {"name": "cirros", "disk_format": "qcow2", "container_format": "bare",
                                     "visibility": "public"})
images.upload_image_data(system, str(image.id), [b"cirros" * 10000])
print(json.dumps({"flavor": flavor.flavorid, "image": str(image.id)}))
"""


def tree(process):
    return [process.pid, *descendants(process.pid)]


def measure(cluster, worker, database, url, seconds, clients, seed):
    """A warm-up of 3 s, then the load for ``seconds``: its result and each
    part's CPU seconds per second."""
    warm = Load(url, clients, seed=seed).start()
    time.sleep(3)
    warm.stop()
    groups = {
        "web nodes": lambda: [p for n in cluster.nodes for p in tree(n.process)],
        "haproxy": lambda: tree(cluster.balancer),
        "postgres": lambda: postgres_backends(database),
        "celery worker": lambda: tree(worker),
        "clients": lambda: [os.getpid()],
    }
    usage = Usage(groups)
    load = Load(url, clients, seed=seed + 1).start()
    time.sleep(seconds)
    result = load.stop()
    # PostgreSQL keeps each thread's connection: few backends come and go unseen.
    used, _busy = usage.stop()
    return result, {name: seconds_used / result.seconds for name, seconds_used in used.items()}


def active(url, headers):
    servers = requests.get(url + "/compute/v2.1/servers/detail", headers=headers, timeout=30).json()["servers"]
    return all(s["status"] == "ACTIVE" for s in servers)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--web-concurrency", type=int, default=2)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/corral_cluster_bench")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/11")
    args = parser.parse_args()

    database = urlsplit(args.database_url).path.strip("/")
    if database in ("test", "test_test", "postgres"):
        sys.exit(f"refusing to drop {database}")
    admin = args.database_url.replace("postgres://", "postgresql://").rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')

    workdir = Path(tempfile.mkdtemp(prefix="cluster-bench-"))
    env = stack_env(workdir, args.database_url, args.redis_url, {"LOG_LEVEL": "WARNING"})
    base = Processes(workdir, env)
    print(f"work directory {workdir}; load average {os.getloadavg()[0]:.1f}", flush=True)
    try:
        flush_redis(args.redis_url)
        base.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
        made = json.loads(base.run(str(VENV_BIN / "python"), "manage.py", "shell", "-c", SETUP).stdout.split("\n")[-2])
        worker = base.start(
            "worker", str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-l", "warning"
        )
        rows = []
        for number, nodes in enumerate(args.nodes, 1):
            round_dir = workdir / f"round-{number}-nodes-{nodes}"
            round_dir.mkdir()
            processes = Processes(round_dir, env)
            cluster = Cluster(processes, nodes, web_concurrency=args.web_concurrency)
            try:
                for node in cluster.nodes:
                    cluster.launch_web(node)
                for node in cluster.nodes:
                    cluster.wait_web(node)
                url = cluster.start_balancer()
                if not rows:  # twenty servers for the lists, built by the worker
                    boot = {
                        "server": {
                            "name": "vm",
                            "imageRef": made["image"],
                            "flavorRef": made["flavor"],
                            "min_count": 20,
                            "max_count": 20,
                            "networks": "none",
                        }
                    }
                    headers = {**ADMIN, "OpenStack-API-Version": "compute 2.42"}
                    requests.post(url + "/compute/v2.1/servers", json=boot, headers=headers, timeout=60)
                    wait_until(lambda url=url, headers=headers: active(url, headers), 120, "the servers")
                load_before = os.getloadavg()[0]
                result, cpu = measure(cluster, worker, database, url, args.duration, args.clients, seed=nodes)
                load_after = os.getloadavg()[0]
            finally:
                processes.stop_all()
            row = (
                f"{nodes} web node(s) x {args.web_concurrency} workers: {result.summary()}; "
                f"CPU (s/s): "
                + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
                + f", all {sum(cpu.values()):.2f}; load average {load_before:.1f} -> {load_after:.1f}"
            )
            # CPU per request, and what the machine's cores would then serve at most.
            per_request = sum(cpu.values()) * result.seconds / max(1, result.requests)
            web = cpu["web nodes"] * result.seconds / max(1, result.requests)
            row += (
                f"; CPU per request {per_request * 1000:.1f} ms (web nodes {web * 1000:.1f} ms): "
                f"{os.cpu_count()} cores serve at most {os.cpu_count() / per_request:.0f} requests/s"
            )
            print(row, flush=True)
            rows.append((result, cpu))
        failed = sum(len(r.failures) for r, _ in rows)
        if failed:
            print(f"{failed} requests failed, e.g. {rows[0][0].failures[:3]}")
        return 1 if failed else 0
    finally:
        base.stop_all()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())
