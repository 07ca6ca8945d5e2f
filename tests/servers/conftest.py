"""Server tests run on the one ``cloud`` (tests/plugins/cloud.py); helpers
that check nothing was left behind."""

import uuid

from aggregates import placement_client
from aggregates.servers.models import Server


def no_servers_and_no_allocations():
    """Nothing was created: no Server row, no allocation in placement."""
    assert not Server.objects.exists()
    client = placement_client.client()
    for provider in client.list_providers():
        assert client.provider_usages(provider["uuid"]) in ({}, {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}), provider


def new_uuid():
    return str(uuid.uuid4())
