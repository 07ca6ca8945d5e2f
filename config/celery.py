"""The Celery application. Every module that defines tasks is listed in
TASK_MODULES, so that a worker registers them all at start."""

import logging.config
import os
from contextvars import Token
from typing import Any

from celery import Celery, Task, signals
from django.conf import settings

from config import request_context

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

TASK_MODULES = (
    "aggregates.mirroring.tasks",
    "aggregates.precache.tasks",
    "aggregates.servers.tasks",
    "aggregates.moves.tasks",
    "aggregates.maintenance.tasks",
    "aggregates.capacity.tasks",
)

app = Celery("corral")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = TASK_MODULES


# --- request ids ------------------------------------------------------------
#
# A task carries the request ids of the work that queued it in its message
# headers, and runs with them as its request context (config/request_context.py):
# its log lines, its events and its placement calls name them. A task queued
# by no request (the beat) gets a request id of its own.

REQUEST_ID_HEADER = "corral_request_id"
GLOBAL_REQUEST_ID_HEADER = "corral_global_request_id"

_tokens: dict[str, Token[request_context.RequestContext]] = {}


@signals.before_task_publish.connect
def publish_request_ids(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """Put the current request ids in the headers of the message being sent."""
    if headers is None:
        return
    context = request_context.current()
    if context.request_id:
        headers.setdefault(REQUEST_ID_HEADER, context.request_id)
    if context.global_request_id:
        headers.setdefault(GLOBAL_REQUEST_ID_HEADER, context.global_request_id)


def _header(task: "Task[Any, Any]", name: str) -> str:
    request = task.request
    value = getattr(request, name, None) or (getattr(request, "headers", None) or {}).get(name)
    return value if isinstance(value, str) else ""


@signals.task_prerun.connect
def bind_request_ids(task_id: str | None = None, task: "Task[Any, Any] | None" = None, **kwargs: Any) -> None:
    """The task runs with the ids of its headers; run in this process (eager,
    no headers) it keeps the ids of the work that called it; else a new one."""
    if task is None or task_id is None:
        return
    outer = request_context.current()
    request_id = _header(task, REQUEST_ID_HEADER) or outer.request_id or request_context.new_request_id()
    global_id = request_context.valid_global_id(_header(task, GLOBAL_REQUEST_ID_HEADER)) or outer.global_request_id
    _tokens[task_id] = request_context.bind(
        request_context.RequestContext(
            request_id=request_id,
            global_request_id=global_id,
            user=outer.user,
            project=outer.project,
            route=f"task {task.name}",
        )
    )


@signals.task_postrun.connect
def clear_request_ids(task_id: str | None = None, **kwargs: Any) -> None:
    """What the task's context replaced comes back."""
    token = _tokens.pop(task_id or "", None)
    if token is not None:
        request_context.reset(token)


@signals.setup_logging.connect
def use_django_logging(loglevel: int | str | None = None, **kwargs: Any) -> None:
    """A worker or beat logs as the web processes do (settings.LOGGING: the
    request ids on every line, LOG_FORMAT), not in Celery's own format; its
    ``-l`` level, when given, is the root level."""
    logging.config.dictConfig(settings.LOGGING)
    if loglevel:
        logging.getLogger().setLevel(loglevel)
