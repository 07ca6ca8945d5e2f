"""Image records as Glance keeps them: core attributes as columns, extra
properties and tags as rows of their own (``ImageProperty``, ``ImageTag``), and the data in a file
under ``IMAGE_STORE_DIR`` named by the image id (see ``storage``). A ``shared``
image's members (``ImageMember``) are the projects it is shared with, each
with its own answer (pending, accepted, rejected)."""

import uuid

from django.db import models
from django.utils import timezone


class Image(models.Model):
    QUEUED = "queued"
    SAVING = "saving"
    ACTIVE = "active"
    DEACTIVATED = "deactivated"
    STATUSES = [(QUEUED, "queued"), (SAVING, "saving"), (ACTIVE, "active"), (DEACTIVATED, "deactivated")]

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


class ImageMember(models.Model):
    """A project a ``shared`` image is shared with, and its answer. Glance
    does not check that ``member`` names a project, and neither does Corral."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    STATUSES = [(PENDING, "pending"), (ACCEPTED, "accepted"), (REJECTED, "rejected")]

    image = models.ForeignKey(Image, on_delete=models.CASCADE, related_name="members")
    member = models.CharField(max_length=255, db_index=True)
    status = models.CharField(max_length=20, choices=STATUSES, default=PENDING)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["image", "member"], name="image_member_unique_member")]
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.member} ({self.status})"
