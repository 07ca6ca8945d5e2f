"""Address tests run on the one ``cloud``; ``pool`` makes a pool through the service."""

import pytest

from aggregates.addressing import services as addressing
from tests.plugins.cloud import cli_body


class Booter:
    """Boots a server as the stock CLI and the SDK do (2.100), ``networks`` "auto" by default."""

    def __init__(self, cloud, api):
        self.cloud, self.api = cloud, api
        self.flavor, self.image = cloud.flavor(), cloud.image()

    def __call__(self, name="vm1", networks="auto", **extra):
        body = cli_body(self.flavor, self.image, name=name, networks=networks, **extra)
        response = self.api.post("/servers", body, version="2.100")
        assert response.status_code == 202, response.content
        server_id = response.json()["server"]["id"]
        return self.api.get(f"/servers/{server_id}", version="2.100").json()["server"]


@pytest.fixture
def boot(cloud, admin_api):
    return Booter(cloud, admin_api)


@pytest.fixture
def pool(system):
    def make(name="private", cidr="10.0.0.0/24", gateway="10.0.0.1", **extra):
        return addressing.create_pool(system, name=name, cidr=cidr, gateway=gateway, **extra)

    return make


def make_two_racks(cloud, pool, net2=("10.2.0.0/24", "")):
    """Hosts h1 and h2, each in an aggregate of its own (rack1, rack2) with a
    pool serving it alone (net1, and net2 of ``net2``'s CIDR and gateway)."""
    cloud.host("h1")
    cloud.host("h2")
    cloud.aggregate("rack1", ["h1"])
    cloud.aggregate("rack2", ["h2"])
    pool("net1", "10.1.0.0/24", "", scope="aggregate", aggregate="rack1")
    pool("net2", *net2, scope="aggregate", aggregate="rack2")


@pytest.fixture
def two_racks(cloud, pool):
    make_two_racks(cloud, pool)
