"""Flavors, their extra specs and project access."""

from django.db import models
from django.utils import timezone


class Flavor(models.Model):
    flavorid = models.CharField(max_length=255, unique=True)
    name = models.CharField(max_length=255, unique=True)
    memory_mb = models.IntegerField()
    vcpus = models.IntegerField()
    root_gb = models.IntegerField(default=0)
    ephemeral_gb = models.IntegerField(default=0)
    swap = models.IntegerField(default=0)
    rxtx_factor = models.FloatField(default=1.0)
    is_public = models.BooleanField(default=True)
    disabled = models.BooleanField(default=False)
    description = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class FlavorExtraSpec(models.Model):
    flavor = models.ForeignKey(Flavor, on_delete=models.CASCADE, related_name="extra_spec_items")
    key = models.CharField(max_length=255)
    value = models.CharField(max_length=255)

    class Meta:
        ordering = ["key"]
        constraints = [models.UniqueConstraint(fields=["flavor", "key"], name="uniq_flavor_extra_spec_key")]

    def __str__(self) -> str:
        return f"{self.key}={self.value}"


class FlavorAccess(models.Model):
    flavor = models.ForeignKey(Flavor, on_delete=models.CASCADE, related_name="access_items")
    project_id = models.CharField(max_length=255)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["flavor", "project_id"], name="uniq_flavor_access")]

    def __str__(self) -> str:
        return f"{self.project_id} may use {self.flavor_id}"
