"""Speaking to Corral's APIs as its users do: a JSON client holding a real
token, users with a role in a project, and hosts registered as agents do."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from aggregates.hosts import services as host_services
from aggregates.identity import services as identity
from aggregates.identity.caller import Caller


class ApiClient:
    """Speaks JSON to Corral over its HTTP interface, with a token and an
    optional microversion."""

    def __init__(self, token=None, version=None, prefix="/compute/v2.1"):
        self.client = Client()
        self.token = token
        self.version = version
        self.prefix = prefix

    def _headers(self, version, headers):
        out = {}
        if self.token:
            out["X-Auth-Token"] = self.token
        version = version if version is not None else self.version
        if version:
            out["OpenStack-API-Version"] = f"compute {version}"
        out.update(headers or {})
        return out

    def request(self, method, path, body=None, version=None, headers=None, raw=None):
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        kwargs = {"headers": self._headers(version, headers)}
        if data is not None:
            kwargs["data"] = data
            kwargs["content_type"] = "application/json"
        absolute = path.startswith(("/compute", "/identity", "/placement"))
        url = path if absolute else self.prefix + path
        return getattr(self.client, method)(url, **kwargs)

    def get(self, path, **kw):
        return self.request("get", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("post", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("put", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("delete", path, **kw)

    def patch(self, path, body=None, **kw):
        return self.request("patch", path, body, **kw)

    def head(self, path, **kw):
        return self.request("head", path, **kw)


def make_user(username, role, project_name="demo"):
    user = get_user_model().objects.create_user(username=username, password=f"{username}-pw")
    project = identity.ensure_project(project_name)
    identity.grant(user, project, role)
    return user, project


@pytest.fixture
def token_for(db):
    def _token(role, username=None, project_name="demo"):
        user, project = make_user(username or f"{role}-user", role, project_name)
        token, _ = identity.issue_token(user, project)
        return token

    return _token


@pytest.fixture
def admin_api(token_for):
    return ApiClient(token_for("admin"))


@pytest.fixture
def reader_api(token_for):
    return ApiClient(token_for("reader"))


@pytest.fixture
def member_api(token_for):
    return ApiClient(token_for("member"))


@pytest.fixture
def anon_api(db):
    return ApiClient()


@pytest.fixture
def system():
    return Caller.system("tests")


@pytest.fixture
def make_host(db, system):
    """Register a compute host the way a host agent does."""

    def _make(host, node=None, vcpus=16, memory_mb=65536, local_gb=1000, running_vms=None, **kw):
        compute_node, _ = host_services.register_host(
            system, host, node, vcpus=vcpus, memory_mb=memory_mb, local_gb=local_gb, running_vms=running_vms, **kw
        )
        return compute_node

    return _make


# --- aggregates through the compute API (2.41: aggregates carry their uuid) ---


def create_aggregate(api, name, zone=None):
    body = {"aggregate": {"name": name, **({"availability_zone": zone} if zone else {})}}
    response = api.post("/os-aggregates", body, version="2.41")
    assert response.status_code == 200, response.content
    return response.json()["aggregate"]


def action(api, aggregate, name, host):
    return api.post(f"/os-aggregates/{aggregate['id']}/action", {name: {"host": host}}, version="2.41")


def add_host(api, aggregate, host):
    response = action(api, aggregate, "add_host", host)
    assert response.status_code == 200, response.content
    return response
