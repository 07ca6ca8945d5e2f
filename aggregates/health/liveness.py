"""Liveness of the processes that serve no HTTP, for a process manager's
probe (``manage.py liveness worker|beat``): a worker answers Celery's ping;
the beat touched its heartbeat file recently."""

import socket
import time
from pathlib import Path

from celery import current_app
from django.conf import settings


def worker_alive(name: str | None = None, timeout: float = 5.0) -> tuple[bool, str]:
    """Whether Celery worker ``name`` (default ``celery@<this host>``, the
    name a worker takes by default) answers a ping within ``timeout``."""
    if not settings.CELERY_BROKER_URL:
        return False, "no broker: CELERY_BROKER_URL is empty, there are no workers"
    name = name or f"celery@{socket.gethostname()}"
    try:
        replies = current_app.control.ping(destination=[name], timeout=timeout)
    except Exception as exc:
        return False, f"the broker could not be reached: {type(exc).__name__}: {exc}"
    if any(name in reply for reply in replies or []):
        return True, f"{name} answered"
    return False, f"{name} did not answer within {timeout:g} s"


def beat_alive(max_age: float | None = None) -> tuple[bool, str]:
    """Whether the beat touched BEAT_HEARTBEAT_FILE in the last ``max_age``
    seconds (default BEAT_HEARTBEAT_MAX_AGE)."""
    max_age = settings.BEAT_HEARTBEAT_MAX_AGE if max_age is None else max_age
    path = Path(settings.BEAT_HEARTBEAT_FILE)
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return False, f"no heartbeat file at {path}"
    if age > max_age:
        return False, f"the last heartbeat is {age:.0f} s old (more than {max_age:g} s)"
    return True, f"the last heartbeat is {age:.1f} s old"
