"""The stock CLI's tests (the ``openstack`` fixture is the plugin
tests/plugins/openstack_cli.py): Corral's own placement in process, and a
server's allocations read from it."""

import pytest

from aggregates.mirroring import placement_client
from placement.standards import sync_standard_names


@pytest.fixture
def own_placement(openstack, settings, monkeypatch):
    settings.PLACEMENT_URL, settings.PLACEMENT_AUTH_TOKEN = "", ""
    monkeypatch.setattr(placement_client, "_service_token", {"value": None, "expires_at": None})
    sync_standard_names()  # a transactional test starts from empty tables
    return placement_client.client()


def allocations(server_uuid):
    response = placement_client.client().request("GET", f"/allocations/{server_uuid}", "1.28")
    assert response.status_code == 200, response.text
    return response.json()["allocations"]
