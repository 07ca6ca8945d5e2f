"""The stock CLI's tests (the ``openstack`` fixture is the plugin
tests/plugins/openstack_cli.py): Corral's own placement in process, read with
a fresh service token."""

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
