"""``manage.py sync_placement_aggregates`` against upstream Placement."""

import io
import uuid

import pytest
from django.core.management import call_command

from aggregates.host_aggregates.models import Aggregate, AggregateHost
from aggregates.hosts.models import ComputeNode
from aggregates.mirroring import reconciler
from aggregates.mirroring.models import PlacementMirrorRequest, ReconciliationRun
from aggregates.placement_client import GenerationConflict, PlacementClient, PlacementError

pytestmark = pytest.mark.django_db


def sync(*args):
    """Run the command; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("sync_placement_aggregates", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit:
        code = exit.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def aggregate_with(compute_host):
    """An aggregate whose members are written directly (nothing mirrored)."""

    def _make(name, *hosts, with_provider=True):
        aggregate = Aggregate.objects.create(name=name)
        for host in hosts:
            if not ComputeNode.objects.filter(host=host).exists():
                compute_host(host, with_provider=with_provider)
            AggregateHost.objects.create(aggregate=aggregate, host=host)
        return aggregate

    return _make


def provider_of(host):
    return str(ComputeNode.objects.get(host=host).uuid)


def test_adds_the_missing_associations(aggregate_with, placement):
    aggregate = aggregate_with("agg1", "h1", "h2")
    placement.set_aggregates(provider_of("h2"), [aggregate.uuid])
    code, out, err = sync("--verbose")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Checking the resource providers of compute nodes"
    start = lines.index("Filling in missing placement aggregates")
    assert lines[start + 1] == "Processing aggregate: agg1"
    assert f"Successfully added host (h1) and provider ({provider_of('h1')}) to aggregate ({aggregate.uuid})." in lines
    assert f"Host (h2) and provider ({provider_of('h2')}) are already in aggregate ({aggregate.uuid})." in lines
    assert lines[-1].startswith("Placement aggregates: 1 missing, 0 stale") and "1 added" in lines[-1]
    assert placement.aggregates_of(provider_of("h1")) == {str(aggregate.uuid)}
    run = ReconciliationRun.objects.get()
    assert (run.trigger, run.added, run.exit_code) == ("command", 1, 0)


def test_without_verbose_prints_only_the_summary(aggregate_with, placement):
    aggregate_with("agg1", "h1")
    code, out, _ = sync()
    assert code == 0
    assert out.splitlines() == [
        "Placement resource providers: 0 created, 0 inventories updated, 0 disabled traits changed.",
        "Placement aggregates: 1 missing, 0 stale, 0 on unknown providers, 0 node(s) without provider; "
        "1 added, 0 removed, 0 failed.",
    ]


def test_dry_run_shows_the_drift_and_changes_nothing(aggregate_with, compute_host, placement):
    aggregate = aggregate_with("agg1", "h1")
    compute_host("gone")
    placement.set_aggregates(provider_of("gone"), [aggregate.uuid])
    pending = PlacementMirrorRequest.objects.create(
        aggregate_uuid=aggregate.uuid, aggregate_name="agg1", host="h1", action=PlacementMirrorRequest.ADD
    )
    code, out, _ = sync("--dry-run", "--prune")
    assert code == 0
    assert f"Would add host (h1) and provider ({provider_of('h1')}) to aggregate ({aggregate.uuid})." in out
    assert f"Would remove host (gone) and provider ({provider_of('gone')}) from aggregate ({aggregate.uuid})." in out
    assert "(dry run: nothing changed)" in out
    assert placement.aggregates_of(provider_of("h1")) == set()
    assert placement.aggregates_of(provider_of("gone")) == {str(aggregate.uuid)}
    assert ReconciliationRun.objects.get().dry_run
    pending.refresh_from_db()
    assert pending.status == PlacementMirrorRequest.PENDING


def test_stale_associations_stay_without_prune_and_go_with_it(aggregate_with, compute_host, placement):
    aggregate = aggregate_with("agg1", "h1")
    compute_host("gone")
    foreign = str(uuid.uuid4())
    placement.set_aggregates(provider_of("gone"), [aggregate.uuid, foreign])
    shared = placement.create_provider(name="shared-storage")["uuid"]
    placement.set_aggregates(shared, [aggregate.uuid])

    code, out, _ = sync("--verbose")
    assert code == 0
    assert "in placement only; --prune removes them" in out
    assert "(run with --prune to remove the stale ones)" in out
    assert placement.aggregates_of(provider_of("gone")) == {str(aggregate.uuid), foreign}

    code, out, _ = sync("--prune", "--verbose")
    assert code == 0
    assert f"Removed host (gone) and provider ({provider_of('gone')}) from aggregate ({aggregate.uuid})." in out
    assert f"Provider ({shared}, named shared-storage) is in aggregate ({aggregate.uuid})" in out
    assert placement.aggregates_of(provider_of("gone")) == {foreign}
    assert placement.aggregates_of(shared) == {str(aggregate.uuid)}
    assert ReconciliationRun.objects.first().removed == 1


@pytest.mark.django_db(transaction=True)
def test_applies_pending_mirror_requests_first(admin_api, compute_host, placement):
    """Embedded mode has no beat: the command drains the outbox too."""
    node = compute_host("h1")
    response = admin_api.post("/os-aggregates", {"aggregate": {"name": "agg1"}})
    aggregate_id = response.json()["aggregate"]["id"]
    placement.stop()
    admin_api.post(f"/os-aggregates/{aggregate_id}/action", {"add_host": {"host": "h1"}})
    placement.start()
    row = PlacementMirrorRequest.objects.get()
    assert row.status == PlacementMirrorRequest.PENDING  # its backoff is not over
    code, out, _ = sync()
    assert code == 0
    assert "Applied pending placement mirror requests: 1 done, 0 still pending, 0 failed." in out
    row.refresh_from_db()
    assert row.status == PlacementMirrorRequest.DONE
    assert placement.aggregates_of(node.uuid) == {str(Aggregate.objects.get().uuid)}
    assert "0 missing" in out


def test_creates_the_missing_provider_of_a_member_host(aggregate_with, placement):
    aggregate_with("agg1", "h1")
    lost = aggregate_with("agg2", "lost", with_provider=False)
    code, out, err = sync()
    assert (code, err) == (0, "")
    assert "Placement resource providers: 1 created, 0 inventories updated" in out
    assert placement.inventories_of(provider_of("lost"))["VCPU"]["total"] == 16
    assert placement.aggregates_of(provider_of("lost")) == {str(lost.uuid)}
    run = ReconciliationRun.objects.get()
    assert (run.providers_created, run.added, run.exit_code) == (1, 2, 0)


def test_dry_run_exits_6_when_a_host_has_no_provider(aggregate_with, placement):
    aggregate_with("agg1", "h1")
    aggregate_with("agg2", "lost", with_provider=False)
    code, out, err = sync("--dry-run")
    assert code == 6
    assert (
        "Unable to find matching resource provider record in placement with uuid for the following hosts: "
        f"(lost={provider_of('lost')})."
    ) in err
    assert "Would create the resource provider of compute node lost" in out
    assert not placement.provider_exists(provider_of("lost"))


def test_exit_3_when_the_missing_provider_cannot_be_created(aggregate_with, placement, monkeypatch):
    aggregate_with("agg1", "h1")
    aggregate_with("agg2", "lost", with_provider=False)

    def refused(self, provider_uuid, name):
        raise PlacementError("Creating resource provider lost failed with HTTP 500: boom", status=500)

    monkeypatch.setattr(PlacementClient, "create_provider", refused)
    code, _, err = sync()
    assert code == 3
    assert f"Failed updating the resource provider of compute node lost (host lost, uuid {provider_of('lost')})" in err
    assert placement.aggregates_of(provider_of("h1")) != set()  # the others were still done


def test_exit_5_when_a_member_host_has_no_compute_node(aggregate_with, placement):
    aggregate_with("agg1", "h1")
    ComputeNode.objects.filter(host="h1").delete()
    code, _, err = sync()
    assert code == 5
    assert "Unable to find matching compute node records for the following hosts;" in err
    assert err.rstrip().endswith("Missing: h1")


def test_exit_6_wins_over_5(aggregate_with, placement):
    aggregate_with("agg1", "h1")
    aggregate_with("agg2", "lost", with_provider=False)
    ComputeNode.objects.filter(host="h1").delete()
    assert sync("--dry-run")[0] == 6


def test_exit_2_when_placement_cannot_be_read(aggregate_with, placement, settings, closed_port_url):
    aggregate_with("agg1", "h1")
    settings.PLACEMENT_URL = closed_port_url
    code, out, err = sync()
    assert code == 2
    assert "An error occurred reading resource providers and their aggregates from placement. Error:" in err
    assert "Unable to communicate with the Placement API" in err
    assert ReconciliationRun.objects.get().exit_code == 2


def test_exit_3_when_an_update_fails_and_the_others_are_still_made(aggregate_with, placement, monkeypatch):
    aggregate = aggregate_with("agg1", "h1", "h2")
    change = PlacementClient.update_provider_aggregates

    def conflicted_for_h1(self, provider_uuid, **kw):
        if str(provider_uuid) == provider_of("h1"):
            raise GenerationConflict("provider kept changing", status=409, code="placement.concurrent_update")
        return change(self, provider_uuid, **kw)

    monkeypatch.setattr(PlacementClient, "update_provider_aggregates", conflicted_for_h1)
    code, _, err = sync()
    assert code == 3
    assert (
        f"Failed updating provider aggregates for host (h1), provider ({provider_of('h1')}) and aggregate "
        f"({aggregate.uuid}). Error: provider kept changing"
    ) in err
    assert placement.aggregates_of(provider_of("h2")) == {str(aggregate.uuid)}
    assert ReconciliationRun.objects.get().failures == 1


def test_exit_255_on_an_unexpected_error(placement, monkeypatch):
    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(reconciler, "drift_report", broken)
    code, _, err = sync()
    assert code == 255
    assert "An error has occurred:" in err and "RuntimeError: boom" in err
    run = ReconciliationRun.objects.get()
    assert run.exit_code == 255 and run.finished_at is not None
