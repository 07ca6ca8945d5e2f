"""The fields every long job's row has: its status, progress, who asked,
and the runner's lease (``lease_expires_at`` is the runner's heartbeat: a
job ``running`` with an expired lease lost its worker); and the leases on
roles only one process may hold at a time (the beat)."""

import uuid

from django.db import models
from django.utils import timezone


class LongJob(models.Model):
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
    status = models.CharField(max_length=32, choices=STATUSES, default=QUEUED, db_index=True)
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
        abstract = True
        ordering = ["-created_at", "-id"]

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if self.status in self.FINISHED else 0
        return int(self.done * 100 / self.total)

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class Lease(models.Model):
    """A role only one process may hold at a time (``name``, e.g. the beat):
    ``holder`` has it until ``expires_at`` and renews it as it goes; once
    expired, the next process to ask takes it."""

    name = models.CharField(max_length=64, unique=True)
    holder = models.CharField(max_length=255, blank=True, default="")
    expires_at = models.DateTimeField(default=timezone.now)
