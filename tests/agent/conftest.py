"""Host agent tests: each agent is a real process (``manage.py run_host_agent``)
on a loopback port, registering with and downloading from a live Corral
(pytest-django's live_server, with a transactional database)."""

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from aggregates.identity import services as identity
from tests.plugins.api import make_user

ROOT = Path(__file__).resolve().parents[2]
SECRET = "agent-test-secret"
START_TIMEOUT = 60


class Corral:
    """A live Corral and an admin token for it."""

    def __init__(self, url, token):
        self.url = url
        self.token = token
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": token, "Accept": "application/json"})

    def compute(self, method, path, **kwargs):
        headers = {"OpenStack-API-Version": "compute 2.53", **kwargs.pop("headers", {})}
        return self.session.request(method, f"{self.url}/compute/v2.1{path}", headers=headers, timeout=30, **kwargs)

    def upload_image(self, data, name="cirros"):
        response = self.session.post(
            f"{self.url}/image/v2/images",
            json={"name": name, "disk_format": "raw", "container_format": "bare", "visibility": "public"},
            timeout=30,
        )
        assert response.status_code == 201, response.text
        image_id = response.json()["id"]
        response = self.session.put(
            f"{self.url}/image/v2/images/{image_id}/file",
            data=data,
            headers={"Content-Type": "application/octet-stream"},
            timeout=120,
        )
        assert response.status_code == 204, response.text
        return image_id


class Agent:
    def __init__(self, process, host, url, cache_dir):
        self.process = process
        self.host = host
        self.url = url
        self.cache_dir = cache_dir

    def get(self, path, secret=SECRET, **kwargs):
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        return requests.get(self.url + path, headers=headers, timeout=10, **kwargs)

    def kill(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def sha512_of(path):
    digest = hashlib.sha512()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@pytest.fixture
def corral(live_server, transactional_db, settings, tmp_path):
    settings.AUTH_STRATEGY = "keystone"
    settings.IMAGE_STORE_DIR = tmp_path / "image-store"
    settings.AGENT_SHARED_SECRET = SECRET
    user, project = make_user("agent-admin", "admin", project_name="admin")
    token, _ = identity.issue_token(user, project)
    return Corral(live_server.url, token)


def agent_command(host, corral_url, cache_dir, *extra, listen="127.0.0.1:0"):
    return [
        sys.executable,
        str(ROOT / "manage.py"),
        "run_host_agent",
        "--host",
        host,
        "--listen",
        listen,
        "--cache-dir",
        str(cache_dir),
        "--corral-url",
        corral_url,
        *extra,
    ]


def start_agent_process(host, corral_url, token, cache_dir, *extra, env=None):
    """Start an agent and wait for its "listening on URL" line; returns (process, URL)."""
    environment = {**os.environ, "CORRAL_AGENT_TOKEN": token, "CORRAL_AGENT_SECRET": SECRET, **(env or {})}
    process = subprocess.Popen(
        agent_command(host, corral_url, cache_dir, *extra),
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    if not line or " listening on " not in line[0]:
        process.kill()
        _, err = process.communicate(timeout=10)
        raise AssertionError(f"agent {host} did not start: {line!r} {err[-2000:]}")
    # Keep the pipes drained so a chatty agent never blocks on them.
    for stream in (process.stdout, process.stderr):
        threading.Thread(target=lambda s=stream: [None for _ in s], daemon=True).start()
    return process, line[0].split(" listening on ", 1)[1].split(",", 1)[0].strip()


@pytest.fixture
def start_agent(corral, tmp_path):
    agents = []

    def _start(host, *extra, heartbeat=30.0):
        cache_dir = tmp_path / "cache" / host
        process, url = start_agent_process(
            host, corral.url, corral.token, cache_dir, "--heartbeat-interval", str(heartbeat), *extra
        )
        agent = Agent(process, host, url, cache_dir)
        agents.append(agent)
        return agent

    yield _start
    for agent in agents:
        agent.kill()


@pytest.fixture
def image_file_gets(monkeypatch):
    """Counts the downloads of image data Corral serves (GET .../file)."""
    from aggregates.images import services as image_services

    calls = []
    original = image_services.image_data

    def counting(caller, image_id):
        calls.append(str(image_id))
        return original(caller, image_id)

    monkeypatch.setattr(image_services, "image_data", counting)
    return calls


def wait_for(predicate, timeout=20, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")
