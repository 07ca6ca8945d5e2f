"""Image records as Glance keeps them: core attributes as columns, extra
properties and tags as rows of their own (``ImageProperty``, ``ImageTag``), and the data in a file
under ``IMAGE_STORE_DIR`` named by the image id (see ``storage``)."""

import uuid

from django.db import models
from django.utils import timezone


class Image(models.Model):
    QUEUED = "queued"
    SAVING = "saving"
    ACTIVE = "active"
    STATUSES = [(QUEUED, "queued"), (SAVING, "saving"), (ACTIVE, "active")]

    PUBLIC = "public"
    COMMUNITY = "community"
    SHARED = "shared"
    PRIVATE = "private"
    VISIBILITIES = [(PUBLIC, "public"), (COMMUNITY, "community"), (SHARED, "shared"), (PRIVATE, "private")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=255, null=True, blank=True)
    status = models.CharField(max_length=30, choices=STATUSES, default=QUEUED, db_index=True)
    visibility = models.CharField(max_length=16, choices=VISIBILITIES, default=SHARED, db_index=True)
    disk_format = models.CharField(max_length=32, null=True, blank=True)
    container_format = models.CharField(max_length=32, null=True, blank=True)
    size = models.BigIntegerField(null=True, blank=True)
    virtual_size = models.BigIntegerField(null=True, blank=True)
    checksum = models.CharField(max_length=32, null=True, blank=True)
    os_hash_algo = models.CharField(max_length=64, null=True, blank=True)
    os_hash_value = models.CharField(max_length=128, null=True, blank=True)
    min_disk = models.PositiveIntegerField(default=0)
    min_ram = models.PositiveIntegerField(default=0)
    protected = models.BooleanField(default=False)
    os_hidden = models.BooleanField(default=False)
    # A project id (Glance does not check that it names a project).
    owner = models.CharField(max_length=255, null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name or '(no name)'} ({self.id})"


class ImageProperty(models.Model):
    """An extra property: a string value under a key that is not a core attribute."""

    image = models.ForeignKey(Image, on_delete=models.CASCADE, related_name="property_items")
    name = models.CharField(max_length=255)
    value = models.TextField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["image", "name"], name="image_property_unique_name")]
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name}={self.value}"


class ImageTag(models.Model):
    image = models.ForeignKey(Image, on_delete=models.CASCADE, related_name="tag_items")
    value = models.CharField(max_length=255)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["image", "value"], name="image_tag_unique_value")]
        ordering = ["value"]

    def __str__(self) -> str:
        return self.value
