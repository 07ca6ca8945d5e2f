"""Maintenance jobs: one row per start or stop of a host's maintenance, one
per server to move. The job's ``lease_expires_at`` is the runner's
heartbeat: a job ``running`` with an expired lease lost its worker and is
resumed by the drain (``corral.maintenance.drain``)."""

import uuid

from django.db import models
from django.utils import timezone


class MaintenanceJob(models.Model):
    START = "start"
    STOP = "stop"
    ACTIONS = [(START, "start"), (STOP, "stop")]
    LIVE = "live"
    COLD = "cold"
    STRATEGIES = [(LIVE, "live"), (COLD, "cold")]

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    COMPLETED_WITH_ERRORS = "completed_with_errors"
    FAILED = "failed"
    STATUSES = [
        (QUEUED, "queued"),
        (RUNNING, "running"),
        (COMPLETED, "completed"),
        (COMPLETED_WITH_ERRORS, "completed with errors"),
        (FAILED, "failed"),
    ]
    FINISHED = (COMPLETED, COMPLETED_WITH_ERRORS, FAILED)

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    host = models.CharField(max_length=255, db_index=True)
    action = models.CharField(max_length=8, choices=ACTIONS)
    status = models.CharField(max_length=32, choices=STATUSES, default=QUEUED, db_index=True)
    reason = models.CharField(max_length=255, blank=True, default="")
    strategy = models.CharField(max_length=8, choices=STRATEGIES, default=LIVE)
    prefer_aggregate_peers = models.BooleanField(default=True)
    rebalance = models.BooleanField(default=False)
    error = models.TextField(blank=True, default="")
    requested_by = models.CharField(max_length=255, blank=True, default="")
    request_id = models.CharField(max_length=255, blank=True, default="")
    total = models.IntegerField(default=0)
    done = models.IntegerField(default=0)
    attempts = models.IntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    worker = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"maintenance {self.action} of {self.host} {self.uuid} ({self.status})"

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if self.status in self.FINISHED else 0
        return int(self.done * 100 / self.total)

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class MaintenanceItem(models.Model):
    PENDING = "pending"
    MOVING = "moving"
    MOVED = "moved"
    FAILED = "failed"
    SKIPPED = "skipped"
    STATUSES = [(s, s) for s in (PENDING, MOVING, MOVED, FAILED, SKIPPED)]
    FINISHED = (MOVED, FAILED, SKIPPED)

    job = models.ForeignKey(MaintenanceJob, on_delete=models.CASCADE, related_name="items")
    server_uuid = models.UUIDField(db_index=True)
    name = models.CharField(max_length=255, blank=True, default="")
    source = models.CharField(max_length=255)
    target = models.CharField(max_length=255, null=True, blank=True)
    # Where a stop's move back goes (the host); null for a drain.
    requested_host = models.CharField(max_length=255, null=True, blank=True)
    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    migration_uuid = models.CharField(max_length=36, blank=True, default="")
    decision_uuid = models.CharField(max_length=36, blank=True, default="")
    message = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["job", "server_uuid"], name="uniq_maintenance_job_server")]

    def __str__(self):
        return f"{self.server_uuid} {self.source}->{self.target or '?'} ({self.status})"
