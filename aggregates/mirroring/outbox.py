"""The placement outbox: rows written with each change, applied once it commits.

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
see aggregates.mirroring.resource_tracker): a registration, enabling or disabling a
compute service, deleting it. The rows of one transaction are applied
together, provider rows first.

Applying a row makes placement match Corral's *current* membership of the
host (or state of the node), whatever the row's action: a late "add" for a
host that has since left the aggregate removes it, so rows may be applied in
any order or twice.
"""

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import transaction
from django.utils import timezone

from aggregates import after_commit
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import ComputeNode
from aggregates.mirroring import tasks
from aggregates.mirroring.applier import OutboxRequest, apply_rows, describe, drain_pending, node_refs
from aggregates.mirroring.models import PlacementMirrorRequest, ProviderSyncRequest
from config import request_context

log = logging.getLogger("aggregates.mirroring")  # one logger for the outbox, its applier and the reconciler

Request = PlacementMirrorRequest
ProviderRequest = ProviderSyncRequest


# --- recording (inside the service functions' transactions) ------------------


def _request_ids() -> dict[str, str]:
    """The request ids of the change, kept on its row for whoever applies it."""
    context = request_context.current()
    return {"request_id": context.request_id, "global_request_id": context.global_request_id}


def record(aggregate: Aggregate, action: str, host: str = "") -> PlacementMirrorRequest:
    """Write the outbox row for ``action`` in the current transaction and
    have it applied once the transaction commits."""
    nodes = [[str(uuid), name] for uuid, name in node_refs(host)] if host else []
    row = Request.objects.create(
        aggregate_uuid=aggregate.uuid,
        aggregate_id=aggregate.id,
        aggregate_name=aggregate.name,
        host=host,
        nodes=nodes,
        action=action,
        **_request_ids(),
    )
    _apply_after_commit(row)
    return row


def record_provider_sync(node: ComputeNode) -> ProviderSyncRequest:
    """The compute node registered, or its service was enabled or disabled:
    its resource provider must follow (existence, inventories, trait)."""
    return _record_provider(node, ProviderRequest.SYNC)


def record_provider_deletion(node: ComputeNode) -> ProviderSyncRequest:
    """The compute node is being deleted: so must its resource provider."""
    return _record_provider(node, ProviderRequest.DELETE)


def _record_provider(node: ComputeNode, action: str) -> ProviderSyncRequest:
    row = ProviderRequest.objects.create(
        node_uuid=node.uuid,
        hypervisor_hostname=node.hypervisor_hostname,
        host=node.host,
        action=action,
        **_request_ids(),
    )
    _apply_after_commit(row)
    return row


class _Batch:
    """The outbox rows written in one transaction, dispatched together once
    it commits: one task each when there is a broker, else applied in this
    process, provider rows first (an aggregate needs the provider)."""

    def __init__(self) -> None:
        self.rows: list[OutboxRequest] = []
        self.hook: Callable[[], None] | None = None

    def ordered(self) -> list[OutboxRequest]:
        return sorted(self.rows, key=lambda row: (not isinstance(row, ProviderRequest), row.pk))

    def send(self) -> None:
        for row in self.ordered():
            enqueue(row)

    def apply(self) -> None:
        rows = self.ordered()
        # One operator change: a warning about its row. A batch (seeding
        # many hosts...): one summary line.
        counts = apply_rows(rows, log_each=len(rows) == 1)
        if not counts[Request.PENDING] and not counts[Request.FAILED]:
            # Placement answers: the rows that failed before may go too.
            DRAIN_WITHOUT_BROKER.run_if_due()


# --- the drain without a broker -----------------------------------------------
#
# Without a broker there is no beat: rows that failed (placement was down,
# a provider was missing) would wait for a drain that never comes under
# gunicorn alone. So once a commit's rows are applied in this process (all
# of them: placement answers), the rows that are due are drained too, at
# most once per EAGER_DRAIN_INTERVAL seconds per process, and never inside a
# transaction. Rows may be applied twice (two workers draining at once)
# without harm.

EAGER_DRAIN_INTERVAL = 10.0


def _drain_due_rows() -> dict[str, int] | None:
    """Drain the pending rows whose backoff is over; None when there are none."""
    due = timezone.now()
    if not any(
        model.objects.filter(status=Request.PENDING, next_attempt_at__lte=due).exists()
        for model in (ProviderRequest, Request)
    ):
        return None
    return drain_pending()


DRAIN_WITHOUT_BROKER = after_commit.CatchUp(
    "The opportunistic drain of pending placement mirror requests", _drain_due_rows, every=EAGER_DRAIN_INTERVAL
)


_deferral = threading.local()


@contextmanager
def left_to_the_drain() -> Iterator[None]:
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


def _apply_after_commit(row: OutboxRequest) -> None:
    if getattr(_deferral, "active", False):
        return
    connection = transaction.get_connection()
    batch = getattr(connection, "placement_outbox_batch", None)
    if batch is None or batch.hook is None or not after_commit.is_pending(batch.hook):
        batch = connection.placement_outbox_batch = _Batch()
        batch.rows.append(row)
        batch.hook = after_commit.dispatch(
            batch.apply,
            send=batch.send,
            outbound="placement mirroring",
            failure="Applying the placement mirror requests of a commit failed; the drain will",
        )
    else:
        batch.rows.append(row)


def enqueue(row: OutboxRequest) -> None:
    """Queue the task applying one row. The change is committed already, so
    whatever fails here (the broker cannot be reached, mostly) only leaves
    the row pending for the periodic drain."""
    task = tasks.apply_provider_request if isinstance(row, ProviderRequest) else tasks.apply_mirror_request
    try:
        task.apply_async(args=(row.pk,), retry=False)
    except Exception as exc:  # noqa: BLE001 - the operator's request must not fail now
        log.warning(
            "Could not queue placement mirror request %s (%s): %s. It stays pending until the periodic "
            "drain applies it.",
            row.pk,
            describe(row),
            exc,
        )
