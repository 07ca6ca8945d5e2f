"""The login throttle: failed logins per user name and per source address.

Shared by the Keystone surface (``POST /identity/v3/auth/tokens``) and the
console's login form. Failures are rows of ``LoginFailure`` in the database,
so every gunicorn worker counts the same ones (Django's default cache is
per process). Successful logins are never counted. Settings:
``LOGIN_THROTTLE_USER_ATTEMPTS`` and ``LOGIN_THROTTLE_ADDRESS_ATTEMPTS``
(failures allowed per window), ``LOGIN_THROTTLE_WINDOW`` (seconds)."""

import math
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.audit.models import Event

from .caller import Caller
from .models import LoginFailure


class Throttled(Exception):
    """Too many failed logins: retry after ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after
        self.message = (
            f"Too many failed login attempts. Wait {retry_after} second(s) before trying again, "
            "or ask an administrator."
        )
        super().__init__(self.message)


def _keys(username: str, address: str | None) -> list[tuple[str, int]]:
    keys = [(f"user:{username[:150]}", settings.LOGIN_THROTTLE_USER_ATTEMPTS)]
    if address:
        keys.append((f"addr:{address[:45]}", settings.LOGIN_THROTTLE_ADDRESS_ATTEMPTS))
    return keys


def check(username: str, address: str | None, request_id: str = "", surface: str = "api") -> None:
    """Raise Throttled (and record the refusal) when ``username`` or
    ``address`` has used up its failed attempts in the current window.
    The password is not checked at all then."""
    window = timedelta(seconds=settings.LOGIN_THROTTLE_WINDOW)
    now = timezone.now()
    since = now - window
    retry_after = 0
    for key, limit in _keys(username, address):
        times = list(
            LoginFailure.objects.filter(key=key, created_at__gt=since)
            .order_by("-created_at")
            .values_list("created_at", flat=True)[:limit]
        )
        if limit and len(times) >= limit:
            # Free again when the oldest of the last ``limit`` failures leaves the window.
            wait = (times[-1] + window - now).total_seconds()
            retry_after = max(retry_after, math.ceil(wait), 1)
    if retry_after:
        events.record(
            Caller(username=username[:150], request_id=request_id),
            "identity.throttled",
            object_type="token",
            priority=Event.ERROR,
            payload={"outcome": "throttled", "surface": surface, "address": address or "", "retry_after": retry_after},
        )
        raise Throttled(retry_after)


def record_failure(username: str, address: str | None) -> None:
    """Count one failed login against ``username`` and ``address``; forget
    failures older than the window."""
    now = timezone.now()
    with transaction.atomic():
        LoginFailure.objects.filter(created_at__lt=now - timedelta(seconds=settings.LOGIN_THROTTLE_WINDOW)).delete()
        LoginFailure.objects.bulk_create([LoginFailure(key=key, created_at=now) for key, _ in _keys(username, address)])
