"""Pre-caching jobs: one row per request (the job), one per member host, one
per (host, image). The job's ``lease_expires_at`` is the runner's heartbeat:
a job ``running`` with an expired lease lost its worker and is resumed (or
failed) by the drain."""

from django.db import models
from django.utils import timezone

from aggregates.host_aggregates.models import Aggregate
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
    # A job of the aggregate's pinned images (``pins``): the agents are told
    # to keep them (never evicted).
    pinned = models.BooleanField(default=False)

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


class PinnedImage(models.Model):
    """An image the aggregate's hosts must always have cached (the pre-cache
    policy, ``pins``). Stored here, not in the aggregate's metadata, so that
    ``openstack aggregate set --property`` cannot change it by accident."""

    aggregate = models.ForeignKey(Aggregate, on_delete=models.CASCADE, related_name="pinned_images")
    image_id = models.UUIDField()
    # The pinned image this one replaces: unpinned once every host of the
    # aggregate has this one.
    replaces = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["aggregate", "image_id"], name="uniq_pinned_image")]

    def __str__(self) -> str:
        return f"{self.image_id} pinned on {self.aggregate_id}"


class CacheCheck(models.Model):
    """What the last re-check saw of one image in one host's cache."""

    CACHED = "cached"
    MISSING = "missing"
    ERROR = "error"
    STATES = [(s, s) for s in (CACHED, MISSING, ERROR)]

    host = models.CharField(max_length=255)
    image_id = models.UUIDField()
    state = models.CharField(max_length=16, choices=STATES)
    reason = models.TextField(blank=True, default="")
    checked_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["host", "image_id"]
        constraints = [models.UniqueConstraint(fields=["host", "image_id"], name="uniq_cache_check")]

    def __str__(self) -> str:
        return f"{self.image_id} on {self.host}: {self.state}"
