"""Fixtures running an upstream Placement service (openstack-placement 16.0.0,
installed into var/upstream-placement-venv on first use by tests/provision.py,
or the virtualenv named by UPSTREAM_PLACEMENT_VENV) with a SQLite file and
noauth2, as /work/shared/conformance/README.md does. Also Corral's own
placement (``own_placement``) and both in turn (``any_placement``)."""

import os
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from django.utils import timezone

from aggregates.identity import service_token
from aggregates.mirroring import applier
from aggregates.mirroring.models import ProviderSyncRequest
from aggregates.placement_client import PlacementClient
from placement.standards import sync_standard_names
from tests import provision

UPSTREAM_VENV = provision.upstream_placement_venv()  # installed into var/ on first use
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

    def __init__(self, workdir):
        self.workdir = Path(workdir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None
        self.env = {**os.environ, "OS_PLACEMENT_CONFIG_DIR": str(self.workdir)}
        (self.workdir / "placement.conf").write_text(CONFIG.format(db=self.workdir / "placement.db"))
        subprocess.run(
            [
                str(UPSTREAM_VENV / "bin/placement-manage"),
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
                str(UPSTREAM_VENV / "bin/gunicorn"),
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
    with tempfile.TemporaryDirectory(prefix="upstream-placement-") as workdir:
        server = UpstreamPlacement(workdir)
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def placement(upstream_placement, settings):
    """Upstream placement, empty, with Corral's settings pointing at it."""
    settings.PLACEMENT_URL = upstream_placement.url
    settings.PLACEMENT_AUTH_TOKEN = "admin"
    yield upstream_placement
    if not upstream_placement.running:
        upstream_placement.start()
    upstream_placement.delete_all_providers()


class OwnPlacement:
    """Corral's own placement under live_server, in keystone mode (Corral
    authenticates as its service user), with UpstreamPlacement's helpers.
    "Stopping" it points Corral at a closed port instead."""

    def __init__(self, url, settings):
        self.url, self.settings = url, settings
        self.client = PlacementClient(base_url=url)
        self.running = True

    def stop(self):
        self.settings.PLACEMENT_URL, self.running = f"http://127.0.0.1:{free_port()}", False

    def start(self):
        self.settings.PLACEMENT_URL, self.running = self.url, True

    def _request(self, method, path, body=None):
        return self.client.request(method, path, ADMIN_HEADERS["OpenStack-API-Version"].split()[1], body=body)

    def call(self, method, path, body=None):
        response = self._request(method, path, body)
        assert response.status_code < 300, response.text
        return response.json() if response.content else None

    def provider_exists(self, provider_uuid):
        response = self._request("GET", f"/resource_providers/{provider_uuid}")
        assert response.status_code in (200, 404), response.text
        return response.status_code == 200


for helper in ("create_provider", "aggregates_of", "set_aggregates", "inventories_of", "traits_of"):
    setattr(OwnPlacement, helper, getattr(UpstreamPlacement, helper))


@pytest.fixture
def own_placement(live_server, settings, monkeypatch):
    """Corral's placement; Corral's settings point at it."""
    # Transactional tests empty the tables, standard names included.
    sync_standard_names()
    settings.PLACEMENT_URL = live_server.url + "/placement"
    settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY = "", "keystone"
    service_token.forget_service_token()
    return OwnPlacement(settings.PLACEMENT_URL, settings)


@pytest.fixture(params=["upstream", "ours"])
def any_placement(request):
    """Upstream placement, then Corral's own: the tests using it run against both."""
    return request.getfixturevalue("placement" if request.param == "upstream" else "own_placement")


@pytest.fixture
def compute_host(make_host, placement):
    """Register a compute host: its node's provider is created in placement
    (uuid = node uuid, name = hypervisor hostname) by the registration's
    outbox row, applied here when the test's transaction never commits.
    Without ``with_provider`` the provider is deleted again behind Corral's back."""

    def _make(host, node=None, with_provider=True, **resources):
        compute_node = make_host(host, node, **resources)
        apply_provider_rows()
        if not with_provider:
            placement.call("DELETE", f"/resource_providers/{compute_node.uuid}")
        compute_node.refresh_from_db()
        return compute_node

    return _make


def apply_provider_rows():
    """Apply the pending resource provider rows now (in a test whose
    transaction never commits, nothing else does)."""
    applier.apply_rows(list(ProviderSyncRequest.objects.filter(status=ProviderSyncRequest.PENDING)))


@pytest.fixture
def closed_port_url():
    return f"http://127.0.0.1:{free_port()}"


def make_due(*rows):
    """Let the drain take these rows now rather than after their backoff."""
    for row in rows:
        type(row).objects.filter(pk=row.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
