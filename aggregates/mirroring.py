"""Mirroring Corral's host aggregates into placement.

Placement aggregates are UUIDs on resource providers; a host's providers are
its compute nodes' (provider uuid = node uuid, else provider name = the
node's hypervisor hostname). When a host joins or leaves an aggregate, or an
aggregate is deleted, the service function calls ``record`` inside its
transaction: an outbox row (PlacementMirrorRequest) commits with the change
and, once committed, a task applies it. Placement being down or the broker
being unreachable never fails the operator's request: the row stays pending,
the task retries with backoff, and the periodic drain picks up what no task
carries. ``reconcile`` repairs whatever drifted anyway.

Compute nodes' resource providers go the same way (ProviderSyncRequest rows,
see aggregates.resource_tracker): a registration, enabling or disabling a
compute service, deleting it. The rows of one transaction are applied
together, provider rows first.

Applying a row makes placement match Corral's *current* membership of the
host (or state of the node), whatever the row's action: a late "add" for a
host that has since left the aggregate removes it, so rows may be applied in
any order or twice.
"""
import logging
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from aggregates import placement_client, resource_tracker
from aggregates.models import (
    Aggregate,
    AggregateHost,
    ComputeNode,
    PlacementMirrorRequest,
    ProviderSyncRequest,
    ReconciliationRun,
)
from aggregates.placement_client import InventoryInUse, PlacementError, PlacementUnreachable, ProviderNotFound

log = logging.getLogger(__name__)

Request = PlacementMirrorRequest
ProviderRequest = ProviderSyncRequest
DRAIN_BATCH = 500
SYNC_HINT = "It may be corrected by running manage.py sync_placement_aggregates."


class MirrorError(Exception):
    """The host cannot be mirrored now (no compute node, no provider)."""


# --- recording (inside the service functions' transactions) ------------------


def record(aggregate, action, host=""):
    """Write the outbox row for ``action`` in the current transaction and
    have it applied once the transaction commits."""
    nodes = [[str(uuid), name] for uuid, name in _node_refs(host)] if host else []
    row = Request.objects.create(aggregate_uuid=aggregate.uuid, aggregate_id=aggregate.id,
                                 aggregate_name=aggregate.name, host=host, nodes=nodes, action=action)
    _apply_after_commit(row)
    return row


def record_provider_sync(node):
    """The compute node registered, or its service was enabled or disabled:
    its resource provider must follow (existence, inventories, trait)."""
    return _record_provider(node, ProviderRequest.SYNC)


def record_provider_deletion(node):
    """The compute node is being deleted: so must its resource provider."""
    return _record_provider(node, ProviderRequest.DELETE)


def _record_provider(node, action):
    row = ProviderRequest.objects.create(node_uuid=node.uuid, hypervisor_hostname=node.hypervisor_hostname,
                                         host=node.host, action=action)
    _apply_after_commit(row)
    return row


class _AfterCommit:
    """The outbox rows written in one transaction, applied together once
    it commits: one by one through Celery when there is a broker, else in
    this process, provider rows first (an aggregate needs the provider)."""

    def __init__(self):
        self.rows = []

    def __call__(self):
        rows = sorted(self.rows, key=lambda row: (not isinstance(row, ProviderRequest), row.pk))
        if not celery_is_eager():
            for row in rows:
                enqueue(row)
            return
        # One operator change: a warning about its row. A batch (seeding
        # many hosts...): one summary line.
        apply_rows(rows, log_each=len(rows) == 1)


_deferral = threading.local()


@contextmanager
def left_to_the_drain():
    """Rows written in this block (in this thread) are not applied when
    their transaction commits: the drain applies them, its failures summed
    up in one line. For bulk loads run before placement is served (the
    demo's seeding), which would otherwise log a warning per row."""
    saved = getattr(_deferral, "active", False)
    _deferral.active = True
    try:
        yield
    finally:
        _deferral.active = saved


def _apply_after_commit(row):
    if getattr(_deferral, "active", False):
        return
    connection = transaction.get_connection()
    batch = getattr(connection, "placement_outbox_batch", None)
    if batch is None or not any(callback is batch for _, callback, _ in connection.run_on_commit):
        batch = connection.placement_outbox_batch = _AfterCommit()
        batch.rows.append(row)
        transaction.on_commit(batch)  # runs at once outside a transaction
    else:
        batch.rows.append(row)


def celery_is_eager():
    from config import celery_app

    return bool(celery_app.conf.task_always_eager)


def enqueue(row):
    """Queue the task applying one row. The change is committed already, so
    whatever fails here (the broker cannot be reached, mostly) only leaves
    the row pending for the periodic drain."""
    from aggregates import tasks

    task = tasks.apply_provider_request if isinstance(row, ProviderRequest) else tasks.apply_mirror_request
    try:
        task.apply_async(args=[row.pk], retry=False)
    except Exception as exc:  # noqa: BLE001 - the operator's request must not fail now
        log.warning("Could not queue placement mirror request %s (%s): %s. It stays pending until the periodic "
                    "drain applies it.", row.pk, describe(row), exc)


# --- applying rows -----------------------------------------------------------


def backoff_seconds(attempts):
    """Wait before the next attempt: 10 s, doubling, at most an hour."""
    return min(10 * 2 ** max(attempts - 1, 0), 3600)


def describe(row):
    if isinstance(row, ProviderRequest):
        verb = "creating or updating" if row.action == ProviderRequest.SYNC else "deleting"
        return f"{verb} the resource provider of compute node {row.hypervisor_hostname} ({row.node_uuid})"
    if row.action == Request.DELETE:
        return f"deleting aggregate {row.aggregate_name} ({row.aggregate_uuid})"
    verb = "adding host {} to" if row.action == Request.ADD else "removing host {} from"
    return f"{verb.format(row.host)} aggregate {row.aggregate_name} ({row.aggregate_uuid})"


def apply_request(request_pk, placement=None, log_each=True):
    """Apply one pending aggregate row; returns it with its new status
    (None if it does not exist). Placement failures are recorded on the row
    (pending until PLACEMENT_MIRROR_MAX_ATTEMPTS, then failed), never raised."""
    return _apply_row(Request.objects.filter(pk=request_pk).first(), placement, log_each)


def apply_provider_request(request_pk, placement=None, log_each=True):
    """apply_request for a resource provider row. An inventory placement
    refuses to lower below its allocations fails the row at once."""
    return _apply_row(ProviderRequest.objects.filter(pk=request_pk).first(), placement, log_each)


def _apply_row(row, placement, log_each):
    if row is None or row.status != Request.PENDING:
        return row
    placement = placement or placement_client.client()
    try:
        if isinstance(row, ProviderRequest):
            _apply_to_provider(row, placement)
        elif row.action == Request.DELETE:
            _unmirror_deleted_aggregate(row, placement)
        else:
            _mirror_host(row, placement)
    except InventoryInUse as exc:
        return _record_failure(row, exc, log_each, give_up=True)
    except (PlacementError, MirrorError) as exc:
        return _record_failure(row, exc, log_each)
    now = timezone.now()
    row.status, row.applied_at, row.updated_at, row.last_error = Request.DONE, now, now, ""
    row.save(update_fields=["status", "applied_at", "updated_at", "last_error"])
    return row


def _record_failure(row, exc, log_each, give_up=False):
    row.attempts += 1
    row.last_error = str(exc)
    row.placement_unreachable = isinstance(exc, PlacementUnreachable)  # for apply_rows, not saved
    give_up = give_up or row.attempts >= settings.PLACEMENT_MIRROR_MAX_ATTEMPTS
    row.status = Request.FAILED if give_up else Request.PENDING
    row.updated_at = timezone.now()
    row.next_attempt_at = row.updated_at + timedelta(seconds=backoff_seconds(row.attempts))
    row.save(update_fields=["attempts", "last_error", "status", "updated_at", "next_attempt_at"])
    outcome = "gave up" if give_up else "will retry"
    log.log(logging.WARNING if log_each else logging.DEBUG, "Placement mirroring failed %s (attempt %d, %s): %s. %s",
            describe(row), row.attempts, outcome, exc, SYNC_HINT)
    return row


def _apply_to_provider(row, placement):
    """Make the provider match the node as it is now: a sync row of a node
    deleted since has nothing to do (the deletion row follows)."""
    if row.action == ProviderRequest.DELETE:
        if not placement.delete_provider(row.node_uuid):
            log.info("Resource provider %s of deleted compute node %s was already gone", row.node_uuid,
                     row.hypervisor_hostname)
        return
    node = ComputeNode.objects.select_related("service").filter(uuid=row.node_uuid).first()
    if node is None:
        log.info("Compute node %s (%s) is gone; its provider is not synced", row.hypervisor_hostname, row.node_uuid)
        return
    resource_tracker.sync_node(node, placement)


class NodeRef(NamedTuple):
    uuid: str
    hypervisor_hostname: str


def _node_refs(host):
    return [NodeRef(str(uuid), name) for uuid, name in
            ComputeNode.objects.filter(host=host).order_by("id").values_list("uuid", "hypervisor_hostname")]


def _mirror_host(row, placement):
    """Give the aggregate to every provider of the host's nodes, or take it
    away (also from the nodes the host had when the row was written: they
    are gone if the host was deleted). A node without provider fails an
    addition; for a removal there is nothing to take away from it (Nova:
    "provider not found", continue)."""
    member = AggregateHost.objects.filter(aggregate__uuid=row.aggregate_uuid, host=row.host).exists()
    if member != (row.action == Request.ADD):
        log.info("Host %s is%s a member of aggregate %s now; mirroring that instead of %s", row.host,
                 "" if member else " not", row.aggregate_uuid, row.action)
    change = {"add": [row.aggregate_uuid]} if member else {"remove": [row.aggregate_uuid]}
    nodes = _node_refs(row.host)
    if not member:
        nodes += [NodeRef(*ref) for ref in row.nodes if NodeRef(*ref) not in nodes]
    if not nodes and member:
        raise MirrorError(f"host {row.host} has no compute node, so it has no resource provider")
    missing = [node for node in nodes if not _change_node_provider(placement, node, change)]
    if missing and member:
        names = ", ".join(f"{node.hypervisor_hostname} ({node.uuid})" for node in missing)
        raise MirrorError(f"placement has no resource provider for compute node(s) {names} of host {row.host}")


def _change_node_provider(placement, node, change):
    """Apply ``change`` to the node's provider, found by the node's uuid,
    else by its hypervisor hostname; returns False when there is none."""
    try:
        update = placement.update_provider_aggregates(node.uuid, **change)
    except ProviderNotFound:
        provider_uuid = placement.provider_uuid_by_name(node.hypervisor_hostname)
        if provider_uuid is None:
            return False
        update = placement.update_provider_aggregates(provider_uuid, **change)
    resource_tracker.followed(update, uuid=node.uuid)
    return True


def _unmirror_deleted_aggregate(row, placement):
    """Take the deleted aggregate's uuid off every provider of a Corral
    compute node. Other providers (shared storage...) keep it: the operator
    put it there."""
    nodes = list(ComputeNode.objects.values_list("uuid", "hypervisor_hostname"))
    node_uuids = {str(uuid) for uuid, _ in nodes}
    node_names = {name for _, name in nodes}
    for provider in placement.list_providers(member_of=row.aggregate_uuid):
        if provider["uuid"] in node_uuids or provider["name"] in node_names:
            placement.change_provider_aggregates(provider["uuid"], remove=[row.aggregate_uuid])
        else:
            log.info("Resource provider %s (%s) keeps deleted aggregate %s: it is no compute node of Corral",
                     provider["name"], provider["uuid"], row.aggregate_uuid)


def drain_pending(limit=DRAIN_BATCH, placement=None, due_only=True):
    """Apply pending rows, provider rows first, oldest first: those due
    (their backoff is over), or all of them when not ``due_only``; at most
    ``limit`` of each kind. Failures are logged as one summary line.
    Returns how many ended in each status."""
    rows = []
    for model in (ProviderRequest, Request):
        pending = model.objects.filter(status=Request.PENDING)
        if due_only:
            pending = pending.filter(next_attempt_at__lte=timezone.now())
        rows += list(pending.order_by("id")[:limit])
    return apply_rows(rows, placement, log_each=False)


def apply_rows(rows, placement=None, log_each=True):
    """Apply outbox rows in order. Once placement cannot be reached the
    rest are left pending untouched. Without ``log_each``, one warning
    sums up the failures. Returns how many ended in each status."""
    placement = placement or placement_client.client()
    counts = {Request.DONE: 0, Request.PENDING: 0, Request.FAILED: 0}
    first_error = None
    for index, row in enumerate(rows):
        # Read afresh: it may have been applied meanwhile, or rolled back with a savepoint.
        row = _apply_row(type(row).objects.filter(pk=row.pk).first(), placement, log_each)
        if row is None:
            continue
        counts[row.status] += 1
        if row.status != Request.DONE and first_error is None:
            first_error = f"{describe(row)}: {row.last_error}"
        if getattr(row, "placement_unreachable", False):
            counts[Request.PENDING] += len(rows) - index - 1
            break
    failed = counts[Request.PENDING] + counts[Request.FAILED]
    if failed and not log_each:
        log.warning("Placement mirroring: %d of %d request(s) not applied (%d will be retried, %d given up); "
                    "first failure %s. %s", failed, len(rows), counts[Request.PENDING], counts[Request.FAILED],
                    first_error, SYNC_HINT)
    return counts


# --- drift: what placement has versus what Corral says -----------------------


@dataclass
class Association:
    """A (host's compute node provider, aggregate) pair."""

    host: str
    node: str
    provider_uuid: str


@dataclass
class AggregateDrift:
    aggregate: Aggregate
    in_sync: list = field(default_factory=list)  # Associations present in both
    missing: list = field(default_factory=list)  # member hosts' providers lacking the aggregate
    stale: list = field(default_factory=list)  # providers of non-member Corral hosts having it
    unknown_providers: list = field(default_factory=list)  # {"uuid", "name"}: no Corral compute node
    hosts_without_provider: list = field(default_factory=list)  # (host, node uuid)
    hosts_without_node: list = field(default_factory=list)  # host names

    @property
    def drifted(self):
        return bool(self.missing or self.stale)


@dataclass
class DriftReport:
    aggregates: list  # AggregateDrift, in aggregate id order
    placement_requests: int


class _Providers:
    """Which of placement's providers stand for Corral's compute nodes: the
    one with the node's uuid, else the only one named like the node."""

    def __init__(self, providers, nodes):
        uuids = {p["uuid"] for p in providers}
        by_name = {}
        for provider in providers:
            by_name.setdefault(provider["name"], []).append(provider["uuid"])
        self.of_node = {}  # node pk -> provider uuid
        for node in nodes:
            if str(node.uuid) in uuids:
                self.of_node[node.pk] = str(node.uuid)
            elif len(by_name.get(node.hypervisor_hostname, [])) == 1:
                self.of_node[node.pk] = by_name[node.hypervisor_hostname][0]
        node_by_pk = {node.pk: node for node in nodes}
        self.owner = {uuid: node_by_pk[pk] for pk, uuid in self.of_node.items()}  # provider uuid -> node


def drift_report(placement=None, provider_listing=None):
    """Per aggregate: associations in sync, missing in placement, stale
    (a Corral host's provider keeps an aggregate the host left), unknown
    providers (in the aggregate, but no compute node of Corral), and member
    hosts without compute node or provider.

    Reads placement 1 + (number of aggregates) times, whatever the number of
    hosts: one listing of every provider (unless ``provider_listing`` is
    that listing already), one member_of listing per aggregate. Raises
    PlacementError when a read fails."""
    placement = placement or placement_client.client()
    before = placement.requests_made
    nodes = list(ComputeNode.objects.order_by("id"))
    nodes_of_host = {}
    for node in nodes:
        nodes_of_host.setdefault(node.host, []).append(node)
    providers = _Providers(placement.list_providers() if provider_listing is None else provider_listing, nodes)
    members = {}
    for aggregate_id, host in AggregateHost.objects.order_by("id").values_list("aggregate_id", "host"):
        members.setdefault(aggregate_id, []).append(host)
    report = []
    for aggregate in Aggregate.objects.order_by("id"):
        in_placement = {p["uuid"]: p["name"] for p in placement.list_providers(member_of=aggregate.uuid)}
        report.append(_aggregate_drift(aggregate, members.get(aggregate.id, []), in_placement, nodes_of_host,
                                       providers))
    return DriftReport(report, placement.requests_made - before)


def _aggregate_drift(aggregate, member_hosts, in_placement, nodes_of_host, providers):
    """Compare one aggregate's member hosts with the providers placement
    associates with it (``in_placement``: uuid -> name)."""
    drift = AggregateDrift(aggregate)
    wanted = set()
    for host in member_hosts:
        if host not in nodes_of_host:
            drift.hosts_without_node.append(host)
        for node in nodes_of_host.get(host, []):
            provider_uuid = providers.of_node.get(node.pk)
            if provider_uuid is None:
                drift.hosts_without_provider.append((host, str(node.uuid)))
                continue
            wanted.add(provider_uuid)
            association = Association(host, node.hypervisor_hostname, provider_uuid)
            (drift.in_sync if provider_uuid in in_placement else drift.missing).append(association)
    for provider_uuid, name in in_placement.items():
        if provider_uuid in wanted:
            continue
        owner = providers.owner.get(provider_uuid)
        if owner is None:
            drift.unknown_providers.append({"uuid": provider_uuid, "name": name})
        else:
            drift.stale.append(Association(owner.host, owner.hypervisor_hostname, provider_uuid))
    return drift


# --- reconciliation ------------------------------------------------------------

EXIT_OK = 0
EXIT_READ_FAILED = 2
EXIT_UPDATE_FAILED = 3
EXIT_NO_COMPUTE_NODE = 5
EXIT_NO_PROVIDER = 6
EXIT_UNEXPECTED = 255

VERBOSE, DRIFT, ERROR, SUMMARY = "verbose", "drift", "error", "summary"


@dataclass
class Reconciliation:
    """What a reconciliation did: its recorded run, the drift it found and
    its output lines as (kind, text); kind is VERBOSE (details), DRIFT
    (a change made or, in a dry run, to make), ERROR or SUMMARY (outcomes
    always worth showing)."""

    run: ReconciliationRun
    drift: DriftReport = None
    lines: list = field(default_factory=list)

    def say(self, kind, text):
        self.lines.append((kind, text))


def reconcile(trigger, dry_run=False, prune=False, placement=None):
    """Make placement's associations match Corral's aggregates: apply the
    pending mirror requests (backoff or not), then add the missing
    associations and, with ``prune``, remove the stale ones (unknown
    providers are only reported). ``dry_run`` changes nothing. Every run is
    recorded as a ReconciliationRun; its exit_code follows nova-manage
    placement sync_aggregates (0, 2, 3, 5, 6, 255)."""
    placement = placement or placement_client.client()
    started, before = time.monotonic(), placement.requests_made
    result = Reconciliation(ReconciliationRun.objects.create(trigger=trigger, dry_run=dry_run, prune=prune))
    run = result.run
    try:
        if not dry_run:
            _drain_before(result, placement)
        listing = _reconcile_providers(result, placement, dry_run)
        result.say(VERBOSE, "Filling in missing placement aggregates")
        result.drift = drift_report(placement, listing)
        for drift in result.drift.aggregates:
            _reconcile_aggregate(result, drift, placement, dry_run, prune)
        run.exit_code = _exit_code(result)
    except PlacementError as exc:
        result.say(ERROR, f"An error occurred reading resource providers and their aggregates from placement. "
                          f"Error: {exc}")
        run.exit_code = EXIT_READ_FAILED
    except Exception as exc:
        result.say(ERROR, f"Unexpected error: {exc!r}")
        run.exit_code = EXIT_UNEXPECTED
        raise
    finally:
        _finish(result, time.monotonic() - started, placement.requests_made - before)
    return result


def _drain_before(result, placement):
    counts = drain_pending(limit=None, placement=placement, due_only=False)
    if any(counts.values()):
        result.say(SUMMARY, f"Applied pending placement mirror requests: {counts[Request.DONE]} done, "
                          f"{counts[Request.PENDING]} still pending, {counts[Request.FAILED]} failed.")


def _reconcile_providers(result, placement, dry_run):
    """Give every compute node its resource provider with the right
    inventories and disabled trait. Providers whose generation has not
    moved since Corral last wrote them, for a node that still wants the
    same, are taken as in sync without reading them. Returns the provider
    listing, or None when providers were created (it is stale)."""
    run = result.run
    result.say(VERBOSE, "Checking the resource providers of compute nodes")
    listing = placement.list_providers()
    nodes = list(ComputeNode.objects.select_related("service").order_by("id"))
    providers = _Providers(listing, nodes)
    generations = {provider["uuid"]: provider["generation"] for provider in listing}
    for node in nodes:
        provider_uuid = providers.of_node.get(node.pk)
        if provider_uuid is not None and resource_tracker.in_sync(node, generations[provider_uuid]):
            continue
        name = f"compute node {node.hypervisor_hostname} (host {node.host}, uuid {node.uuid})"
        if dry_run:
            result.say(DRIFT, f"Would create the resource provider of {name}." if provider_uuid is None else
                       f"Would check the inventories and traits of resource provider {provider_uuid} of {name}.")
            continue
        try:
            outcome = resource_tracker.sync_node(node, placement, provider_uuid)
        except PlacementUnreachable:
            raise  # no use trying the next nodes: the run ends as "placement could not be read"
        except PlacementError as exc:
            run.failures += 1
            result.say(ERROR, f"Failed updating the resource provider of {name}. Error: {exc}")
            continue
        run.providers_created += outcome.created
        run.inventories_updated += outcome.inventory_changed and not outcome.created
        run.traits_updated += outcome.traits_changed
        changes = [text for done, text in ((outcome.created, "created"),
                                           (outcome.inventory_changed, "inventories set"),
                                           (outcome.traits_changed, "COMPUTE_STATUS_DISABLED trait set"))
                   if done]
        result.say(DRIFT if changes else VERBOSE,
                   f"Resource provider {outcome.provider_uuid} of {name}: {', '.join(changes) or 'in sync'}.")
    return None if run.providers_created else listing


def _finish(result, duration, requests_made):
    run = result.run
    run.finished_at = timezone.now()
    run.duration_seconds = duration
    run.placement_requests = requests_made
    if run.exit_code not in (EXIT_READ_FAILED, EXIT_UNEXPECTED):
        result.say(SUMMARY, f"Placement resource providers: {run.providers_created} created, "
                            f"{run.inventories_updated} inventories updated, {run.traits_updated} disabled traits "
                            "changed.")
    result.say(SUMMARY, _summary(run))
    run.messages = [text for kind, text in result.lines if kind in (ERROR, SUMMARY)]
    run.save()


def _reconcile_aggregate(result, drift, placement, dry_run, prune):
    run, aggregate = result.run, drift.aggregate
    run.missing_found += len(drift.missing)
    run.stale_found += len(drift.stale)
    run.unknown_providers += len(drift.unknown_providers)
    run.hosts_without_provider += len(drift.hosts_without_provider)
    result.say(VERBOSE, f"Processing aggregate: {aggregate.name}")
    for association in drift.in_sync:
        result.say(VERBOSE, f"Processing host: {association.host}")
        result.say(VERBOSE, f"Host ({association.host}) and provider ({association.provider_uuid}) are already "
                            f"in aggregate ({aggregate.uuid}).")
    for association in drift.missing:
        result.say(VERBOSE, f"Processing host: {association.host}")
        _apply(result, placement, aggregate, association, dry_run, add=True)
    for association in drift.stale:
        if prune:
            _apply(result, placement, aggregate, association, dry_run, add=False)
        else:
            result.say(VERBOSE, f"Host ({association.host}) and provider ({association.provider_uuid}) are in "
                                f"aggregate ({aggregate.uuid}) in placement only; --prune removes them.")
    for provider in drift.unknown_providers:
        result.say(VERBOSE, f"Provider ({provider['uuid']}, named {provider['name']}) is in aggregate "
                            f"({aggregate.uuid}) but is no compute node of Corral; left alone.")


def _apply(result, placement, aggregate, association, dry_run, add):
    host, provider_uuid = association.host, association.provider_uuid
    done = (f"host ({host}) and provider ({provider_uuid}) to aggregate ({aggregate.uuid})." if add
            else f"host ({host}) and provider ({provider_uuid}) from aggregate ({aggregate.uuid}).")
    if dry_run:
        result.say(DRIFT, ("Would add " if add else "Would remove ") + done)
        return
    change = {"add": [aggregate.uuid]} if add else {"remove": [aggregate.uuid]}
    try:
        update = placement.update_provider_aggregates(provider_uuid, **change)
    except PlacementError as exc:
        result.run.failures += 1
        result.say(ERROR, f"Failed updating provider aggregates for host ({host}), provider ({provider_uuid}) "
                          f"and aggregate ({aggregate.uuid}). Error: {exc}")
        return
    resource_tracker.followed(update, host=host, hypervisor_hostname=association.node)
    if add:
        result.run.added += 1
        result.say(DRIFT, "Successfully added " + done)
    else:
        result.run.removed += 1
        result.say(DRIFT, "Removed " + done)


def _exit_code(result):
    """The highest applicable of nova-manage's codes: failed updates (3)
    first, then hosts without provider (6), then without compute node (5)."""
    drift = result.drift
    without_node = sorted({h for item in drift.aggregates for h in item.hosts_without_node})
    without_provider = sorted({pair for item in drift.aggregates for pair in item.hosts_without_provider})
    if without_node:
        result.say(ERROR, "Unable to find matching compute node records for the following hosts; register them "
                          "again (manage.py register_host, or let their host agents report) and then retry. "
                          f"Missing: {','.join(without_node)}")
    if without_provider:
        listed = ",".join(f"({host}={node_uuid})" for host, node_uuid in without_provider)
        result.say(ERROR, "Unable to find matching resource provider record in placement with uuid for the following "
                          f"hosts: {listed}. Providers are created when hosts register: register these hosts again "
                          "and then retry.")
    if result.run.failures:
        return EXIT_UPDATE_FAILED
    if without_provider:
        return EXIT_NO_PROVIDER
    if without_node:
        return EXIT_NO_COMPUTE_NODE
    return EXIT_OK


def _summary(run):
    if run.exit_code == EXIT_READ_FAILED:
        return "Placement aggregates: nothing checked, placement could not be read."
    if run.exit_code == EXIT_UNEXPECTED:
        return "Placement aggregates: stopped by an unexpected error."
    text = (f"Placement aggregates: {run.missing_found} missing, {run.stale_found} stale, "
            f"{run.unknown_providers} on unknown providers, {run.hosts_without_provider} node(s) without provider; "
            f"{run.added} added, {run.removed} removed, {run.failures} failed")
    if run.dry_run:
        text += " (dry run: nothing changed)"
    elif run.stale_found and not run.prune:
        text += " (run with --prune to remove the stale ones)"
    return text + "."
