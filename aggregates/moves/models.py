"""Migration records, as Nova keeps them: one row per move of a server, with
its type, its status and where it went (or why it did not)."""

import uuid

from django.db import models
from django.utils import timezone


class ServerMigration(models.Model):
    LIVE = "live-migration"
    COLD = "migration"
    EVACUATION = "evacuation"
    RESIZE = "resize"
    TYPES = [(LIVE, "live migration"), (COLD, "cold migration"), (EVACUATION, "evacuation"), (RESIZE, "resize")]

    # Nova's statuses, by kind: live queued -> running -> completed; cold and
    # resize pre-migrating -> migrating -> finished -> confirming -> confirmed
    # (or finished -> reverting -> reverted); evacuation accepted ->
    # pre-migrating -> done. "error" when no host could take the server,
    # "failed" when the move broke off.
    QUEUED = "queued"
    ACCEPTED = "accepted"
    PRE_MIGRATING = "pre-migrating"
    MIGRATING = "migrating"
    RUNNING = "running"
    COMPLETED = "completed"
    FINISHED = "finished"
    CONFIRMING = "confirming"
    CONFIRMED = "confirmed"
    REVERTING = "reverting"
    REVERTED = "reverted"
    DONE = "done"
    ERROR = "error"
    FAILED = "failed"
    # Nova's in-progress statuses of a live migration (GET /servers/{id}/migrations).
    LIVE_IN_PROGRESS = ("queued", "preparing", "running", "post-migrating")

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    server = models.ForeignKey("aggregates.Server", on_delete=models.CASCADE, related_name="migrations")
    migration_type = models.CharField(max_length=20, choices=TYPES, db_index=True)
    status = models.CharField(max_length=20, db_index=True)
    source_compute = models.CharField(max_length=255, null=True, blank=True, db_index=True)
    source_node = models.CharField(max_length=255, null=True, blank=True)
    dest_compute = models.CharField(max_length=255, null=True, blank=True, db_index=True)
    dest_node = models.CharField(max_length=255, null=True, blank=True)
    dest_host = models.CharField(max_length=255, null=True, blank=True)
    old_instance_type_id = models.IntegerField(null=True, blank=True)
    new_instance_type_id = models.IntegerField(null=True, blank=True)
    project_id = models.CharField(max_length=255, blank=True, default="")
    user_id = models.CharField(max_length=255, blank=True, default="")
    # What was asked: requested_host, preferred_aggregates, confirm, initiator,
    # block_migration, force, target_state, the server's vm_state before.
    request = models.JSONField(default=dict, blank=True)
    decision = models.ForeignKey(
        "aggregates.SchedulingDecision", null=True, blank=True, on_delete=models.SET_NULL, related_name="migrations"
    )
    # Why the move did not happen (the scheduler's fault message), or "".
    message = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["server", "status"], name="migration_server_status")]

    def __str__(self) -> str:
        return f"{self.migration_type} {self.uuid} ({self.status})"
