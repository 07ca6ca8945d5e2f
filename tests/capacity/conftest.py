"""Capacity by flavor on the servers' small cloud (Corral's own placement in
process): hosts of an exact size (no overcommit, nothing reserved), so that
every figure can be worked out by hand."""

import pytest

from aggregates.identity import services as identity
from tests.plugins.cloud import EXACT

V = "2.100"


@pytest.fixture(autouse=True)
def capacity_settings(settings):
    settings.ENABLED_FILTERS = [
        "ComputeFilter",
        "AggregateInstanceExtraSpecsFilter",
        "AggregateMultiTenancyIsolation",
        "AggregateTypeAffinityFilter",
    ]


@pytest.fixture
def three_hosts(cloud):
    """A, B in zone z1 and C in zone z2, each 4 VCPU / 8192 MB / 100 GB;
    aggregate ssd = A (ssd=true); flavors plain (1 VCPU, 2048 MB, 10 GB)
    and fast (1 VCPU, 1024 MB, 10 GB, confined to ssd=true)."""
    cloud.hosts("A", "B", "C", vcpus=4, memory_mb=8192, local_gb=100, **EXACT)
    cloud.aggregate("z1", ["A", "B"], zone="z1")
    cloud.aggregate("z2", ["C"], zone="z2")
    cloud.aggregate("ssd", ["A"], ssd="true")
    plain = cloud.flavor("plain", vcpus=1, ram=2048, disk=10)
    fast = cloud.flavor("fast", vcpus=1, ram=1024, disk=10, extra_specs={"aggregate_instance_extra_specs:ssd": "true"})
    return plain, fast


def capacity(api, query="", status=200):
    response = api.get(f"/os-capacity{'?' + query if query else ''}", version=V)
    assert response.status_code == status, response.content
    return response.json()


def figures(body, scope="availability_zones"):
    """{group name: {flavor name: (servers, limited_by)}}."""
    return {
        group["name"]: {f["name"]: (f["servers"], f["limited_by"]) for f in group["flavors"]}
        for group in body["capacity"][scope]
    }


def project_id(name):
    return identity.ensure_project(name).pk
