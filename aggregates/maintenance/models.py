"""Maintenance jobs: one row per start or stop of a host's maintenance, one
per server to move. The job's ``lease_expires_at`` is the runner's
heartbeat: a job ``running`` with an expired lease lost its worker and is
resumed by the drain (``corral.maintenance.drain``)."""

from django.db import models

from aggregates.jobs.models import LongJob


class MaintenanceJob(LongJob):
    START = "start"
    STOP = "stop"
    ACTIONS = [(START, "start"), (STOP, "stop")]
    LIVE = "live"
    COLD = "cold"
    STRATEGIES = [(LIVE, "live"), (COLD, "cold")]

    host = models.CharField(max_length=255, db_index=True)
    action = models.CharField(max_length=8, choices=ACTIONS)
    reason = models.CharField(max_length=255, blank=True, default="")
    strategy = models.CharField(max_length=8, choices=STRATEGIES, default=LIVE)
    prefer_aggregate_peers = models.BooleanField(default=True)
    rebalance = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"maintenance {self.action} of {self.host} {self.uuid} ({self.status})"


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

    def __str__(self) -> str:
        return f"{self.server_uuid} {self.source}->{self.target or '?'} ({self.status})"
