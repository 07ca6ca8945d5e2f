"""A small cloud for server tests: Corral's own placement in process, hosts
registered as agents do (their providers follow through the outbox after
commit: these tests commit), a flavor and an active public image."""

import uuid

import pytest

from aggregates import placement_client
from aggregates.servers.models import Server
from tests.cloud import Cloud, own_placement


@pytest.fixture
def cloud(transactional_db, settings, monkeypatch, system, make_host):
    own_placement(settings, monkeypatch)
    return Cloud(system, make_host)


def cli_body(flavor, image, name="vm1", zone=None, **extra):
    """The body `openstack server create --flavor F --image I [--availability-zone AZ] --nic none` sends."""
    server = {
        "name": name,
        "imageRef": str(image.id),
        "flavorRef": flavor.flavorid,
        "min_count": 1,
        "max_count": 1,
        "networks": "none",
        "block_device_mapping_v2": [
            {
                "uuid": str(image.id),
                "boot_index": 0,
                "source_type": "image",
                "destination_type": "local",
                "delete_on_termination": True,
            }
        ],
    }
    if zone is not None:
        server["availability_zone"] = zone
    server.update(extra)
    return {"server": server}


def no_servers_and_no_allocations():
    """Nothing was created: no Server row, no allocation in placement."""
    assert not Server.objects.exists()
    client = placement_client.client()
    for provider in client.list_providers():
        assert client.provider_usages(provider["uuid"]) in ({}, {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}), provider


def new_uuid():
    return str(uuid.uuid4())
