"""Upstream OpenStack Placement (openstack-placement 16.0.0, installed into
var/upstream-placement-venv on first use by tests/provision.py, or the
virtualenv named by UPSTREAM_PLACEMENT_VENV), run under gunicorn with a
SQLite file and noauth2 as /work/shared/conformance/README.md does; and
``free_port``, for any test that starts a server of its own."""

import os
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import requests

from tests import provision

CONFIG = """[api]
auth_strategy = noauth2
[oslo_policy]
enforce_new_defaults = False
[placement_database]
connection = sqlite:///{db}
"""
ADMIN_HEADERS = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39"}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class UpstreamPlacement:
    """An upstream placement-api under gunicorn on 127.0.0.1, with helpers
    that talk to it directly (not through Corral's client)."""

    def __init__(self, workdir, venv):
        self.workdir, self.venv = Path(workdir), venv
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None
        # Without PYTHONPATH: a checkout on it would put our "placement" before upstream's.
        inherited = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self.env = {**inherited, "OS_PLACEMENT_CONFIG_DIR": str(self.workdir)}
        (self.workdir / "placement.conf").write_text(CONFIG.format(db=self.workdir / "placement.db"))
        subprocess.run(
            [
                str(self.venv / "bin/placement-manage"),
                "--config-file",
                str(self.workdir / "placement.conf"),
                "db",
                "sync",
            ],
            cwd=self.workdir,
            env=self.env,
            check=True,
            capture_output=True,
            timeout=120,
        )

    def start(self):
        log = open(self.workdir / "server.log", "ab")
        self.process = subprocess.Popen(
            [
                str(self.venv / "bin/gunicorn"),
                "-b",
                f"127.0.0.1:{self.port}",
                "-w",
                "1",
                "--no-control-socket",
                "placement.wsgi.api:application",
            ],
            # Run from the work directory: from /work/main, "placement" would be ours.
            cwd=self.workdir,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                requests.get(self.url + "/", timeout=10)
                return
            except requests.RequestException:
                if self.process.poll() is not None:
                    break
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("upstream placement did not start:\n" + (self.workdir / "server.log").read_text()[-3000:])

    def stop(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None

    @property
    def running(self):
        return self.process is not None and self.process.poll() is None

    # --- direct calls ------------------------------------------------------

    def call(self, method, path, body=None):
        response = requests.request(method, self.url + path, json=body, headers=ADMIN_HEADERS, timeout=10)
        assert response.status_code < 300, response.text
        return response.json() if response.content else None

    def create_provider(self, provider_uuid=None, name=None):
        provider_uuid = str(provider_uuid or uuid.uuid4())
        return self.call("POST", "/resource_providers", {"uuid": provider_uuid, "name": name or provider_uuid})

    def aggregates_of(self, provider_uuid):
        return set(self.call("GET", f"/resource_providers/{provider_uuid}/aggregates")["aggregates"])

    def set_aggregates(self, provider_uuid, aggregates):
        generation = self.call("GET", f"/resource_providers/{provider_uuid}/aggregates")["resource_provider_generation"]
        self.call(
            "PUT",
            f"/resource_providers/{provider_uuid}/aggregates",
            {"aggregates": sorted(str(a) for a in aggregates), "resource_provider_generation": generation},
        )

    def provider_exists(self, provider_uuid):
        response = requests.get(f"{self.url}/resource_providers/{provider_uuid}", headers=ADMIN_HEADERS, timeout=10)
        assert response.status_code in (200, 404), response.text
        return response.status_code == 200

    def inventories_of(self, provider_uuid):
        return self.call("GET", f"/resource_providers/{provider_uuid}/inventories")["inventories"]

    def traits_of(self, provider_uuid):
        return set(self.call("GET", f"/resource_providers/{provider_uuid}/traits")["traits"])

    def delete_all_providers(self):
        providers = self.call("GET", "/resource_providers")["resource_providers"]
        for provider in providers:
            for consumer in self.call("GET", f"/resource_providers/{provider['uuid']}/allocations")["allocations"]:
                self.call("DELETE", f"/allocations/{consumer}")
        for provider in providers:
            self.call("DELETE", f"/resource_providers/{provider['uuid']}")


@pytest.fixture(scope="session")
def upstream_placement():
    """One upstream placement-api per test process (installed into var/ on
    first use), started when a test first asks for it."""
    with tempfile.TemporaryDirectory(prefix="upstream-placement-") as workdir:
        server = UpstreamPlacement(workdir, provision.upstream_placement_venv())
        server.start()
        try:
            yield server
        finally:
            server.stop()
