"""End to end through a real broker: a Corral server, a ``celery -A config
worker`` and upstream Placement, each its own process, sharing a SQLite file
(an in-memory test database, as live_server uses, is invisible to a worker
process). Skipped when Redis does not answer on 127.0.0.1:6379."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.mirroring.conftest import free_port

REDIS_URL = "redis://127.0.0.1:6379/15"
PROJECT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def redis_answers():
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not redis_answers(), reason="Redis is not reachable on 127.0.0.1:6379")


def wait_until(check, timeout=30, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


class Processes:
    """Subprocesses started by one test, stopped together."""

    def __init__(self, workdir, env):
        self.workdir, self.env, self.started = workdir, env, []

    def run(self, *args):
        subprocess.run(args, cwd=PROJECT, env=self.env, check=True, capture_output=True, timeout=300)

    def start(self, name, *args):
        log = open(self.workdir / f"{name}.log", "ab")
        self.started.append(
            subprocess.Popen(
                args, cwd=PROJECT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        )

    def stop_all(self):
        for process in self.started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.started:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def corral_with_worker(upstream_placement, tmp_path):
    """A Corral server (noauth2) and a Celery worker on Redis db 15; yields the server's URL."""
    port = free_port()
    env = {
        **os.environ,
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "AUTH_STRATEGY": "noauth2",
        "CELERY_BROKER_URL": REDIS_URL,
        "PLACEMENT_URL": upstream_placement.url,
        "PLACEMENT_AUTH_TOKEN": "admin",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)
    processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
    processes.run(str(VENV_BIN / "celery"), "-A", "config", "purge", "-f")
    processes.start("worker", str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-l", "info")
    processes.start("server", str(VENV_BIN / "gunicorn"), "-b", f"127.0.0.1:{port}", "-w", "1", "config.wsgi")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: requests.get(url + "/compute/", timeout=2).status_code == 200, what="Corral server")
        yield url, processes
    finally:
        processes.stop_all()
        upstream_placement.delete_all_providers()


def test_registration_and_add_host_reach_placement_through_the_worker(corral_with_worker, upstream_placement):
    url, processes = corral_with_worker
    processes.run(
        str(VENV_BIN / "python"),
        "manage.py",
        "register_host",
        "h1",
        "--vcpus",
        "4",
        "--memory-mb",
        "1024",
        "--disk-gb",
        "10",
    )
    wait_until(lambda: provider_named(upstream_placement, "h1"), what="the worker to create the provider of h1")
    provider = provider_named(upstream_placement, "h1")["uuid"]
    assert (
        upstream_placement.call("GET", f"/resource_providers/{provider}/inventories")["inventories"]["VCPU"]["total"]
        == 4
    )
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.41"}
    response = requests.post(
        url + "/compute/v2.1/os-aggregates", json={"aggregate": {"name": "agg1"}}, headers=headers, timeout=10
    )
    aggregate = response.json()["aggregate"]
    response = requests.post(
        url + f"/compute/v2.1/os-aggregates/{aggregate['id']}/action",
        json={"add_host": {"host": "h1"}},
        headers=headers,
        timeout=10,
    )
    assert response.status_code == 200, response.text
    wait_until(
        lambda: upstream_placement.aggregates_of(provider) == {aggregate["uuid"]}, what="the worker to mirror add_host"
    )
    worker_log = (processes.workdir / "worker.log").read_text()
    assert "corral.mirroring.apply_provider_request" in worker_log
    assert "corral.mirroring.apply_mirror_request" in worker_log


def provider_named(placement, name):
    providers = placement.call("GET", f"/resource_providers?name={name}")["resource_providers"]
    return providers[0] if providers else None


def compute_call(url, method, path, body=None):
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.41"}
    response = requests.request(method, url + "/compute/v2.1" + path, json=body, headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    return response.json() if response.content else None


def test_remove_delete_and_a_placement_outage_through_the_worker(corral_with_worker, upstream_placement):
    url, processes = corral_with_worker
    processes.run(
        str(VENV_BIN / "python"),
        "manage.py",
        "register_host",
        "h1",
        "--vcpus",
        "4",
        "--memory-mb",
        "1024",
        "--disk-gb",
        "10",
    )
    wait_until(lambda: provider_named(upstream_placement, "h1"), what="the worker to create the provider of h1")
    provider = provider_named(upstream_placement, "h1")["uuid"]
    keep = compute_call(url, "POST", "/os-aggregates", {"aggregate": {"name": "keep"}})["aggregate"]
    gone = compute_call(url, "POST", "/os-aggregates", {"aggregate": {"name": "gone"}})["aggregate"]
    for aggregate in (keep, gone):
        compute_call(url, "POST", f"/os-aggregates/{aggregate['id']}/action", {"add_host": {"host": "h1"}})
    wait_until(
        lambda: upstream_placement.aggregates_of(provider) == {keep["uuid"], gone["uuid"]},
        what="both aggregates on the provider",
    )

    # remove_host, then delete: the worker takes the association off again.
    compute_call(url, "POST", f"/os-aggregates/{gone['id']}/action", {"remove_host": {"host": "h1"}})
    compute_call(url, "DELETE", f"/os-aggregates/{gone['id']}")
    wait_until(
        lambda: upstream_placement.aggregates_of(provider) == {keep["uuid"]}, what="the worker to mirror remove_host"
    )

    # Placement stops: the operator's add_host still succeeds; the worker
    # retries with backoff and applies it once placement is back.
    late = compute_call(url, "POST", "/os-aggregates", {"aggregate": {"name": "late"}})["aggregate"]
    upstream_placement.stop()
    try:
        body = compute_call(url, "POST", f"/os-aggregates/{late['id']}/action", {"add_host": {"host": "h1"}})
        assert body["aggregate"]["hosts"] == ["h1"]
        wait_until(
            lambda: "Placement mirroring failed" in (processes.workdir / "worker.log").read_text(),
            what="the worker's warning",
        )
    finally:
        upstream_placement.start()
    wait_until(
        lambda: upstream_placement.aggregates_of(provider) == {keep["uuid"], late["uuid"]},
        timeout=90,
        what="the worker's retry after placement came back",
    )
