"""The same mirroring against Corral's own placement (served by live_server),
in keystone mode: the client authenticates with the token Corral issues for
its service user."""
import pytest

from aggregates import mirroring, placement_client
from aggregates.models import PlacementMirrorRequest, ReconciliationRun
from aggregates.placement_client import PlacementClient
from tests.mirroring.test_mirroring import add_host, create_aggregate

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def own_placement(live_server, settings, monkeypatch):
    settings.PLACEMENT_URL = live_server.url + "/placement"
    settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY = "", "keystone"
    monkeypatch.setattr(placement_client, "_service_token", {"value": None, "expires_at": None})
    return PlacementClient()  # speaks as the service user


def create_provider(client, node):
    response = client.request("POST", "/resource_providers", "1.20",
                              body={"uuid": str(node.uuid), "name": node.hypervisor_hostname})
    assert response.status_code == 200, response.text


def test_add_host_and_reconcile_against_our_placement(admin_api, make_host, own_placement):
    node = make_host("h1")
    create_provider(own_placement, node)
    aggregate = create_aggregate(admin_api, "agg1")
    add_host(admin_api, aggregate, "h1")
    assert PlacementMirrorRequest.objects.get().status == PlacementMirrorRequest.DONE
    assert own_placement.provider_aggregates(node.uuid)[0] == {aggregate["uuid"]}

    own_placement.change_provider_aggregates(node.uuid, remove=[aggregate["uuid"]])
    result = mirroring.reconcile(ReconciliationRun.COMMAND)
    assert (result.run.added, result.run.exit_code) == (1, 0)
    assert own_placement.provider_aggregates(node.uuid)[0] == {aggregate["uuid"]}
