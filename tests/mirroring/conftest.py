"""The mirroring tests run against the placements of tests/plugins/placements.py;
here: a compute host whose provider follows at once, and rows made due."""

from datetime import timedelta

import pytest
from django.utils import timezone

from aggregates.mirroring import applier
from aggregates.mirroring.models import ProviderSyncRequest


@pytest.fixture
def compute_host(make_host, placement):
    """Register a compute host: its node's provider is created in placement
    (uuid = node uuid, name = hypervisor hostname) by the registration's
    outbox row, applied here when the test's transaction never commits.
    Without ``with_provider`` the provider is deleted again behind Corral's back."""

    def _make(host, node=None, with_provider=True, **resources):
        compute_node = make_host(host, node, **resources)
        apply_provider_rows()
        if not with_provider:
            placement.call("DELETE", f"/resource_providers/{compute_node.uuid}")
        compute_node.refresh_from_db()
        return compute_node

    return _make


def apply_provider_rows():
    """Apply the pending resource provider rows now (in a test whose
    transaction never commits, nothing else does)."""
    applier.apply_rows(list(ProviderSyncRequest.objects.filter(status=ProviderSyncRequest.PENDING)))


def make_due(*rows):
    """Let the drain take these rows now rather than after their backoff."""
    for row in rows:
        type(row).objects.filter(pk=row.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
