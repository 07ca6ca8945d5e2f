"""Applying outbox rows to placement: one row, a batch, or the pending ones (the drain)."""

import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import NamedTuple

from django.conf import settings
from django.utils import timezone

from aggregates import placement_client
from aggregates.host_aggregates.models import AggregateHost
from aggregates.hosts.models import ComputeNode
from aggregates.mirroring import resource_tracker
from aggregates.mirroring.models import PlacementMirrorRequest, ProviderSyncRequest
from aggregates.placement_client import (
    InventoryInUse,
    PlacementClient,
    PlacementError,
    PlacementUnreachable,
    ProviderNotFound,
)
from config import request_context

log = logging.getLogger("aggregates.mirroring")  # one logger for the outbox, its applier and the reconciler

Request = PlacementMirrorRequest
ProviderRequest = ProviderSyncRequest
# An outbox row of either kind.
OutboxRequest = PlacementMirrorRequest | ProviderSyncRequest
# What a row does to a provider's aggregates: {"add": [uuid]} or {"remove": [uuid]}.
AggregateChange = dict[str, Iterable[uuid.UUID | str]]
DRAIN_BATCH = 500
SYNC_HINT = "It may be corrected by running manage.py sync_placement_aggregates."


class MirrorError(Exception):
    """The host cannot be mirrored now (no compute node, no provider)."""


# --- applying rows -----------------------------------------------------------


def backoff_seconds(attempts: int) -> int:
    """Wait before the next attempt: 10 s, doubling, at most an hour."""
    return min(10 * 2 ** max(attempts - 1, 0), 3600)


def describe(row: OutboxRequest) -> str:
    if isinstance(row, ProviderRequest):
        verb = "creating or updating" if row.action == ProviderRequest.SYNC else "deleting"
        return f"{verb} the resource provider of compute node {row.hypervisor_hostname} ({row.node_uuid})"
    if row.action == Request.DELETE:
        return f"deleting aggregate {row.aggregate_name} ({row.aggregate_uuid})"
    verb = "adding host {} to" if row.action == Request.ADD else "removing host {} from"
    return f"{verb.format(row.host)} aggregate {row.aggregate_name} ({row.aggregate_uuid})"


def apply_request(
    request_pk: int, placement: PlacementClient | None = None, log_each: bool = True
) -> OutboxRequest | None:
    """Apply one pending aggregate row; returns it with its new status
    (None if it does not exist). Placement failures are recorded on the row
    (pending until PLACEMENT_MIRROR_MAX_ATTEMPTS, then failed), never raised."""
    return _apply_row(Request.objects.filter(pk=request_pk).first(), placement, log_each)


def apply_provider_request(
    request_pk: int, placement: PlacementClient | None = None, log_each: bool = True
) -> OutboxRequest | None:
    """apply_request for a resource provider row. An inventory placement
    refuses to lower below its allocations fails the row at once."""
    return _apply_row(ProviderRequest.objects.filter(pk=request_pk).first(), placement, log_each)


def _apply_row(row: OutboxRequest | None, placement: PlacementClient | None, log_each: bool) -> OutboxRequest | None:
    if row is None or row.status != Request.PENDING:
        return row
    with request_context.bound(_context_of(row)):
        return _apply_pending_row(row, placement or placement_client.client(), log_each)


def _context_of(row: OutboxRequest) -> request_context.RequestContext:
    """The change's request ids, for the log lines and the placement calls
    applying its row (the drain's rows each their own); a row written
    outside any request keeps the context of whoever applies it."""
    current = request_context.current()
    if not row.request_id:
        return current
    return replace(current, request_id=row.request_id, global_request_id=row.global_request_id)


def _apply_pending_row(row: OutboxRequest, placement: PlacementClient, log_each: bool) -> OutboxRequest:
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
    log.log(logging.INFO if log_each else logging.DEBUG, "Placement mirroring done: %s", describe(row))
    return row


def _record_failure(
    row: OutboxRequest, exc: PlacementError | MirrorError, log_each: bool, give_up: bool = False
) -> OutboxRequest:
    row.attempts += 1
    row.last_error = str(exc)
    row.placement_unreachable = isinstance(exc, PlacementUnreachable)  # for apply_rows, not saved
    give_up = give_up or row.attempts >= settings.PLACEMENT_MIRROR_MAX_ATTEMPTS
    row.status = Request.FAILED if give_up else Request.PENDING
    row.updated_at = timezone.now()
    row.next_attempt_at = row.updated_at + timedelta(seconds=backoff_seconds(row.attempts))
    row.save(update_fields=["attempts", "last_error", "status", "updated_at", "next_attempt_at"])
    outcome = "gave up" if give_up else "will retry"
    log.log(
        logging.WARNING if log_each else logging.DEBUG,
        "Placement mirroring failed %s (attempt %d, %s): %s. %s",
        describe(row),
        row.attempts,
        outcome,
        exc,
        SYNC_HINT,
    )
    return row


def _apply_to_provider(row: ProviderSyncRequest, placement: PlacementClient) -> None:
    """Make the provider match the node as it is now: a sync row of a node
    deleted since has nothing to do (the deletion row follows)."""
    if row.action == ProviderRequest.DELETE:
        if not placement.delete_provider(row.node_uuid):
            log.info(
                "Resource provider %s of deleted compute node %s was already gone",
                row.node_uuid,
                row.hypervisor_hostname,
            )
        return
    node = ComputeNode.objects.select_related("service").filter(uuid=row.node_uuid).first()
    if node is None:
        log.info("Compute node %s (%s) is gone; its provider is not synced", row.hypervisor_hostname, row.node_uuid)
        return
    resource_tracker.sync_node(node, placement)


class NodeRef(NamedTuple):
    uuid: str
    hypervisor_hostname: str


def node_refs(host: str) -> list[NodeRef]:
    return [
        NodeRef(str(uuid), name)
        for uuid, name in ComputeNode.objects.filter(host=host)
        .order_by("id")
        .values_list("uuid", "hypervisor_hostname")
    ]


def _mirror_host(row: PlacementMirrorRequest, placement: PlacementClient) -> None:
    """Give the aggregate to every provider of the host's nodes, or take it
    away (also from the nodes the host had when the row was written: they
    are gone if the host was deleted). A node without provider fails an
    addition; for a removal there is nothing to take away from it (Nova:
    "provider not found", continue)."""
    member = AggregateHost.objects.filter(aggregate__uuid=row.aggregate_uuid, host=row.host).exists()
    if member != (row.action == Request.ADD):
        log.info(
            "Host %s is%s a member of aggregate %s now; mirroring that instead of %s",
            row.host,
            "" if member else " not",
            row.aggregate_uuid,
            row.action,
        )
    change: AggregateChange = {"add": [row.aggregate_uuid]} if member else {"remove": [row.aggregate_uuid]}
    nodes = node_refs(row.host)
    if not member:
        nodes += [NodeRef(*ref) for ref in row.nodes if NodeRef(*ref) not in nodes]
    if not nodes and member:
        raise MirrorError(f"host {row.host} has no compute node, so it has no resource provider")
    missing = [node for node in nodes if not _change_node_provider(placement, node, change)]
    if missing and member:
        names = ", ".join(f"{node.hypervisor_hostname} ({node.uuid})" for node in missing)
        raise MirrorError(f"placement has no resource provider for compute node(s) {names} of host {row.host}")


def _change_node_provider(placement: PlacementClient, node: NodeRef, change: AggregateChange) -> bool:
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


def _unmirror_deleted_aggregate(row: PlacementMirrorRequest, placement: PlacementClient) -> None:
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
            log.info(
                "Resource provider %s (%s) keeps deleted aggregate %s: it is no compute node of Corral",
                provider["name"],
                provider["uuid"],
                row.aggregate_uuid,
            )


def drain_pending(
    limit: int | None = DRAIN_BATCH, placement: PlacementClient | None = None, due_only: bool = True
) -> dict[str, int]:
    """Apply pending rows, provider rows first, oldest first: those due
    (their backoff is over), or all of them when not ``due_only``; at most
    ``limit`` of each kind. Failures are logged as one summary line.
    Returns how many ended in each status."""
    rows: list[OutboxRequest] = []
    model: type[OutboxRequest]
    for model in (ProviderRequest, Request):
        pending = model.objects.filter(status=Request.PENDING)
        if due_only:
            pending = pending.filter(next_attempt_at__lte=timezone.now())
        rows += list(pending.order_by("id")[:limit])
    return apply_rows(rows, placement, log_each=False)


def apply_rows(
    rows: Sequence[OutboxRequest], placement: PlacementClient | None = None, log_each: bool = True
) -> dict[str, int]:
    """Apply outbox rows in order. Once placement cannot be reached the
    rest are left pending untouched. Without ``log_each``, one warning
    sums up the failures. Returns how many ended in each status."""
    placement = placement or placement_client.client()
    counts = {Request.DONE: 0, Request.PENDING: 0, Request.FAILED: 0}
    first_error = None
    row: OutboxRequest | None
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
        log.warning(
            "Placement mirroring: %d of %d request(s) not applied (%d will be retried, %d given up); "
            "first failure %s. %s",
            failed,
            len(rows),
            counts[Request.PENDING],
            counts[Request.FAILED],
            first_error,
            SYNC_HINT,
        )
    return counts
