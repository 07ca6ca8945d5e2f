"""Moves run on the servers' small cloud (Corral's own placement in process),
with helpers to boot a server through the API and to act on it."""

import pytest

from aggregates.hosts.models import Service
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

V = "2.100"
ZERO = {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}


def boot(api, flavor, image, name="vm1", zone=None, version=V):
    response = api.post("/servers", cli_body(flavor, image, name=name, zone=zone), version=version)
    assert response.status_code == 202, response.content
    server = Server.objects.get(uuid=response.json()["server"]["id"])
    assert server.vm_state == "active", server.fault
    return server


def act(api, server, body, version=V):
    return api.post(f"/servers/{server.uuid}/action", body, version=version)


def shown(api, server, version=V):
    response = api.get(f"/servers/{server.uuid}", version=version)
    assert response.status_code == 200, response.content
    return response.json()["server"]


def usages(cloud, node):
    """A provider's usages, with zeros for the classes it has none of."""
    return {**ZERO, **cloud.usages(node.uuid)}


def force_down(host):
    Service.objects.filter(host=host, binary=Service.COMPUTE).update(forced_down=True)


def fault(response):
    body = response.json()
    ((name, detail),) = body.items()
    return response.status_code, name, detail["message"]


@pytest.fixture
def two_hosts(cloud):
    """Two equal hosts, a flavor of 2 VCPU / 1024 MB / 10 GB and an image."""
    nodes = {node.host: node for node in cloud.hosts("h1", "h2")}
    return nodes, cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
