"""Pre-caching jobs: one row per request (the job), one per member host, one
per (host, image). The job's ``lease_expires_at`` is the runner's heartbeat:
a job ``running`` with an expired lease lost its worker and is resumed (or
failed) by the drain."""

import uuid

from django.db import models
from django.utils import timezone


class ImageCacheJob(models.Model):
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
    # The aggregate may be deleted later; the job keeps what it was.
    aggregate_id = models.IntegerField(db_index=True)
    aggregate_uuid = models.UUIDField()
    aggregate_name = models.CharField(max_length=255)
    image_ids = models.JSONField(default=list)
    status = models.CharField(max_length=32, choices=STATUSES, default=QUEUED, db_index=True)
    error = models.TextField(blank=True, default="")
    requested_by = models.CharField(max_length=255, blank=True, default="")
    project_id = models.CharField(max_length=255, blank=True, default="")
    request_id = models.CharField(max_length=255, blank=True, default="")
    # The periodic task that created it, when it was a recurring pre-cache.
    schedule_name = models.CharField(max_length=200, blank=True, default="")
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
        return f"image cache job {self.uuid} ({self.status})"

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if self.status in self.FINISHED else 0
        return int(self.done * 100 / self.total)

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class ImageCacheHost(models.Model):
    PENDING = "pending"
    CACHING = "caching"
    COMPLETED = "completed"
    SKIPPED = "skipped"
    ERROR = "error"
    STATUSES = [(s, s) for s in (PENDING, CACHING, COMPLETED, SKIPPED, ERROR)]
    FINISHED = (COMPLETED, SKIPPED, ERROR)

    job = models.ForeignKey(ImageCacheJob, on_delete=models.CASCADE, related_name="host_items")
    host = models.CharField(max_length=255)
    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    reason = models.TextField(blank=True, default="")
    # 1-based completion order (the progress event's index), once finished.
    finished_index = models.IntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["job", "host"], name="uniq_image_cache_job_host")]

    def __str__(self):
        return f"{self.host} ({self.status})"


class ImageCacheResult(models.Model):
    PENDING = "pending"
    CACHING = "caching"
    CACHED = "cached"
    EXISTING = "existing"
    SKIPPED = "skipped"
    ERROR = "error"
    STATUSES = [(s, s) for s in (PENDING, CACHING, CACHED, EXISTING, SKIPPED, ERROR)]
    FINISHED = (CACHED, EXISTING, SKIPPED, ERROR)
    SUCCEEDED = (CACHED, EXISTING)

    host_item = models.ForeignKey(ImageCacheHost, on_delete=models.CASCADE, related_name="image_items")
    image_id = models.UUIDField(db_index=True)
    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    error = models.TextField(blank=True, default="")
    bytes = models.BigIntegerField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["host_item", "image_id"], name="uniq_image_cache_host_image")]

    def __str__(self):
        return f"{self.image_id} on {self.host_item_id} ({self.status})"
