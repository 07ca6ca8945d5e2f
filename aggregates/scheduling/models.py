"""Stored scheduling decisions: the explanation of every host's fate for one
request, linked from the servers it placed or failed to place."""

import uuid

from django.db import models
from django.utils import timezone


class SchedulingDecision(models.Model):
    CHOSEN = "chosen"
    NO_VALID_HOST = "no_valid_host"
    EXPLAINED = "explained"  # os-scheduler-explain: nothing was claimed
    OUTCOMES = [(CHOSEN, "chosen"), (NO_VALID_HOST, "no valid host"), (EXPLAINED, "explained only")]

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    outcome = models.CharField(max_length=20, choices=OUTCOMES)
    project_id = models.CharField(max_length=255, blank=True, default="")
    # The request as given: flavor, image, zone, number of instances.
    request = models.JSONField(default=dict)
    # The explanation as os-scheduler-explain answers it (placement_query,
    # candidates, chosen, hosts: one row per compute node).
    explanation = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.outcome} {self.uuid}"
