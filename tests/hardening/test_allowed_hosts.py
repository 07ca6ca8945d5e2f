"""Issue 11, allowed hosts: with nothing set the server answers to the local
names and this machine's own only, so a forged ``Host`` header can neither
rewrite the service catalog nor reach an API; a refusal is a 400 in the
called API's own JSON format.

Django's test setup adds ``testserver`` to ALLOWED_HOSTS: these tests put
the default list back (``default_hosts``), or talk to a real server."""

import json
import os
import socket
import subprocess
import sys

import pytest
import requests
from django.test import Client

from aggregates.identity.models import Token
from aggregates.management.commands import serve_demo
from config import settings as corral_settings
from tests.hardening.conftest import ROOT, TOKENS, password_body
from tests.plugins.hostile_payloads import glance_format, keystone_format, nova_format, placement_format
from tests.plugins.upstream_placement import free_port
from tests.process_stack import Processes, wait_until

FORGED = "evil.example"


@pytest.fixture
def default_hosts(settings, monkeypatch):
    """ALLOWED_HOSTS as the settings compute it with nothing set (no testserver)."""
    monkeypatch.delenv("PUBLIC_URL", raising=False)
    settings.ALLOWED_HOSTS = corral_settings._default_allowed_hosts()
    settings.PUBLIC_URL = ""
    assert "testserver" not in settings.ALLOWED_HOSTS and "*" not in settings.ALLOWED_HOSTS
    return settings


API_CALLS = [
    ("get", "/compute/v2.1/os-aggregates", nova_format, "badRequest"),
    ("get", "/compute/", nova_format, "badRequest"),
    ("get", "/placement/resource_providers", placement_format, "errors"),
    ("post", "/placement/resource_providers", placement_format, "errors"),
    ("get", "/identity/v3", keystone_format, "error"),
    ("post", TOKENS, keystone_format, "error"),
    ("get", "/image/v2/images", glance_format, "message"),
]


@pytest.mark.parametrize("method, path, is_api_format, key", API_CALLS, ids=[f"{m} {p}" for m, p, *_ in API_CALLS])
def test_a_forged_host_is_refused_in_the_apis_own_format(db, default_hosts, method, path, is_api_format, key):
    client = Client(raise_request_exception=False)
    kwargs = {"data": "{}", "content_type": "application/json"} if method == "post" else {}
    response = getattr(client, method)(path, HTTP_HOST=FORGED, **kwargs)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert key in response.json() and is_api_format(response)
    assert FORGED not in response.content.decode()


def test_a_forged_host_gets_the_console_400_page(db, default_hosts):
    response = Client(raise_request_exception=False).get("/login/", HTTP_HOST=FORGED)
    assert response.status_code == 400


def test_the_catalog_never_names_a_forged_host(alice, default_hosts):  # noqa: F811 (fixture)
    body = json.dumps(password_body("alice", "alice-pw"))
    refused = Client().post(TOKENS, body, content_type="application/json", HTTP_HOST=FORGED)
    assert refused.status_code == 400
    assert FORGED not in refused.content.decode()
    assert not Token.objects.exists()
    for host in ("127.0.0.1:8000", "localhost", socket.gethostname()):
        answered = Client().post(TOKENS, body, content_type="application/json", HTTP_HOST=host)
        assert answered.status_code == 201, (host, answered.content)
        urls = [e["url"] for s in answered.json()["token"]["catalog"] for e in s["endpoints"]]
        assert urls and all(url.startswith(f"http://{host}/") for url in urls)


def test_with_a_public_url_the_catalog_comes_from_it(alice, default_hosts):  # noqa: F811 (fixture)
    default_hosts.PUBLIC_URL = "https://cloud.example.test"
    response = Client().post(
        TOKENS, json.dumps(password_body("alice", "alice-pw")), content_type="application/json", HTTP_HOST="localhost"
    )
    assert response.status_code == 201
    urls = [e["url"] for s in response.json()["token"]["catalog"] for e in s["endpoints"]]
    assert urls and all(url.startswith("https://cloud.example.test/") for url in urls)


# --- the default list ------------------------------------------------------------------------


def test_own_host_names_never_fail(monkeypatch):
    def broken(*_args, **_kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "gethostname", lambda: "box")
    monkeypatch.setattr(socket, "getfqdn", lambda name="": "box.example.lan")
    monkeypatch.setattr(socket, "getaddrinfo", broken)
    assert corral_settings.own_host_names() == ["box", "box.example.lan"]
    monkeypatch.setattr(socket, "gethostname", lambda: (_ for _ in ()).throw(OSError("no name")))
    assert corral_settings.own_host_names() == []


def test_own_host_names_hold_addresses_not_wildcards(monkeypatch):
    infos = [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", 0)),
        (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("fe80::1%eth0", 0, 0, 2)),
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("0.0.0.0", 0)),
    ]
    monkeypatch.setattr(socket, "gethostname", lambda: "box")
    monkeypatch.setattr(socket, "getfqdn", lambda name="": "box")
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: infos)
    assert corral_settings.own_host_names() == ["box", "box", "10.0.0.7", "[fe80::1]"]


def test_settings_load_when_the_host_name_does_not_resolve():
    code = (
        "import socket\n"
        "def broken(*a, **k): raise socket.gaierror(socket.EAI_NONAME, 'unknown')\n"
        "socket.getaddrinfo = broken\n"
        "socket.gethostbyaddr = broken\n"
        "import django, json; django.setup()\n"
        "from django.conf import settings; print(json.dumps(settings.ALLOWED_HOSTS))\n"
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("ALLOWED_HOSTS", "PUBLIC_URL")}
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    hosts = json.loads(result.stdout.strip().splitlines()[-1])
    assert hosts[:3] == ["127.0.0.1", "localhost", "[::1]"] and "*" not in hosts


# --- serve_demo ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, added",
    [
        ("127.0.0.1", None),
        ("localhost", None),
        ("10.20.30.40", "10.20.30.40"),
        ("demo.example.lan", "demo.example.lan"),
        ("[fd00::5]", "[fd00::5]"),
        ("0.0.0.0", None),
        ("[::]", None),
    ],
)
def test_serve_demo_answers_to_the_address_it_serves_on(default_hosts, host, added):
    before = list(default_hosts.ALLOWED_HOSTS)
    serve_demo.Command._answer_to(host)
    from django.conf import settings

    assert settings.ALLOWED_HOSTS == (before + [added] if added else before)


# --- a real server with nothing set ----------------------------------------------------------


@pytest.mark.processes
def test_a_real_server_with_default_settings_refuses_a_forged_host(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("ALLOWED_HOSTS", "PUBLIC_URL", "DATABASE_URL")}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'c.db'}",
        CORRAL_VAR_DIR=str(tmp_path),
        SECRET_KEY="hosts",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    processes = Processes(tmp_path, env)
    try:
        gunicorn = os.path.join(os.path.dirname(sys.executable), "gunicorn")
        processes.start("server", gunicorn, "-b", f"127.0.0.1:{port}", "-w", "1", "config.wsgi")
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: requests.get(url + "/compute/", timeout=2).status_code == 200, what="the server")
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            answered = requests.get(url + "/identity/v3", headers={"Host": host}, timeout=5)
            assert answered.status_code == 200, host
            assert answered.json()["version"]["links"][0]["href"].startswith(f"http://{host}/")
        for path, key in (("/compute/v2.1/flavors", "badRequest"), ("/identity/v3", "error")):
            refused = requests.get(url + path, headers={"Host": FORGED}, timeout=5)
            assert refused.status_code == 400, path
            assert key in refused.json() and FORGED not in refused.text
    finally:
        processes.stop_all()
