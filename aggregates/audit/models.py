"""The audit log: one event per operation or refusal."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class Event(models.Model):
    """A notification-style record of an operation (``aggregate.add_host.end``,
    ``compute.exception``, ...), kept for the console's audit log."""

    INFO = "INFO"
    ERROR = "ERROR"

    event_type = models.CharField(max_length=255, db_index=True)
    priority = models.CharField(max_length=16, default=INFO)
    publisher_id = models.CharField(max_length=255, default="")
    object_type = models.CharField(max_length=64, blank=True, default="", db_index=True)
    object_id = models.CharField(max_length=255, blank=True, default="", db_index=True)
    object_uuid = models.CharField(max_length=64, blank=True, default="")
    payload = models.JSONField(default=dict)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    username = models.CharField(max_length=150, blank=True, default="")
    project_id = models.CharField(max_length=64, blank=True, default="")
    request_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    # The caller's own request id (an inbound X-OpenStack-Request-ID), when it gave one.
    global_request_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.event_type} {self.object_type} {self.object_id}"
