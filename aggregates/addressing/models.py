"""Address pools (a name, a CIDR, a gateway; internal or external; serving
one zone, one aggregate's hosts, or every host) and the addresses given to
servers from them. An address is held by one server at most: the unique
constraint on ``address`` holds on every database, whatever the pools."""

import uuid

from django.db import models
from django.utils import timezone

from aggregates.host_aggregates.models import Aggregate
from aggregates.servers.models import Server


class AddressPool(models.Model):
    INTERNAL = "internal"
    EXTERNAL = "external"
    KINDS = [(INTERNAL, "internal"), (EXTERNAL, "external")]
    GLOBAL = "global"
    ZONE = "zone"
    AGGREGATE = "aggregate"
    SCOPES = [(GLOBAL, "global"), (ZONE, "zone"), (AGGREGATE, "aggregate")]

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=255, unique=True)
    cidr = models.CharField(max_length=64)
    gateway = models.CharField(max_length=45, blank=True, default="")
    kind = models.CharField(max_length=10, choices=KINDS, default=INTERNAL)
    scope = models.CharField(max_length=10, choices=SCOPES, default=GLOBAL)
    # The zone a zone-scoped pool serves; the aggregate an aggregate-scoped one
    # serves (null once that aggregate is deleted: the pool then serves no host).
    zone = models.CharField(max_length=255, blank=True, default="")
    aggregate = models.ForeignKey(
        Aggregate, null=True, blank=True, on_delete=models.SET_NULL, related_name="address_pools"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.cidr})"


class AddressAllocation(models.Model):
    """One address of a pool held by a server: ``fixed`` (its own) or
    ``floating`` (an external pool's, assigned on top); or taken for it by a
    move under way (``reserved_for`` its destination)."""

    FIXED = "fixed"
    FLOATING = "floating"
    KINDS = [(FIXED, "fixed"), (FLOATING, "floating")]

    pool = models.ForeignKey(AddressPool, on_delete=models.PROTECT, related_name="allocations")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="address_rows")
    address = models.CharField(max_length=45)
    version = models.IntegerField(default=4)
    kind = models.CharField(max_length=10, choices=KINDS, default=FIXED)
    mac_addr = models.CharField(max_length=17)
    # Taken by a move whose claim on this host holds, for the server to hold
    # once it arrives ('' for an address the server holds now): counted as
    # used by every pool figure and never shown among the server's addresses.
    reserved_for = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["address"], name="address_allocation_unique")]

    def __str__(self) -> str:
        return f"{self.address} ({self.kind})"
