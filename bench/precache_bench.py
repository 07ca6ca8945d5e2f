"""Benchmark: pre-caching one image on 20 host agents (issue 13).

The whole chain, as deployed: Corral under gunicorn (gthread workers, no
broker: the job runs in a thread of the worker that took the request, the
``agent`` driver fanning out to IMAGE_CACHE_CONCURRENCY hosts at a time), and
AGENTS real agent processes (``manage.py run_host_agent``) on loopback ports,
each streaming the image from Corral's ``/image/v2/images/{id}/file`` into a
cache directory of its own.

For each image size (default 20 MB and 200 MB) the bench starts fresh agents,
uploads the image, then for each concurrency (default 1, 4, 20) empties the
agents' caches, starts Corral with that IMAGE_CACHE_CONCURRENCY, requests the
pre-cache (POST /os-aggregates/{id}/images) and polls the job to its end. It
reports:

- wall time (the POST to the job's end) and the throughput (bytes written on
  all hosts / wall time);
- Corral's server memory: the peak RSS of its gunicorn workers, sampled every
  50 ms during the job, against their RSS before it;
- an agent's memory: the largest peak RSS (VmHWM, from ``/healthz``) of the
  agents after the runs of that size, against their RSS at start;
- the load average (``uptime``) before and after.

Streaming means neither memory figure grows with the image size: compare the
20 MB and 200 MB rows.

    .venv/bin/python bench/precache_bench.py [--agents 20] [--sizes-mb 20 200]
        [--concurrency 1 4 20] [--database-url postgres://postgres@127.0.0.1:5432/corral_agent_bench]
        [--workdir /tmp/precache-bench] [--json out.json]

The database is dropped and re-created (give the bench one of its own).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests
from process_cpu import children  # bench/process_cpu.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv/bin/python")
GUNICORN = str(ROOT / ".venv/bin/gunicorn")
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/corral_agent_bench"
SECRET = "precache-bench-secret"
V281 = {"OpenStack-API-Version": "compute 2.81"}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def base_env(database_url, workdir):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_"))}
    env.update(
        DATABASE_URL=database_url,
        DEBUG="0",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="config.settings",
        IMAGE_STORE_DIR=str(workdir / "image-store"),
        AGENT_SHARED_SECRET=SECRET,
        CACHE_DRIVER="agent",
        AUTH_STRATEGY="keystone",
    )
    return env


def prepare_database(database_url, env):
    name = database_url.rsplit("/", 1)[-1]
    if name in ("", "postgres", "test", "test_test", "corral", "corral_agent"):
        sys.exit(f"refusing database {name!r}: give the bench a database of its own")
    if database_url.startswith("postgres"):
        from urllib.parse import urlsplit

        import psycopg

        url = urlsplit(database_url)
        with psycopg.connect(
            host=url.hostname or "127.0.0.1",
            port=url.port or 5432,
            user=url.username,
            dbname="postgres",
            autocommit=True,
        ) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)


def admin_token(env):
    code = (
        "from aggregates.identity import services as s;"
        "from django.contrib.auth import get_user_model;"
        "u = get_user_model().objects.create_user(username='bench-admin', password='x');"
        "p = s.ensure_project('admin'); s.grant(u, p, 'admin');"
        "print(s.issue_token(u, p)[0])"
    )
    done = subprocess.run(
        [PYTHON, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip().splitlines()[-1]


def rss_kb(pid, field="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def wait_http(url, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=2)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


class Corral:
    def __init__(self, env, concurrency, port, workers=2, threads=24):
        self.port = port
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**env, "IMAGE_CACHE_CONCURRENCY": str(concurrency), "IMAGE_CACHE_HOST_TIMEOUT": "1800"}
        self.process = subprocess.Popen(
            [GUNICORN, "-b", f"127.0.0.1:{self.port}", "-w", str(workers), "-k", "gthread", "--threads", str(threads)]
            + ["--timeout", "600", "--no-control-socket", "config.wsgi"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_http(self.url + "/compute/")

    def workers(self):
        return children(self.process.pid)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)


class Agent:
    def __init__(self, host, corral_url, token, cache_dir, env):
        self.host = host
        self.cache_dir = cache_dir
        self.process = subprocess.Popen(
            [PYTHON, "manage.py", "run_host_agent", "--host", host, "--listen", "127.0.0.1:0"]
            + ["--cache-dir", str(cache_dir), "--corral-url", corral_url],
            cwd=ROOT,
            env={**env, "CORRAL_AGENT_TOKEN": token, "CORRAL_AGENT_SECRET": SECRET},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.process.stdout.readline()
        if " listening on " not in line:
            raise RuntimeError(f"agent {host} did not start: {line!r}")
        self.url = line.split(" listening on ", 1)[1].split(",", 1)[0].strip()
        self.start_rss_kb = rss_kb(self.process.pid)

    def peak_rss_kb(self):
        return requests.get(self.url + "/healthz", timeout=10).json()["peak_rss_kb"]

    def clear(self):
        for path in self.cache_dir.iterdir():
            path.unlink()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def load():
    return os.getloadavg()


def api(session, url, method, path, **kwargs):
    response = session.request(method, f"{url}/compute/v2.1{path}", timeout=60, **kwargs)
    response.raise_for_status()
    return response


def make_image(session, url, size_mb, workdir):
    source = workdir / f"image-{size_mb}.raw"
    with open(source, "wb") as out:
        for _ in range(size_mb):
            out.write(os.urandom(1024 * 1024))
    created = session.post(
        f"{url}/image/v2/images",
        json={"name": f"bench-{size_mb}mb", "disk_format": "raw", "container_format": "bare", "visibility": "public"},
        timeout=60,
    )
    created.raise_for_status()
    image_id = created.json()["id"]
    with open(source, "rb") as data:
        uploaded = session.put(
            f"{url}/image/v2/images/{image_id}/file",
            data=data,
            headers={"Content-Type": "application/octet-stream"},
            timeout=600,
        )
    uploaded.raise_for_status()
    source.unlink()
    return image_id


def run_job(session, corral, aggregate_id, image_id):
    samples = []
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            samples.append(sum(rss_kb(pid) for pid in corral.workers()))
            stop.wait(0.05)

    before = sum(rss_kb(pid) for pid in corral.workers())
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    response = session.post(
        f"{corral.url}/compute/v2.1/os-aggregates/{aggregate_id}/images",
        json={"cache": [{"id": image_id}]},
        headers=V281,
        timeout=60,
    )
    if response.status_code != 202:
        raise RuntimeError(f"pre-cache refused: {response.status_code} {response.text}")
    job_url = response.headers["Location"]
    while True:
        job = session.get(job_url, headers=V281, timeout=60).json()["job"]
        if job["finished_at"]:
            break
        time.sleep(0.1)
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    statuses = sorted({i["status"] for h in job["hosts"] for i in h["images"]})
    errors = sorted({i["error"] for h in job["hosts"] for i in h["images"] if i["error"]})
    return {
        "errors": errors[:3],
        "wall_s": round(wall, 2),
        "job_status": job["status"],
        "image_statuses": statuses,
        "server_rss_before_mb": round(before / 1024, 1),
        "server_rss_peak_mb": round(max(samples or [before]) / 1024, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 20])
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--workdir", default="/tmp/precache-bench")
    parser.add_argument("--json")
    args = parser.parse_args()

    workdir = Path(args.workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    env = base_env(args.database_url, workdir)
    prepare_database(args.database_url, env)
    token = admin_token(env)
    session = requests.Session()
    session.headers.update({"X-Auth-Token": token, "Accept": "application/json"})
    rows = []
    load_before = load()
    port = free_port()  # the same across restarts: the agents keep their Corral URL
    corral = Corral(env, args.concurrency[0], port)
    try:
        hosts = [f"bench-host-{n:02d}" for n in range(1, args.agents + 1)]
        aggregate_id = None
        for size_mb in args.sizes_mb:
            agents = [Agent(h, corral.url, token, workdir / "cache" / h, env) for h in hosts]
            try:
                if aggregate_id is None:
                    aggregate = api(
                        session, corral.url, "POST", "/os-aggregates", json={"aggregate": {"name": "bench"}}
                    )
                    aggregate_id = aggregate.json()["aggregate"]["id"]
                    for host in hosts:
                        api(
                            session,
                            corral.url,
                            "POST",
                            f"/os-aggregates/{aggregate_id}/action",
                            json={"add_host": {"host": host}},
                        )
                image_id = make_image(session, corral.url, size_mb, workdir)
                for concurrency in args.concurrency:
                    corral.stop()
                    corral = Corral(env, concurrency, port)
                    for agent in agents:
                        agent.clear()
                    row = {"size_mb": size_mb, "agents": args.agents, "concurrency": concurrency}
                    row.update(run_job(session, corral, aggregate_id, image_id))
                    row["throughput_mb_s"] = round(size_mb * args.agents / row["wall_s"], 1)
                    row["load"] = [round(x, 2) for x in load()]
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                peaks = [agent.peak_rss_kb() for agent in agents]
                starts = [agent.start_rss_kb for agent in agents]
                agent_row = {
                    "size_mb": size_mb,
                    "agent_rss_at_start_mb": round(max(starts) / 1024, 1),
                    "agent_peak_rss_mb": round(max(peaks) / 1024, 1),
                }
                rows.append(agent_row)
                print(json.dumps(agent_row), flush=True)
            finally:
                for agent in agents:
                    agent.stop()
    finally:
        corral.stop()
    summary = {"load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in load()]}
    summary["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(json.dumps(summary))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, **summary}, indent=2))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
