"""The README's run command, ``manage.py serve_demo [ADDR:]PORT``, as a real
process: it serves with gunicorn (not Django's development server) the
console, the APIs and the console's static files, prints the lines it
always printed, and one signal to its one process id (SIGTERM, or Ctrl-C's
SIGINT) stops everything it started."""

import os
import re
import signal
import subprocess

import pytest
import requests

from tests.plugins.upstream_placement import free_port
from tests.process_stack import PROJECT, VENV_BIN, Processes, alive, descendants, wait_until

pytestmark = pytest.mark.processes

DEMO_LOGIN = {
    "auth": {
        "identity": {
            "methods": ["password"],
            "password": {"user": {"name": "admin", "domain": {"id": "default"}, "password": "corral-demo"}},
        },
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}},
    }
}


@pytest.fixture
def start_demo(tmp_path):
    """Start ``manage.py serve_demo *args`` on the embedded default (SQLite, no broker): (process, url, log)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "DATABASE_", "WEB_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("CACHE_DRIVER", None), env.pop("ENABLED_FILTERS", None), env.pop("ALLOWED_HOSTS", None)
    processes = Processes(tmp_path, env)

    def start(addr, port):
        process = processes.start("serve_demo", str(VENV_BIN / "python"), "manage.py", "serve_demo", addr)
        url = f"http://127.0.0.1:{port}"
        log = tmp_path / "serve_demo.log"
        wait_until(lambda: "Corral is running at" in log.read_text(), 180, "serve_demo's ready line")
        # Ready when it says so: a script that reads the line may call at once.
        assert requests.get(url + "/healthcheck", timeout=10).text == "OK"
        return process, url, log

    try:
        yield start
    finally:
        processes.stop_all()


def check_serves(url, log):
    """gunicorn serves the API, the console and a static file; the run command printed its lines."""
    api = requests.get(url + "/compute/", timeout=10)
    assert api.headers["Server"] == "gunicorn"  # not the development server's WSGIServer
    token = requests.post(url + "/identity/v3/auth/tokens", json=DEMO_LOGIN, timeout=10)
    assert token.status_code == 201, token.text
    headers = {"X-Auth-Token": token.headers["X-Subject-Token"], "OpenStack-API-Version": "compute 2.41"}
    aggregates = requests.get(url + "/compute/v2.1/os-aggregates", headers=headers, timeout=10)
    assert aggregates.status_code == 200 and aggregates.json()["aggregates"], aggregates.text  # seeded
    # The demo's anti-affinity group "web": its three members booted, each on a host of its own, addressed.
    listed = requests.get(url + "/compute/v2.1/servers/detail?all_tenants=1", headers=headers, timeout=10)
    web = {s["name"]: s for s in listed.json()["servers"] if s["name"].startswith("web-")}
    assert sorted(web) == ["web-1", "web-2", "web-3"], listed.text
    assert {s["status"] for s in web.values()} == {"ACTIVE"}, [s.get("fault") for s in web.values()]
    assert len({s["OS-EXT-SRV-ATTR:host"] for s in web.values()}) == 3
    assert all(s["addresses"] for s in web.values())

    login = requests.get(url + "/login/", timeout=10)
    assert login.status_code == 200 and "<form" in login.text
    stylesheet = re.search(r'href="(/static/[^"]+\.css)"', login.text).group(1)
    css = requests.get(url + stylesheet, timeout=10)
    assert css.status_code == 200 and css.headers["Content-Type"].startswith("text/css") and css.content

    printed = log.read_text()
    assert f"Corral is running at {url}/" in printed
    assert f"compute API: {url}/compute/v2.1   identity: {url}/identity/v3   placement: {url}/placement" in printed
    assert "admin   / corral-demo   role admin on project admin" in printed


def check_stops(process, sent):
    """After ``sent()``, the process exits and none of the processes it started survives."""
    started = descendants(process.pid)
    assert len(started) >= 2  # the gunicorn master and its worker(s)
    sent()
    assert process.wait(30) == 0
    survivors = wait_until(lambda: [pid for pid in started if alive(pid)] == [] or None, 10, "every child to stop")
    assert survivors
    with pytest.raises(ProcessLookupError):  # nothing left in its process group either
        os.killpg(process.pid, 0)


def test_serve_demo_port_serves_with_gunicorn_and_one_sigterm_stops_everything(start_demo):
    port = free_port()
    process, url, log = start_demo(str(port), port)
    check_serves(url, log)
    check_stops(process, lambda: os.kill(process.pid, signal.SIGTERM))


def test_serve_demo_addr_port_serves_and_ctrl_c_stops_everything(start_demo):
    port = free_port()
    process, url, log = start_demo(f"127.0.0.1:{port}", port)
    check_serves(url, log)
    # Ctrl-C in a terminal: SIGINT to the foreground process group.
    check_stops(process, lambda: os.killpg(process.pid, signal.SIGINT))


KILLED_OUTRIGHT = """
import subprocess, sys, time
import django
django.setup()
from aggregates.management.commands.serve_demo import _die_with_parent
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], preexec_fn=_die_with_parent)
print(child.pid, flush=True)
time.sleep(120)
"""


def test_the_web_server_stops_when_serve_demo_is_killed_outright(tmp_path):
    """How serve_demo starts gunicorn (without the minute a whole run takes):
    a child started so stops when its parent dies by SIGKILL, which it cannot catch."""
    env = {**os.environ, "CORRAL_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "config.settings"}
    parent = subprocess.Popen(
        [str(VENV_BIN / "python"), "-c", KILLED_OUTRIGHT], cwd=PROJECT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.kill()
        parent.wait(10)
        assert wait_until(lambda: not alive(child), 10, "the child to stop")
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
