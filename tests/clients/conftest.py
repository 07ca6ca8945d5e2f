"""The stock CLI's tests (the ``openstack`` fixture is the plugin
tests/plugins/openstack_cli.py): Corral's own placement in process, and a
server's allocations read from it."""

import pytest

from aggregates import placement_client
from aggregates.identity import service_token
from placement.standards import sync_standard_names


@pytest.fixture
def own_placement(openstack, settings):
    settings.PLACEMENT_URL, settings.PLACEMENT_AUTH_TOKEN = "", ""
    service_token.forget_service_token()
    sync_standard_names()  # a transactional test starts from empty tables
    return placement_client.client()


def allocations(server_uuid):
    return placement_client.client().consumer_allocations(server_uuid)["allocations"]
