"""The beat's scheduler (CELERY_BEAT_SCHEDULER): django-celery-beat's, which
also touches BEAT_HEARTBEAT_FILE on every tick of the beat's loop (every few
seconds, at most its max interval), so that ``manage.py liveness beat`` can
tell a beat that runs from one that hangs or died."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django_celery_beat.schedulers import DatabaseScheduler


def touch_heartbeat() -> None:
    path = Path(settings.BEAT_HEARTBEAT_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


class HeartbeatScheduler(DatabaseScheduler):
    def tick(self, *args: Any, **kwargs: Any) -> float:
        interval: float = super().tick(*args, **kwargs)
        touch_heartbeat()
        return interval
