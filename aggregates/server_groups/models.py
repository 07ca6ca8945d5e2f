"""Server groups and their members, as Nova's API database keeps them: a
group has one policy (and, for anti-affinity, the ``max_server_per_host``
rule); a member is a server uuid (a server is in one group at most)."""

import uuid

from django.db import models
from django.utils import timezone


class ServerGroup(models.Model):
    AFFINITY = "affinity"
    ANTI_AFFINITY = "anti-affinity"
    SOFT_AFFINITY = "soft-affinity"
    SOFT_ANTI_AFFINITY = "soft-anti-affinity"
    POLICIES = [
        (AFFINITY, "affinity"),
        (ANTI_AFFINITY, "anti-affinity"),
        (SOFT_AFFINITY, "soft-affinity"),
        (SOFT_ANTI_AFFINITY, "soft-anti-affinity"),
    ]

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=255)
    project_id = models.CharField(max_length=255, db_index=True)
    user_id = models.CharField(max_length=255, blank=True, default="")
    policy = models.CharField(max_length=32, choices=POLICIES)
    # {"max_server_per_host": n} for anti-affinity from 2.64, else {}.
    rules = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.policy})"


class ServerGroupMember(models.Model):
    group = models.ForeignKey(ServerGroup, on_delete=models.CASCADE, related_name="members")
    server_uuid = models.UUIDField(unique=True)
    # The host the scheduler admitted the member to, under the group's lock,
    # while its boot or move is in progress (the server's own host counts
    # once it is there): a member being placed counts for the next one.
    host = models.CharField(max_length=255, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.server_uuid} in {self.group_id}"
