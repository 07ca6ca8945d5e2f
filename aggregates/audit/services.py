"""Notification-style audit events, stored for the console's audit log."""

import socket
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from aggregates.audit.models import Event
from aggregates.errors import ServiceError
from aggregates.identity.caller import Caller
from config import request_context

PUBLISHER = f"corral-api:{socket.gethostname()}"


def record(
    caller: Caller,
    event_type: str,
    object_type: str = "",
    object_id: str | int = "",
    object_uuid: str | UUID = "",
    payload: dict[str, Any] | None = None,
    priority: str = Event.INFO,
) -> Event:
    context = request_context.current()
    return Event.objects.create(
        event_type=event_type,
        priority=priority,
        publisher_id=PUBLISHER,
        object_type=object_type,
        object_id=str(object_id or ""),
        object_uuid=str(object_uuid or ""),
        payload=payload or {},
        user=caller.user if getattr(caller.user, "pk", None) else None,
        username=caller.username,
        project_id=caller.project_id,
        # A caller made outside the request (a build, a job) names no request:
        # the work's context does.
        request_id=caller.request_id or context.request_id,
        global_request_id=context.global_request_id,
    )


@contextmanager
def failures_recorded(
    caller: Caller, function_name: str, object_type: str = "", object_id: str | int = ""
) -> Iterator[None]:
    """Record a ``compute.exception`` event when the block refuses the request."""
    try:
        yield
    except ServiceError as exc:
        record(
            caller,
            "compute.exception",
            object_type=object_type,
            object_id=object_id,
            priority=Event.ERROR,
            payload={
                "module_name": __name__.rsplit(".", 1)[0],
                "function_name": function_name,
                "exception": type(exc).__name__,
                "exception_message": exc.message,
                "status": exc.status,
                "traceback": "".join(traceback.format_exception_only(type(exc), exc)).strip(),
            },
        )
        raise
