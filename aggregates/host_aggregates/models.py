"""Host aggregates: named host groups with key/value metadata. The rules that
span rows (one zone per host, delete only when empty) live in ``services``."""

import uuid

from django.db import models
from django.utils import timezone


class Aggregate(models.Model):
    name = models.CharField(max_length=255, unique=True)
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class AggregateMetadata(models.Model):
    aggregate = models.ForeignKey(Aggregate, on_delete=models.CASCADE, related_name="metadata_items")
    key = models.CharField(max_length=255)
    value = models.CharField(max_length=255)

    class Meta:
        ordering = ["key"]
        constraints = [models.UniqueConstraint(fields=["aggregate", "key"], name="uniq_aggregate_metadata_key")]
        indexes = [models.Index(fields=["key", "value"])]

    def __str__(self) -> str:
        return f"{self.key}={self.value}"


class AggregateHost(models.Model):
    """Membership of a host (by its service host name, matched exactly) in an aggregate."""

    aggregate = models.ForeignKey(Aggregate, on_delete=models.CASCADE, related_name="host_items")
    host = models.CharField(max_length=255, db_index=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["aggregate", "host"], name="uniq_aggregate_host")]

    def __str__(self) -> str:
        return f"{self.host} in {self.aggregate_id}"
