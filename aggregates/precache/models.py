"""Pre-caching jobs: one row per request (the job), one per member host, one
per (host, image). The job's ``lease_expires_at`` is the runner's heartbeat:
a job ``running`` with an expired lease lost its worker and is resumed (or
failed) by the drain."""

from django.db import models

from aggregates.jobs.models import LongJob


class ImageCacheJob(LongJob):
    # The aggregate may be deleted later; the job keeps what it was.
    aggregate_id = models.IntegerField(db_index=True)
    aggregate_uuid = models.UUIDField()
    aggregate_name = models.CharField(max_length=255)
    image_ids = models.JSONField(default=list)
    project_id = models.CharField(max_length=255, blank=True, default="")
    # The periodic task that created it, when it was a recurring pre-cache.
    schedule_name = models.CharField(max_length=200, blank=True, default="")

    def __str__(self) -> str:
        return f"image cache job {self.uuid} ({self.status})"


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

    def __str__(self) -> str:
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

    def __str__(self) -> str:
        return f"{self.image_id} on {self.host_item_id} ({self.status})"
