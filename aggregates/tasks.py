"""Celery tasks of the compute side: thin wrappers taking primary keys."""
from celery import shared_task

from aggregates import mirroring
from aggregates.models import PlacementMirrorRequest, ProviderSyncRequest, ReconciliationRun


@shared_task(bind=True, max_retries=None)
def apply_mirror_request(self, request_pk):
    """Apply one placement mirror request; retry with backoff while it is
    pending. Eager runs (embedded mode) do not retry in-process: the drain
    and the reconciler pick the row up."""
    row = mirroring.apply_request(request_pk)
    if row is None:
        return None
    if row.status == PlacementMirrorRequest.PENDING and not self.request.is_eager:
        raise self.retry(countdown=mirroring.backoff_seconds(row.attempts))
    return row.status


@shared_task(bind=True, max_retries=None)
def apply_provider_request(self, request_pk):
    """apply_mirror_request for a compute node's resource provider row."""
    row = mirroring.apply_provider_request(request_pk)
    if row is None:
        return None
    if row.status == ProviderSyncRequest.PENDING and not self.request.is_eager:
        raise self.retry(countdown=mirroring.backoff_seconds(row.attempts))
    return row.status


@shared_task
def drain_mirror_requests():
    """Apply the pending mirror and provider requests that are due (periodic)."""
    return mirroring.drain_pending()


@shared_task
def reconcile_placement_aggregates():
    """Make placement's aggregates match Corral's (periodic, see the
    django-celery-beat schedule); returns the ReconciliationRun's id."""
    return mirroring.reconcile(ReconciliationRun.SCHEDULE).run.pk
