"""The same mirroring against Corral's own placement (served by live_server),
in keystone mode: the client authenticates with the token Corral issues for
its service user."""

import pytest

from aggregates.mirroring import reconciler
from aggregates.mirroring.models import PlacementMirrorRequest, ReconciliationRun
from tests.plugins.api import add_host, create_aggregate

pytestmark = pytest.mark.django_db(transaction=True)


def test_add_host_and_reconcile_against_our_placement(admin_api, make_host, own_placement):
    node = make_host("h1")  # its provider is created when the registration commits
    aggregate = create_aggregate(admin_api, "agg1")
    add_host(admin_api, aggregate, "h1")
    assert PlacementMirrorRequest.objects.get().status == PlacementMirrorRequest.DONE
    assert own_placement.aggregates_of(node.uuid) == {aggregate["uuid"]}

    own_placement.set_aggregates(node.uuid, [])
    result = reconciler.reconcile(ReconciliationRun.COMMAND)
    assert (result.run.added, result.run.exit_code) == (1, 0)
    assert own_placement.aggregates_of(node.uuid) == {aggregate["uuid"]}
