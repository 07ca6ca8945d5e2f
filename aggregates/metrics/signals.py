"""Celery task durations and failures, from Celery's signals (connected when
Django's apps are ready: in web processes, where eager tasks run, and in
workers)."""

import time
from typing import Any

from celery import signals

from aggregates.metrics import instruments

_started: dict[str, float] = {}


def _task_started(task_id: str | None = None, **kwargs: Any) -> None:
    if task_id:
        _started[task_id] = time.monotonic()


def _task_finished(task_id: str | None = None, task: Any = None, state: str | None = None, **kwargs: Any) -> None:
    started = _started.pop(task_id or "", None)
    if started is not None and task is not None:
        instruments.task_finished(task.name, state or "UNKNOWN", time.monotonic() - started)


def _task_failed(sender: Any = None, **kwargs: Any) -> None:
    if sender is not None:
        instruments.task_failed(sender.name)


def connect() -> None:
    signals.task_prerun.connect(_task_started, weak=False, dispatch_uid="corral-metrics-prerun")
    signals.task_postrun.connect(_task_finished, weak=False, dispatch_uid="corral-metrics-postrun")
    signals.task_failure.connect(_task_failed, weak=False, dispatch_uid="corral-metrics-failure")
