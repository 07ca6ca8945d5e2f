"""The placements a test can point Corral at: upstream's (the
``upstream_placement`` plugin), emptied after each test (``placement``),
Corral's own under the live server (``own_placement``), both in turn
(``any_placement``), and a port where nothing listens (``closed_port_url``)."""

import pytest

from aggregates.identity import service_token
from aggregates.placement_client import PlacementClient
from placement.standards import sync_standard_names
from tests.plugins.upstream_placement import ADMIN_HEADERS, UpstreamPlacement, free_port


@pytest.fixture
def placement(upstream_placement, settings):
    """Upstream placement, empty, with Corral's settings pointing at it."""
    settings.PLACEMENT_URL = upstream_placement.url
    settings.PLACEMENT_AUTH_TOKEN = "admin"
    yield upstream_placement
    if not upstream_placement.running:
        upstream_placement.start()
    upstream_placement.delete_all_providers()


class OwnPlacement:
    """Corral's own placement under live_server, in keystone mode (Corral
    authenticates as its service user), with UpstreamPlacement's helpers.
    "Stopping" it points Corral at a closed port instead."""

    def __init__(self, url, settings):
        self.url, self.settings = url, settings
        self.client = PlacementClient(base_url=url)
        self.running = True

    def stop(self):
        self.settings.PLACEMENT_URL, self.running = f"http://127.0.0.1:{free_port()}", False

    def start(self):
        self.settings.PLACEMENT_URL, self.running = self.url, True

    def _request(self, method, path, body=None):
        return self.client.request(method, path, ADMIN_HEADERS["OpenStack-API-Version"].split()[1], body=body)

    def call(self, method, path, body=None):
        response = self._request(method, path, body)
        assert response.status_code < 300, response.text
        return response.json() if response.content else None

    def provider_exists(self, provider_uuid):
        response = self._request("GET", f"/resource_providers/{provider_uuid}")
        assert response.status_code in (200, 404), response.text
        return response.status_code == 200


for helper in ("create_provider", "aggregates_of", "set_aggregates", "inventories_of", "traits_of"):
    setattr(OwnPlacement, helper, getattr(UpstreamPlacement, helper))


@pytest.fixture
def own_placement(live_server, settings, monkeypatch):
    """Corral's placement; Corral's settings point at it."""
    # Transactional tests empty the tables, standard names included.
    sync_standard_names()
    settings.PLACEMENT_URL = live_server.url + "/placement"
    settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY = "", "keystone"
    service_token.forget_service_token()
    return OwnPlacement(settings.PLACEMENT_URL, settings)


@pytest.fixture(params=["upstream", "ours"])
def any_placement(request):
    """Upstream placement, then Corral's own: the tests using it run against both."""
    return request.getfixturevalue("placement" if request.param == "upstream" else "own_placement")


@pytest.fixture
def closed_port_url():
    return f"http://127.0.0.1:{free_port()}"
