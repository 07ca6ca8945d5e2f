"""A real Keystone 30.0.0 (tests/provision.py installs it into var/ on first
use, and makes its SQLite database and key repositories there once with
keystone-manage: db_sync, fernet_setup, credential_setup, bootstrap), one
per test session on a copy of them, served by gunicorn with
``keystone.wsgi.api:application``.

gunicorn starts with no command-line arguments (its options in a
``gunicorn.conf.py`` of the run's directory): Keystone's oslo.config parses
``sys.argv``, and a worker handed gunicorn's arguments exits and restarts
forever. Keystone finds its configuration through OS_KEYSTONE_CONFIG_FILES.

The ``keystone`` fixture gives the base URL, admin calls (users, projects,
role grants, token revocation) and ``freeze``/``thaw`` (SIGSTOP/SIGCONT);
``cloud`` is Corral in external-keystone mode against it (its live server,
its catalog registered there, Corral's service user and alice, a member, and
rita, a reader, of project demo)."""

import io
import os
import shutil
import signal
import subprocess
import time

import pytest
import requests
from django.core.cache import caches
from django.core.management import call_command
from django.test import override_settings

from aggregates.identity import keystone as external
from aggregates.identity import service_token
from placement.standards import sync_standard_names
from tests import provision
from tests.plugins.upstream_placement import free_port

ADMIN_PASSWORD = provision.KEYSTONE_ADMIN_PASSWORD
PASSWORD = "user-secret"
SERVICE_PASSWORD = "corral-service-secret"

GUNICORN_CONF = """\
bind = "127.0.0.1:{port}"
wsgi_app = "keystone.wsgi.api:application"
workers = 1
threads = 4
timeout = 120
"""


class Keystone:
    def __init__(self, url, process, workdir):
        self.url, self.process, self.workdir = url, process, workdir
        self._admin_token = None
        self._tokens = {}

    # --- admin calls ---------------------------------------------------------
    def token(self, username, password, project, domain="Default", fresh=False):
        """A project-scoped token (the session's, unless ``fresh``)."""
        key = (username, project, domain)
        if not fresh and key in self._tokens:
            return self._tokens[key]
        body = {
            "auth": {
                "identity": {
                    "methods": ["password"],
                    "password": {"user": {"name": username, "domain": {"name": domain}, "password": password}},
                },
                "scope": {"project": {"name": project, "domain": {"name": domain}}},
            }
        }
        response = requests.post(f"{self.url}/v3/auth/tokens", json=body, timeout=60)
        assert response.status_code == 201, response.text
        token = response.headers["X-Subject-Token"]
        if not fresh:
            self._tokens[key] = token
        return token

    def admin_token(self):
        if self._admin_token is None:
            self._admin_token = self.token("admin", ADMIN_PASSWORD, "admin")
        return self._admin_token

    def call(self, method, path, body=None, ok=(200, 201, 204)):
        response = requests.request(
            method, f"{self.url}/v3{path}", json=body, headers={"X-Auth-Token": self.admin_token()}, timeout=60
        )
        assert response.status_code in ok, f"{method} {path}: {response.status_code} {response.text}"
        return response.json() if response.content else None

    def id_of(self, kind, name):
        return self.call("GET", f"/{kind}s?name={name}")[f"{kind}s"][0]["id"]

    def ensure_project(self, name):
        found = self.call("GET", f"/projects?name={name}")["projects"]
        if found:
            return found[0]["id"]
        return self.call("POST", "/projects", {"project": {"name": name, "domain_id": "default"}})["project"]["id"]

    def ensure_role(self, name):
        found = self.call("GET", f"/roles?name={name}")["roles"]
        if found:
            return found[0]["id"]
        return self.call("POST", "/roles", {"role": {"name": name}})["role"]["id"]

    def ensure_user(self, name, project, *roles, password=PASSWORD):
        """A user with ``roles`` on ``project`` (both made when missing)."""
        project_id = self.ensure_project(project)
        found = self.call("GET", f"/users?name={name}")["users"]
        if found:
            user_id = found[0]["id"]
        else:
            body = {"user": {"name": name, "password": password, "domain_id": "default"}}
            user_id = self.call("POST", "/users", body)["user"]["id"]
        for role in roles:
            self.call("PUT", f"/projects/{project_id}/users/{user_id}/roles/{self.ensure_role(role)}")
        return user_id

    def revoke(self, token):
        requests.delete(
            f"{self.url}/v3/auth/tokens",
            headers={"X-Auth-Token": self.admin_token(), "X-Subject-Token": token},
            timeout=60,
        ).raise_for_status()

    # --- faults --------------------------------------------------------------
    def freeze(self):
        """Keystone accepts connections (the kernel's backlog) and never answers:
        gunicorn's master and its worker stopped (the worker alone serves)."""
        os.killpg(self.process.pid, signal.SIGSTOP)

    def thaw(self):
        os.killpg(self.process.pid, signal.SIGCONT)


@pytest.fixture(scope="session")
def keystone(tmp_path_factory):
    template = provision.keystone_template()
    venv = provision.keystone_venv()
    workdir = tmp_path_factory.mktemp("keystone")
    for name in ("keystone.db", "fernet-keys", "credential-keys"):
        source = template / name
        if source.is_dir():
            shutil.copytree(source, workdir / name)
        else:
            shutil.copy2(source, workdir / name)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    conf = workdir / "keystone.conf"
    conf.write_text(provision.KEYSTONE_TEMPLATE_CONF.format(dir=workdir))
    (workdir / "gunicorn.conf.py").write_text(GUNICORN_CONF.format(port=port))
    env = {**os.environ, "OS_KEYSTONE_CONFIG_FILES": str(conf)}
    log = open(workdir / "gunicorn.log", "w")
    process = subprocess.Popen(
        [str(venv / "bin/gunicorn")], cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        _wait_for(url, process, workdir)
        started = Keystone(url, process, workdir)
        # Bootstrap's identity endpoints name a placeholder: this run's URL.
        for endpoint in started.call("GET", "/endpoints")["endpoints"]:
            if endpoint["url"] == provision.KEYSTONE_PLACEHOLDER_URL:
                started.call("PATCH", f"/endpoints/{endpoint['id']}", {"endpoint": {"url": f"{url}/v3"}})
        yield started
    finally:
        os.killpg(process.pid, signal.SIGCONT)
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_for(url, process, workdir):
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"Keystone exited: {(workdir / 'gunicorn.log').read_text()[-3000:]}")
        try:
            if requests.get(f"{url}/v3", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    raise AssertionError(f"Keystone did not answer: {(workdir / 'gunicorn.log').read_text()[-3000:]}")


def corral_settings(keystone):
    return {
        "AUTH_STRATEGY": "external-keystone",
        "KEYSTONE_AUTH_URL": keystone.url,
        "KEYSTONE_SERVICE_USERNAME": "corral",
        "KEYSTONE_SERVICE_PASSWORD": SERVICE_PASSWORD,
        "KEYSTONE_SERVICE_PROJECT_NAME": "service",
        # a loaded machine's Keystone may take seconds; the fault test sets TIMEOUT
        "KEYSTONE_TIMEOUT": 15.0,
    }


@pytest.fixture(scope="session")
def keystone_cloud(keystone, live_server):
    """Once a session: Corral's service user (admin and service on project
    service), alice (member of demo), rita (reader of demo), and Corral's
    catalog registered (the command run twice: it is idempotent)."""
    keystone.ensure_user("corral", "service", "admin", "service", password=SERVICE_PASSWORD)
    keystone.ensure_user("alice", "demo", "member")
    keystone.ensure_user("rita", "demo", "reader")
    with override_settings(**corral_settings(keystone)):
        for _ in range(2):
            out = io.StringIO()
            call_command("register_keystone_catalog", public_url=live_server.url, stdout=out)
    assert "already registered" in out.getvalue() and "created" not in out.getvalue()
    external.forget_session()
    return live_server.url


@pytest.fixture
def cloud(keystone, keystone_cloud, transactional_db, settings):
    """Corral in external-keystone mode against ``keystone``; its base URL."""
    for name, value in corral_settings(keystone).items():
        setattr(settings, name, value)
    settings.PLACEMENT_URL = settings.PLACEMENT_AUTH_TOKEN = settings.PUBLIC_URL = ""
    settings.DEFAULT_SCHEDULE_ZONE = ""
    settings.SERVICE_DOWN_TIME = 3600  # the hosts registered once; the CLI's steps may take minutes on a loaded machine
    caches[external.CACHE_ALIAS].clear()
    service_token.forget_service_token()
    sync_standard_names()  # a transactional test starts from empty tables
    yield keystone_cloud
    caches[external.CACHE_ALIAS].clear()
