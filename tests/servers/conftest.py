"""Server tests run on the one ``cloud`` (tests/plugins/cloud.py); helpers
that check nothing was left behind."""

import uuid

import pytest

from aggregates import placement_client
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body


def no_servers_and_no_allocations():
    """Nothing was created: no Server row, no allocation in placement."""
    assert not Server.objects.exists()
    client = placement_client.client()
    for provider in client.list_providers():
        assert client.provider_usages(provider["uuid"]) in ({}, {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}), provider


def new_uuid():
    return str(uuid.uuid4())


class Booter:
    """Boots a server as the stock CLI asks for one, on one host h1 (2.100 by default)."""

    def __init__(self, cloud):
        cloud.host("h1")
        self.flavor, self.image = cloud.flavor(), cloud.image()

    def body(self, name="vm1", **extra):
        return cli_body(self.flavor, self.image, name=name, **extra)

    def __call__(self, api, name="vm1", version="2.100", **extra):
        response = api.post("/servers", self.body(name, **extra), version=version)
        assert response.status_code == 202, response.content
        return response.json()["server"]["id"]


@pytest.fixture
def boot(cloud):
    return Booter(cloud)


def act(api, server_id, body, version="2.100"):
    """POST a server action (a body such as {"os-resetState": {...}})."""
    return api.post(f"/servers/{server_id}/action", body, version=version)
