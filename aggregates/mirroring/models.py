"""The placement outbox (mirror and provider requests) and reconciliation runs."""

from django.db import models
from django.utils import timezone


class OutboxRow(models.Model):
    """What every outbox row has: a status, attempts with backoff, and times.
    Rows are written in the transaction of the change they mirror and
    applied by a task, the drain or the reconciler."""

    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    STATUSES = [(PENDING, "pending"), (DONE, "done"), (FAILED, "failed")]

    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    attempts = models.IntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    next_attempt_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    applied_at = models.DateTimeField(null=True, blank=True)
    # The request ids of the change that wrote the row: its applier runs with
    # them (its log lines, the X-OpenStack-Request-ID sent to placement).
    request_id = models.CharField(max_length=64, blank=True, default="")
    global_request_id = models.CharField(max_length=64, blank=True, default="")

    # Not a column: set by the applier on a failed attempt when placement
    # could not be reached at all.
    placement_unreachable: bool

    class Meta:
        abstract = True
        ordering = ["id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]


class PlacementMirrorRequest(OutboxRow):
    """Outbox row: placement must learn that ``host`` joined or left an
    aggregate (or that the aggregate was deleted). Written in the same
    transaction as the change; applied by a task, the drain or the
    reconciler. The aggregate is copied (id, name, uuid) because it may be
    deleted before the row is applied."""

    ADD = "add"
    REMOVE = "remove"
    DELETE = "delete"
    ACTIONS = [(ADD, "add host"), (REMOVE, "remove host"), (DELETE, "delete aggregate")]

    aggregate_uuid = models.UUIDField(db_index=True)
    aggregate_id = models.IntegerField(null=True, blank=True)
    aggregate_name = models.CharField(max_length=255)
    host = models.CharField(max_length=255, blank=True, default="")
    # The host's compute nodes when the change was made, [[uuid, hypervisor
    # hostname], ...]: a removal still finds their providers after the host
    # itself was deleted.
    nodes = models.JSONField(default=list, blank=True)
    action = models.CharField(max_length=16, choices=ACTIONS)

    def __str__(self) -> str:
        target = f"host {self.host} " if self.host else ""
        return f"{self.action} {target}aggregate {self.aggregate_name} ({self.status})"


class ReconciliationRun(models.Model):
    """One pass of making placement's aggregate associations match Corral's."""

    COMMAND = "command"
    SCHEDULE = "schedule"
    TRIGGERS = [(COMMAND, "command"), (SCHEDULE, "schedule")]

    trigger = models.CharField(max_length=16, choices=TRIGGERS)
    dry_run = models.BooleanField(default=False)
    prune = models.BooleanField(default=False)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    missing_found = models.IntegerField(default=0)
    stale_found = models.IntegerField(default=0)
    unknown_providers = models.IntegerField(default=0)
    hosts_without_provider = models.IntegerField(default=0)
    added = models.IntegerField(default=0)
    removed = models.IntegerField(default=0)
    failures = models.IntegerField(default=0)
    placement_requests = models.IntegerField(default=0)
    providers_created = models.IntegerField(default=0)
    inventories_updated = models.IntegerField(default=0)
    traits_updated = models.IntegerField(default=0)
    exit_code = models.IntegerField(null=True, blank=True)
    messages = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"reconciliation {self.started_at:%Y-%m-%d %H:%M:%S} ({self.trigger})"


class ProviderSyncRequest(OutboxRow):
    """Outbox row: placement must learn the current state of a compute
    node's resource provider (SYNC: exists, inventory, COMPUTE_STATUS_DISABLED
    trait), or that the node is gone (DELETE). Written in the same
    transaction as the registration, the service update or the service
    deletion; applied like PlacementMirrorRequest rows. The node is copied
    because it may be deleted before the row is applied."""

    SYNC = "sync"
    DELETE = "delete"
    ACTIONS = [(SYNC, "sync provider"), (DELETE, "delete provider")]

    node_uuid = models.UUIDField(db_index=True)
    hypervisor_hostname = models.CharField(max_length=255)
    host = models.CharField(max_length=255)
    action = models.CharField(max_length=16, choices=ACTIONS)

    def __str__(self) -> str:
        return f"{self.action} provider of {self.hypervisor_hostname} ({self.status})"
