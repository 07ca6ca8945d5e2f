"""Celery tasks of the mirroring: thin wrappers taking primary keys.

Each task has an explicit name, kept when code moves: queued messages and
the beat schedules stored in the database (django-celery-beat) name tasks
by it. A test checks that every stored schedule names a registered task."""

from celery import Task, shared_task

from aggregates.mirroring import applier, reconciler
from aggregates.mirroring.models import PlacementMirrorRequest, ProviderSyncRequest, ReconciliationRun


@shared_task(bind=True, max_retries=None, name="corral.mirroring.apply_mirror_request")
def apply_mirror_request(self: "Task[[int], str | None]", request_pk: int) -> str | None:
    """Apply one placement mirror request; retry with backoff while it is
    pending. Eager runs (embedded mode) do not retry in-process: the drain
    and the reconciler pick the row up."""
    row = applier.apply_request(request_pk)
    if row is None:
        return None
    if row.status == PlacementMirrorRequest.PENDING and not self.request.is_eager:
        raise self.retry(countdown=applier.backoff_seconds(row.attempts))
    return row.status


@shared_task(bind=True, max_retries=None, name="corral.mirroring.apply_provider_request")
def apply_provider_request(self: "Task[[int], str | None]", request_pk: int) -> str | None:
    """apply_mirror_request for a compute node's resource provider row."""
    row = applier.apply_provider_request(request_pk)
    if row is None:
        return None
    if row.status == ProviderSyncRequest.PENDING and not self.request.is_eager:
        raise self.retry(countdown=applier.backoff_seconds(row.attempts))
    return row.status


@shared_task(name="corral.mirroring.drain_mirror_requests")
def drain_mirror_requests() -> dict[str, int]:
    """Apply the pending mirror and provider requests that are due (periodic)."""
    return applier.drain_pending()


@shared_task(name="corral.mirroring.reconcile_placement_aggregates")
def reconcile_placement_aggregates() -> int:
    """Make placement's aggregates match Corral's (periodic, see the
    django-celery-beat schedule); returns the ReconciliationRun's id."""
    return reconciler.reconcile(ReconciliationRun.SCHEDULE).run.pk
