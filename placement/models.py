"""Placement data: resource providers (in trees), their inventories, traits and
aggregates, and the consumers whose allocations use those inventories.

Every provider carries a ``generation`` that grows by one on each change to
the provider, its inventory, traits, aggregates or allocations; writers
compare it, under a row lock, to the one the client read (409
``placement.concurrent_update`` on a mismatch). Consumers have a generation
of their own for their allocations (microversion 1.28).
"""

from datetime import datetime
from functools import cache

from django.db import connection, models

# Largest value an inventory field may hold (upstream's MAX_INT).
MAX_INT = 0x7FFFFFFF
# Custom resource classes get ids from here on; below it are the standard ones,
# numbered by their position in os_resource_classes.STANDARDS.
MIN_CUSTOM_RESOURCE_CLASS_ID = 10000


@cache
def quoted_table(model: type[models.Model]) -> str:
    """The model's table as the SQL written by hand in placement's services names it."""
    return connection.ops.quote_name(model._meta.db_table)


class Timestamped(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def last_modified(self) -> datetime:
        return self.updated_at or self.created_at


class ResourceClass(Timestamped):
    id = models.IntegerField(primary_key=True)
    name = models.CharField(max_length=255, unique=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_standard(self) -> bool:
        return self.id < MIN_CUSTOM_RESOURCE_CLASS_ID


class Trait(Timestamped):
    name = models.CharField(max_length=255, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class PlacementAggregate(models.Model):
    uuid = models.CharField(max_length=36, unique=True)

    def __str__(self) -> str:
        return self.uuid


class ResourceProvider(Timestamped):
    uuid = models.CharField(max_length=36, unique=True)
    name = models.CharField(max_length=200, unique=True)
    generation = models.IntegerField(default=0)
    # The root of a tree has root = itself and no parent.
    root = models.ForeignKey("self", null=True, on_delete=models.PROTECT, related_name="+", db_index=True)
    parent = models.ForeignKey("self", null=True, on_delete=models.PROTECT, related_name="children", db_index=True)
    traits = models.ManyToManyField(Trait, through="ResourceProviderTrait", related_name="providers")
    aggregates = models.ManyToManyField(
        PlacementAggregate, through="ResourceProviderAggregate", related_name="providers"
    )

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.uuid})"


class ResourceProviderTrait(models.Model):
    resource_provider = models.ForeignKey(ResourceProvider, on_delete=models.CASCADE)
    trait = models.ForeignKey(Trait, on_delete=models.PROTECT)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["resource_provider", "trait"], name="uniq_rp_trait")]
        indexes = [models.Index(fields=["trait", "resource_provider"], name="rp_trait_trait_idx")]


class ResourceProviderAggregate(models.Model):
    resource_provider = models.ForeignKey(ResourceProvider, on_delete=models.CASCADE)
    aggregate = models.ForeignKey(PlacementAggregate, on_delete=models.CASCADE)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["resource_provider", "aggregate"], name="uniq_rp_aggregate")]
        indexes = [models.Index(fields=["aggregate", "resource_provider"], name="rp_agg_agg_idx")]


class Inventory(Timestamped):
    resource_provider = models.ForeignKey(ResourceProvider, on_delete=models.CASCADE, related_name="inventories")
    resource_class = models.ForeignKey(ResourceClass, on_delete=models.PROTECT, related_name="+")
    total = models.IntegerField()
    reserved = models.IntegerField(default=0)
    min_unit = models.IntegerField(default=1)
    max_unit = models.IntegerField(default=MAX_INT)
    step_size = models.IntegerField(default=1)
    allocation_ratio = models.FloatField(default=1.0)
    # What the allocations of this provider and class add up to, kept by every
    # allocation write in its transaction while it holds the provider's lock
    # (placement.services.allocations): usages and capacity are read from it
    # instead of summing the allocations.
    used = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["resource_provider", "resource_class"], name="uniq_inventory_rp_rc")
        ]
        indexes = [models.Index(fields=["resource_class", "resource_provider"], name="inventory_rc_idx")]

    @property
    def capacity(self) -> int:

        return int((self.total - self.reserved) * self.allocation_ratio)


class Project(models.Model):
    external_id = models.CharField(max_length=255, unique=True)


class User(models.Model):
    external_id = models.CharField(max_length=255, unique=True)


class ConsumerType(Timestamped):
    name = models.CharField(max_length=255, unique=True)


class Consumer(Timestamped):
    uuid = models.CharField(max_length=36, unique=True)
    project = models.ForeignKey(Project, on_delete=models.PROTECT)
    user = models.ForeignKey(User, on_delete=models.PROTECT)
    generation = models.IntegerField(default=0)
    consumer_type = models.ForeignKey(ConsumerType, null=True, on_delete=models.PROTECT)

    class Meta:
        indexes = [models.Index(fields=["project", "user"], name="consumer_project_user_idx")]


class Allocation(Timestamped):
    resource_provider = models.ForeignKey(ResourceProvider, on_delete=models.PROTECT, related_name="allocations")
    consumer = models.ForeignKey(Consumer, on_delete=models.CASCADE, related_name="allocations")
    resource_class = models.ForeignKey(ResourceClass, on_delete=models.PROTECT, related_name="+")
    used = models.IntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["resource_provider", "resource_class", "used"], name="alloc_rp_rc_used_idx"),
            models.Index(fields=["resource_class"], name="alloc_rc_idx"),
        ]
