"""Capacity samples: per zone or aggregate and sample time, how many more
servers of each public flavor fitted and what stopped them (one row per
group and sample; the figures of every flavor in one JSON object)."""

from django.db import models


class CapacitySample(models.Model):
    ZONE = "availability_zone"
    AGGREGATE = "aggregate"
    SCOPES = [(ZONE, "availability zone"), (AGGREGATE, "aggregate")]

    taken_at = models.DateTimeField(db_index=True)
    scope = models.CharField(max_length=20, choices=SCOPES)
    name = models.CharField(max_length=255)
    zone = models.CharField(max_length=255, blank=True, default="")
    hosts = models.IntegerField(default=0)
    # {flavor name: {"id": flavorid, "servers": n, "limited_by": what}}
    figures = models.JSONField(default=dict)

    class Meta:
        ordering = ["taken_at", "scope", "name"]
        indexes = [models.Index(fields=["scope", "name", "taken_at"], name="capacity_sample_group")]

    def __str__(self) -> str:
        return f"{self.scope} {self.name} at {self.taken_at:%Y-%m-%d %H:%M}"

    @classmethod
    def latest(cls) -> "list[CapacitySample]":
        """The rows of the latest sample (none before the first): two queries."""
        last = cls.objects.aggregate(last=models.Max("taken_at"))["last"]
        if last is None:
            return []
        return list(cls.objects.filter(taken_at=last).order_by("scope", "name"))
