"""The request ids of the work being done, and the log lines that carry them.

Every request gets a new local request id (``req-<uuid>``, answered in
``X-OpenStack-Request-ID``); an inbound ``X-OpenStack-Request-ID`` of that
exact form is kept as the global request id, as oslo.middleware's
request_id middleware does (anything else is ignored). The ids of the work
in progress, and the user, project and route of a request, are held in
context variables: set by the request-id middleware, by a Celery task from
its message headers, and by the outbox applier from the row it applies;
each setter restores what was there when it is done (``bound``), so an
in-process placement call inside a request, or an eager task, gives the
request its own ids back.

``ContextFilter`` puts them on every log record its handler sees;
``logging_config`` builds the LOGGING setting (text or one JSON object a
line, LOG_FORMAT). Placement is sent ``outbound_id()``: the global request
id, else the local one, as Nova sends its global id to placement.

This module imports nothing of Corral's: the placement client and
placement itself read it.
"""

import json
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

HEADER = "X-OpenStack-Request-ID"
# oslo.middleware's ID_FORMAT: "req-" and a UUID in lower-case hex.
ID_FORMAT = re.compile(r"req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}")
FIELDS = ("request_id", "global_request_id", "user", "project", "route")
TEXT_FORMAT = (
    "%(asctime)s %(levelname)s %(name)s [%(request_id)s %(global_request_id)s %(user)s %(project)s] %(message)s"
)
LOG_FORMATS = ("text", "json")


@dataclass(frozen=True)
class RequestContext:
    """The ids and the caller of the work in progress ("" when unknown)."""

    request_id: str = ""
    global_request_id: str = ""
    user: str = ""
    project: str = ""
    route: str = ""
    # The base URLs this request reached the server at (scheme://host:port:
    # its Host header and the address the server listens on), "" when none.
    served_at: tuple[str, ...] = ()


_current: ContextVar[RequestContext] = ContextVar("corral_request_context", default=RequestContext())  # noqa: B039 - frozen


def new_request_id() -> str:
    return f"req-{uuid.uuid4()}"


def valid_global_id(value: str | None) -> str:
    """``value`` when it is an id of oslo's form (``req-`` + UUID), else ""."""
    return value if value and ID_FORMAT.fullmatch(value) else ""


def current() -> RequestContext:
    return _current.get()


def outbound_id() -> str:
    """The id sent to placement: the global request id, else the local one."""
    context = _current.get()
    return context.global_request_id or context.request_id


def bind(context: RequestContext) -> Token[RequestContext]:
    """Make ``context`` current; ``reset`` with the token gives the previous back."""
    return _current.set(context)


def reset(token: Token[RequestContext]) -> None:
    _current.reset(token)


@contextmanager
def bound(context: RequestContext) -> Iterator[RequestContext]:
    """``context`` is current inside the block."""
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


def update(**changes: str) -> None:
    """Change fields of the current context (the caller once authenticated,
    the route once resolved); the setter's ``reset`` undoes it with the rest."""
    fields: dict[str, Any] = dict(changes)
    _current.set(replace(_current.get(), **fields))


class ContextFilter(logging.Filter):
    """Puts the current request ids, user, project and route on each record
    (``-`` when there is none); keeps what a record already carries."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _current.get()
        for name in FIELDS:
            if not getattr(record, name, None):
                setattr(record, name, getattr(context, name) or "-")
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, the request ids, user,
    project, route, message (and the traceback, when there is one)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
        }
        for name in FIELDS:
            value = getattr(record, name, "-")
            entry[name] = None if value in ("-", "") else value
        entry["message"] = record.getMessage()
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str)


def logging_config(log_format: str = "text", level: str = "INFO") -> dict[str, Any]:
    """The LOGGING setting: one console handler with the context filter, in
    ``log_format`` (``text`` or ``json``)."""
    if log_format not in LOG_FORMATS:
        raise RuntimeError(f"LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, not {log_format!r}")
    formatter: dict[str, Any] = {"()": f"{__name__}.JsonFormatter"} if log_format == "json" else {"format": TEXT_FORMAT}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_context": {"()": f"{__name__}.ContextFilter"}},
        "formatters": {"corral": formatter},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "corral", "filters": ["request_context"]}
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {"django.request": {"level": "ERROR"}},
    }
