"""Host aggregate changes show up in placement (upstream Placement, Celery eager)."""

import logging
import uuid

import pytest
from django_celery_beat.models import PeriodicTask

from aggregates.host_aggregates.models import AggregateHost
from aggregates.hosts.models import ComputeNode
from aggregates.hosts.services import delete_service
from aggregates.mirroring import applier, drift, reconciler, tasks
from aggregates.mirroring.models import PlacementMirrorRequest, ProviderSyncRequest, ReconciliationRun
from aggregates.placement_client import PlacementClient
from config import celery_app
from tests.mirroring.conftest import make_due
from tests.plugins.api import action, add_host, create_aggregate

Request = PlacementMirrorRequest
transactional = pytest.mark.django_db(transaction=True)


def only_row():
    rows = list(Request.objects.all())
    assert len(rows) == 1, rows
    return rows[0]


# --- mirroring through the API -------------------------------------------------


@transactional
def test_add_host_puts_the_aggregate_on_the_hosts_provider(admin_api, compute_host, placement):
    node = compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    add_host(admin_api, aggregate, "h1")
    assert placement.aggregates_of(node.uuid) == {aggregate["uuid"]}
    row = only_row()
    assert (row.action, row.status, row.host, row.aggregate_name) == (Request.ADD, Request.DONE, "h1", "agg1")
    assert str(row.aggregate_uuid) == aggregate["uuid"] and row.aggregate_id == aggregate["id"]
    assert row.applied_at is not None and row.attempts == 0
    assert row.nodes == [[str(node.uuid), "h1"]]


@transactional
def test_remove_host_takes_it_off_and_keeps_other_aggregates(admin_api, compute_host, placement):
    node = compute_host("h1")
    kept, left = create_aggregate(admin_api, "kept"), create_aggregate(admin_api, "left")
    foreign = str(uuid.uuid4())
    placement.set_aggregates(node.uuid, [foreign])
    add_host(admin_api, kept, "h1")
    add_host(admin_api, left, "h1")
    assert action(admin_api, left, "remove_host", "h1").status_code == 200
    assert placement.aggregates_of(node.uuid) == {kept["uuid"], foreign}
    assert Request.objects.filter(action=Request.REMOVE, status=Request.DONE).count() == 1


@transactional
def test_deleting_the_compute_service_takes_its_providers_out(admin_api, compute_host, placement, system):
    node = compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    add_host(admin_api, aggregate, "h1")
    delete_service(system, node.service_id)
    assert not ComputeNode.objects.exists()
    assert Request.objects.get(action=Request.REMOVE).status == Request.DONE
    assert ProviderSyncRequest.objects.get(action=ProviderSyncRequest.DELETE).status == Request.DONE
    assert not placement.provider_exists(node.uuid)


@transactional
def test_every_node_of_a_multi_node_host_is_mirrored(admin_api, compute_host, placement):
    by_uuid = compute_host("ironic", "node-a")
    by_name = compute_host("ironic", "node-b", with_provider=False)
    other_uuid = placement.create_provider(name="node-b")["uuid"]  # found by name, not by uuid
    aggregate = create_aggregate(admin_api, "baremetal")
    add_host(admin_api, aggregate, "ironic")
    assert placement.aggregates_of(by_uuid.uuid) == {aggregate["uuid"]}
    assert placement.aggregates_of(other_uuid) == {aggregate["uuid"]}
    assert str(by_name.uuid) != other_uuid
    assert only_row().status == Request.DONE


@transactional
def test_creating_and_updating_aggregates_leaves_placement_alone(admin_api, compute_host, placement):
    node = compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1", zone="az1")
    assert admin_api.put(f"/os-aggregates/{aggregate['id']}", {"aggregate": {"name": "agg2"}}).status_code == 200
    response = admin_api.post(
        f"/os-aggregates/{aggregate['id']}/action", {"set_metadata": {"metadata": {"ssd": "true"}}}
    )
    assert response.status_code == 200
    assert not Request.objects.exists()
    assert placement.aggregates_of(node.uuid) == set()


@transactional
def test_deleting_an_aggregate_clears_its_leftovers_from_compute_nodes_only(admin_api, compute_host, placement):
    node = compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    shared_storage = placement.create_provider(name="shared-storage")["uuid"]
    placement.set_aggregates(node.uuid, [aggregate["uuid"]])  # a leftover: h1 is no member
    placement.set_aggregates(shared_storage, [aggregate["uuid"]])  # put there by the operator
    assert admin_api.delete(f"/os-aggregates/{aggregate['id']}").status_code == 200
    assert placement.aggregates_of(node.uuid) == set()
    assert placement.aggregates_of(shared_storage) == {aggregate["uuid"]}
    row = only_row()
    assert (row.action, row.status, row.aggregate_name) == (Request.DELETE, Request.DONE, "agg1")


@transactional
def test_refused_change_writes_no_outbox_row(admin_api, compute_host, placement):
    compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    add_host(admin_api, aggregate, "h1")
    assert action(admin_api, aggregate, "add_host", "h1").status_code == 409
    assert admin_api.delete(f"/os-aggregates/{aggregate['id']}").status_code == 400
    assert Request.objects.count() == 1


# --- failures: the operator's request succeeds, the row stays pending ----------------


@transactional
def test_placement_down_during_add_host(admin_api, compute_host, placement, caplog):
    node = compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    placement.stop()
    with caplog.at_level(logging.WARNING, logger="aggregates.mirroring"):
        response = action(admin_api, aggregate, "add_host", "h1")
    assert response.status_code == 200
    assert response.json()["aggregate"]["hosts"] == ["h1"]
    (warning,) = [r for r in caplog.records if r.name == "aggregates.mirroring" and r.levelno >= logging.WARNING]
    assert warning.levelno == logging.WARNING
    assert "adding host h1 to aggregate agg1" in warning.getMessage()
    assert "Unable to communicate with the Placement API" in warning.getMessage()
    row = only_row()
    assert (row.status, row.attempts) == (Request.PENDING, 1)
    assert "Unable to communicate" in row.last_error and row.next_attempt_at > row.updated_at

    placement.start()
    assert applier.drain_pending() == {Request.DONE: 0, Request.PENDING: 0, Request.FAILED: 0}  # not due yet
    make_due(row)
    assert applier.drain_pending()[Request.DONE] == 1
    row.refresh_from_db()
    assert (row.status, row.last_error) == (Request.DONE, "")
    assert placement.aggregates_of(node.uuid) == {aggregate["uuid"]}


@transactional
def test_provider_not_found_keeps_the_row_pending_until_it_exists(admin_api, compute_host, placement, caplog):
    node = compute_host("h1", with_provider=False)
    aggregate = create_aggregate(admin_api, "agg1")
    with caplog.at_level(logging.WARNING, logger="aggregates.mirroring"):
        add_host(admin_api, aggregate, "h1")
    assert "placement has no resource provider for compute node(s) h1" in caplog.text
    row = only_row()
    assert row.status == Request.PENDING
    placement.create_provider(node.uuid, "h1")
    make_due(row)
    applier.drain_pending()
    assert placement.aggregates_of(node.uuid) == {aggregate["uuid"]}


@transactional
def test_remove_host_without_provider_has_nothing_to_take_away(admin_api, compute_host, placement):
    compute_host("h1", with_provider=False)
    aggregate = create_aggregate(admin_api, "agg1")
    add_host(admin_api, aggregate, "h1")
    assert action(admin_api, aggregate, "remove_host", "h1").status_code == 200
    assert Request.objects.get(action=Request.REMOVE).status == Request.DONE
    assert Request.objects.get(action=Request.ADD).status == Request.PENDING


@transactional
def test_gives_up_after_the_configured_attempts(admin_api, compute_host, placement, settings, caplog):
    settings.PLACEMENT_MIRROR_MAX_ATTEMPTS = 2
    compute_host("h1", with_provider=False)
    add_host(admin_api, create_aggregate(admin_api, "agg1"), "h1")
    row = only_row()
    make_due(row)
    applier.drain_pending()
    row.refresh_from_db()
    assert (row.status, row.attempts) == (Request.FAILED, 2)
    assert "1 of 1 request(s) not applied (0 will be retried, 1 given up)" in caplog.text
    make_due(row)
    assert applier.drain_pending() == {Request.DONE: 0, Request.PENDING: 0, Request.FAILED: 0}


@pytest.fixture
def broker_unreachable(closed_port_url, monkeypatch):
    """Celery not eager, its broker a closed port (Celery reads the
    CELERY_BROKER_URL variable before its configuration, so set both)."""
    saved = {key: celery_app.conf[key] for key in ("task_always_eager", "broker_url")}
    dead_broker = closed_port_url.replace("http", "redis") + "/15"
    monkeypatch.setenv("CELERY_BROKER_URL", dead_broker)
    celery_app.conf.update(task_always_eager=False, broker_url=dead_broker)
    forget_connections()
    yield
    celery_app.conf.update(saved)
    forget_connections()


def forget_connections():
    """Make Celery connect afresh, to the broker now configured."""
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@transactional
def test_broker_unreachable_leaves_the_row_for_the_drain(
    admin_api, compute_host, placement, broker_unreachable, caplog
):
    node = compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    with caplog.at_level(logging.WARNING, logger="aggregates.mirroring"):
        response = action(admin_api, aggregate, "add_host", "h1")
    assert response.status_code == 200
    assert "Could not queue placement mirror request" in caplog.text
    row = only_row()
    assert (row.status, row.attempts) == (Request.PENDING, 0)
    assert placement.aggregates_of(node.uuid) == set()
    tasks.drain_mirror_requests.apply()  # what the worker runs once the broker is back
    row.refresh_from_db()
    assert row.status == Request.DONE
    assert placement.aggregates_of(node.uuid) == {aggregate["uuid"]}


@transactional
def test_a_late_row_applies_the_current_membership(admin_api, compute_host, placement):
    """An "add" applied after the host left again must not leave it in placement."""
    node = compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    placement.stop()
    add_host(admin_api, aggregate, "h1")
    assert action(admin_api, aggregate, "remove_host", "h1").status_code == 200
    placement.start()
    placement.set_aggregates(node.uuid, [aggregate["uuid"]])
    add_row = Request.objects.get(action=Request.ADD)
    assert applier.apply_request(add_row.pk).status == Request.DONE
    assert placement.aggregates_of(node.uuid) == set()


# --- drift report -----------------------------------------------------------------


@transactional
def test_drift_report(admin_api, compute_host, placement):
    in_sync, missing, stale = compute_host("in-sync"), compute_host("missing"), compute_host("stale")
    compute_host("no-provider", with_provider=False)
    aggregate = create_aggregate(admin_api, "agg1")
    untouched = create_aggregate(admin_api, "agg2")
    for host in ("in-sync", "missing", "no-provider"):
        add_host(admin_api, aggregate, host)
    unknown = placement.create_provider(name="shared-storage")["uuid"]
    placement.set_aggregates(missing.uuid, [])
    placement.set_aggregates(stale.uuid, [aggregate["uuid"]])
    placement.set_aggregates(unknown, [aggregate["uuid"]])

    report = drift.drift_report(PlacementClient())
    assert report.placement_requests == 1 + 2  # one listing, one member_of per aggregate
    first, second = report.aggregates
    assert first.aggregate.name == "agg1" and first.drifted
    assert [(a.host, a.provider_uuid) for a in first.in_sync] == [("in-sync", str(in_sync.uuid))]
    assert [(a.host, a.provider_uuid) for a in first.missing] == [("missing", str(missing.uuid))]
    assert [(a.host, a.provider_uuid) for a in first.stale] == [("stale", str(stale.uuid))]
    assert first.unknown_providers == [{"uuid": unknown, "name": "shared-storage"}]
    no_provider_node = ComputeNode.objects.get(host="no-provider")
    assert first.hosts_without_provider == [("no-provider", str(no_provider_node.uuid))]
    assert second.aggregate.uuid == uuid.UUID(untouched["uuid"]) and not second.drifted


# --- scale: requests do not grow with correct associations ------------------------------


@transactional
def test_reconcile_reads_once_per_aggregate_and_writes_per_drifted_association(admin_api, compute_host, placement):
    hosts = [compute_host(f"h{i}") for i in range(12)]
    aggregates = [create_aggregate(admin_api, f"agg{i}") for i in range(3)]
    for index, node in enumerate(hosts):
        add_host(admin_api, aggregates[index % 3], node.host)
    in_sync = reconciler.reconcile(ReconciliationRun.COMMAND)
    assert in_sync.run.placement_requests == 1 + 3
    assert (in_sync.run.added, in_sync.run.exit_code) == (0, 0)

    drifted = hosts[:2]
    for node in drifted:
        placement.set_aggregates(node.uuid, [])
    repaired = reconciler.reconcile(ReconciliationRun.COMMAND)
    # A GET and a PUT per repair, and the providers whose generation moved
    # behind Corral's back have their inventories and traits read.
    assert repaired.run.placement_requests == 1 + 3 + 2 * len(drifted) + 2 * len(drifted)
    assert repaired.run.added == 2
    assert placement.aggregates_of(drifted[0].uuid) == {aggregates[0]["uuid"]}


# --- periodic tasks ---------------------------------------------------------------------


@pytest.mark.django_db
def test_schedules_are_in_the_database():
    reconcile = PeriodicTask.objects.get(task="corral.mirroring.reconcile_placement_aggregates")
    assert (reconcile.interval.every, reconcile.interval.period, reconcile.enabled) == (10, "minutes", True)
    drain = PeriodicTask.objects.get(task="corral.mirroring.drain_mirror_requests")
    assert (drain.interval.every, drain.interval.period) == (1, "minutes")


@transactional
def test_scheduled_reconciliation_records_a_run(admin_api, compute_host, placement):
    node = compute_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    AggregateHost.objects.create(aggregate_id=aggregate["id"], host="h1")  # drift: never mirrored
    run = ReconciliationRun.objects.get(pk=tasks.reconcile_placement_aggregates.apply().get())
    assert (run.trigger, run.missing_found, run.added, run.failures, run.exit_code) == ("schedule", 1, 1, 0, 0)
    assert run.duration_seconds > 0 and run.finished_at is not None
    assert placement.aggregates_of(node.uuid) == {aggregate["uuid"]}
