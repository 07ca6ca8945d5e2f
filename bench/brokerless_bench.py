"""Benchmark: the broker-less default under mixed load (issue 11).

Celery eager (no CELERY_BROKER_URL), gunicorn with several sync workers on
PostgreSQL: each write applies its outbox rows after commit, calling
placement. With PLACEMENT_URL empty that call is served in process; with
PLACEMENT_URL pointing at the server's own /placement it goes over HTTP to a
worker of the same gunicorn, which is where the old default stalled: every
worker busy with a write waits for another worker to answer its placement
call.

For each mode asked for, the bench:

1. empties the database (DATABASE_URL, default corral_wire: give it a
   database of its own), migrates it and loads the demo cloud
   (``manage.py seed_demo``: 46 hosts, 9 aggregates, users);
2. starts ``gunicorn -w WORKERS config.wsgi`` with no broker and the mode's
   PLACEMENT_URL;
3. runs CLIENTS threads for DURATION seconds, each looping over a mix of
   compute API reads and writes (list aggregates, list hypervisors, show
   an aggregate, placement GETs; add and remove a host, set metadata on the
   client's own aggregate);
4. reports requests/s, p50/p95/max latency, the requests slower than 1 s
   (stalls), errors, the outbox rows left pending once the load stops
   (after a settle period), and the load average.

It exits 1 if a mode had an error, left rows pending, or a p99 of 1 s or
more: no request may wait on placement, even when placement is this same
server over HTTP (FOLLOW_UP_WAIT_SECONDS bounds that wait).

    .venv/bin/python bench/brokerless_bench.py [--mode inprocess|http|both] [--duration 60]
        [--clients 8] [--workers 4] [--database-url postgres://postgres@127.0.0.1:5432/corral_wire]
        [--json out.json]
"""

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv/bin/python")
GUNICORN = str(ROOT / ".venv/bin/gunicorn")
STALL = 1.0
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/corral_wire"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def base_env(database_url):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_"))}
    env.update(DATABASE_URL=database_url, DEBUG="0", LOG_LEVEL="WARNING", DJANGO_SETTINGS_MODULE="config.settings")
    return env


def prepare_database(database_url):
    """Empty, migrate and seed the bench's own database."""
    name = database_url.rsplit("/", 1)[-1]
    if name in ("", "postgres", "test", "test_test"):
        sys.exit(f"refusing database {name!r}: give the bench a database of its own")
    if database_url.startswith("postgres"):
        admin = database_url.rsplit("/", 1)[0] + "/postgres"
        for sql in (f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"'):
            subprocess.run(["psql", admin, "-q", "-c", sql], check=True, capture_output=True)
    env = base_env(database_url)
    subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([PYTHON, "manage.py", "seed_demo"], cwd=ROOT, env=env, check=True, capture_output=True)


class Server:
    def __init__(self, database_url, workers, placement_url_template):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = base_env(database_url)
        env["PLACEMENT_URL"] = placement_url_template.format(url=self.url)
        self.log = open(f"/tmp/brokerless-bench-{self.port}.log", "wb")
        self.process = subprocess.Popen(
            [GUNICORN, "-w", str(workers), "-b", f"127.0.0.1:{self.port}", "--timeout", "120", "config.wsgi"],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                requests.get(self.url + "/compute/", timeout=5)
                return
            except requests.RequestException:
                if self.process.poll() is not None:
                    break
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"gunicorn did not start, see {self.log.name}")

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def login(url):
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": "admin", "domain": {"id": "default"}, "password": "corral-demo"}},
            },
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}},
        }
    }
    response = requests.post(url + "/identity/v3/auth/tokens", json=body, timeout=30)
    response.raise_for_status()
    return response.headers["X-Subject-Token"]


class Client(threading.Thread):
    """One client: a session, its own aggregate, and a loop of mixed requests."""

    def __init__(self, index, url, token, hosts, stop_at):
        super().__init__(daemon=True)
        self.index, self.url, self.stop_at = index, url, stop_at
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": token, "OpenStack-API-Version": "compute 2.41"})
        self.hosts = hosts
        self.random = random.Random(index)
        self.samples = []  # (kind, seconds, status)
        self.member = set()

    def call(self, kind, method, path, body=None, headers=None):
        started = time.monotonic()
        try:
            response = self.session.request(method, self.url + path, json=body, headers=headers, timeout=120)
            status = response.status_code
        except requests.RequestException:
            status = 0
        self.samples.append((kind, time.monotonic() - started, status))
        return status

    def setup(self):
        response = self.session.post(
            self.url + "/compute/v2.1/os-aggregates", json={"aggregate": {"name": f"bench-{self.index}"}}, timeout=60
        )
        response.raise_for_status()
        self.aggregate = response.json()["aggregate"]["id"]

    def step(self):
        agg = f"/compute/v2.1/os-aggregates/{self.aggregate}"
        choice = self.random.random()
        if choice < 0.2:
            self.call("list aggregates", "GET", "/compute/v2.1/os-aggregates")
        elif choice < 0.35:
            self.call("list hypervisors", "GET", "/compute/v2.1/os-hypervisors/detail")
        elif choice < 0.45:
            self.call("show aggregate", "GET", agg)
        elif choice < 0.6:
            self.call(
                "placement GET",
                "GET",
                "/placement/resource_providers",
                headers={"OpenStack-API-Version": "placement 1.14"},
            )
        elif choice < 0.85:
            host = self.random.choice(self.hosts)
            if host in self.member:
                if self.call("remove host", "POST", agg + "/action", {"remove_host": {"host": host}}) == 200:
                    self.member.discard(host)
            elif self.call("add host", "POST", agg + "/action", {"add_host": {"host": host}}) == 200:
                self.member.add(host)
        else:
            value = str(self.random.randint(0, 1000))
            self.call("set metadata", "POST", agg + "/action", {"set_metadata": {"metadata": {"bench": value}}})

    def run(self):
        while time.monotonic() < self.stop_at:
            self.step()


def pending_rows(database_url):
    env = base_env(database_url)
    code = (
        "import django; django.setup()\n"
        "from aggregates.mirroring.models import PlacementMirrorRequest as A, ProviderSyncRequest as P\n"
        "print(sum(m.objects.filter(status='pending').count() for m in (A, P)), "
        "sum(m.objects.filter(status='failed').count() for m in (A, P)))\n"
    )
    out = subprocess.run([PYTHON, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    pending, failed = out.stdout.split()
    return int(pending), int(failed)


def run_mode(mode, args):
    template = "" if mode == "inprocess" else "{url}/placement"
    prepare_database(args.database_url)
    server = Server(args.database_url, args.workers, template)
    try:
        token = login(server.url)
        services = requests.get(
            f"{server.url}/compute/v2.1/os-services?binary=nova-compute", headers={"X-Auth-Token": token}, timeout=30
        ).json()["services"]
        hosts = sorted(s["host"] for s in services)
        load_before = os.getloadavg()
        clients = [Client(i, server.url, token, hosts, 0) for i in range(args.clients)]
        for client in clients:
            client.setup()
        started = time.monotonic()
        for client in clients:
            client.stop_at = started + args.duration
        for client in clients:
            client.start()
        for client in clients:
            client.join(args.duration + 180)
        elapsed = time.monotonic() - started
        load_after = os.getloadavg()
        time.sleep(args.settle)
        pending, failed = pending_rows(args.database_url)
    finally:
        server.stop()
    samples = [s for c in clients for s in c.samples]
    times = sorted(s[1] for s in samples)
    by_kind = {}
    for kind, seconds, _status in samples:
        by_kind.setdefault(kind, []).append(seconds)
    result = {
        "mode": mode,
        "placement_url": template or "(empty: in process)",
        "workers": args.workers,
        "clients": args.clients,
        "seconds": round(elapsed, 1),
        "requests": len(samples),
        "requests_per_s": round(len(samples) / elapsed, 1),
        "p50_ms": round(statistics.median(times) * 1000, 1) if times else None,
        "p95_ms": round(times[int(len(times) * 0.95) - 1] * 1000, 1) if times else None,
        "p99_ms": round(times[int(len(times) * 0.99) - 1] * 1000, 1) if times else None,
        "max_ms": round(times[-1] * 1000, 1) if times else None,
        "stalls_over_1s": sum(1 for t in times if t > STALL),
        "errors": sum(1 for s in samples if s[2] == 0 or s[2] >= 500),
        "pending_rows_left": pending,
        "failed_rows": failed,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "per_kind": {
            kind: {"count": len(v), "p50_ms": round(statistics.median(v) * 1000, 1), "max_ms": round(max(v) * 1000, 1)}
            for kind, v in sorted(by_kind.items())
        },
    }
    print(json.dumps(result, indent=1), flush=True)
    print(
        f"{mode}: {result['requests_per_s']} req/s, p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, "
        f"p99 {result['p99_ms']} ms, "
        f"max {result['max_ms']} ms, {result['stalls_over_1s']} stalls > 1 s, {result['errors']} errors, "
        f"{pending} pending / {failed} failed rows left, load {result['loadavg_after']}",
        flush=True,
    )
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["inprocess", "http", "both"], default="both")
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--settle", type=float, default=3, help="seconds after the load before counting rows")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB))
    parser.add_argument("--json")
    args = parser.parse_args()
    modes = ["inprocess", "http"] if args.mode == "both" else [args.mode]
    results = [run_mode(mode, args) for mode in modes]
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    failed = [r["mode"] for r in results if r["errors"] or r["pending_rows_left"] or (r["p99_ms"] or 0) >= STALL * 1000]
    if failed:
        print(f"FAIL: {', '.join(failed)}: errors, rows left pending, or a p99 of 1 s or more", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
