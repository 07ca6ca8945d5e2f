"""Recording instance actions (Nova's os-instance-actions): an action per
request that changed a server (under Nova's names, with the request id,
user and project of the request) and its events, each started and
finished with a result. Every create, delete, restore, move, resize, state reset, lock, unlock,
stop, start and reboot records
one; the API reads them (``services.list_actions``, ``services.get_action``)."""

import uuid
from datetime import datetime

from django.db.models import Prefetch
from django.utils import timezone

from aggregates.identity import services as identity
from aggregates.identity.caller import Caller
from aggregates.servers.models import InstanceAction, InstanceActionEvent, Server

# Nova's action names (nova/compute/instance_actions.py) of what Corral does.
CREATE = "create"
DELETE = "delete"
LIVE_MIGRATION = "live-migration"
MIGRATE = "migrate"
EVACUATE = "evacuate"
CONFIRM_RESIZE = "confirmResize"
RESIZE = "resize"
REVERT_RESIZE = "revertResize"
RESTORE = "restore"
RESET_STATE = "resetState"
LOCK = "lock"
UNLOCK = "unlock"
STOP = "stop"
START = "start"
REBOOT = "reboot"

# Nova's event names (its services' wrapped methods) of the steps Corral takes.
SCHEDULE_AND_BUILD = "conductor_schedule_and_build_instances"
BUILD_AND_RUN = "compute__do_build_and_run_instance"
TERMINATE = "compute_terminate_instance"
LIVE_MIGRATE_INSTANCE = "conductor_live_migrate_instance"
LIVE_MIGRATION_EVENT = "compute_live_migration"
MIGRATE_SERVER = "conductor_migrate_server"
RESIZE_INSTANCE = "compute_resize_instance"
REBUILD_SERVER = "conductor_rebuild_server"
REBUILD_INSTANCE = "compute_rebuild_instance"
CONFIRM_RESIZE_EVENT = "compute_confirm_resize"
REVERT_RESIZE_EVENT = "compute_revert_resize"
FINISH_REVERT_RESIZE_EVENT = "compute_finish_revert_resize"
SOFT_DELETE_EVENT = "compute_soft_delete_instance"
RESTORE_EVENT = "compute_restore_instance"
STOP_EVENT = "compute_stop_instance"
START_EVENT = "compute_start_instance"
REBOOT_EVENT = "compute_reboot_instance"


def new_request_id() -> str:
    return f"req-{uuid.uuid4()}"


def start(caller: Caller, server: Server, action: str, now: datetime | None = None) -> InstanceAction:
    """The action ``action`` of ``server`` asked for by ``caller``'s request
    (a request id of its own when the caller has none: a job, the console).
    Inside the caller's transaction."""
    now = now or timezone.now()
    return InstanceAction.objects.create(
        server=server,
        action=action,
        request_id=caller.request_id or new_request_id(),
        user_id=_user_id(caller),
        project_id=caller.project_id or None,
        start_time=now,
        created_at=now,
        updated_at=now,
    )


def _user_id(caller: Caller) -> str | None:
    if caller.user_id:
        return caller.user_id
    if caller.user is not None:
        return identity.user_id_of(caller.user)
    return caller.username or None


def latest(server: Server, action: str, request_id: str | None = None) -> InstanceAction | None:
    """The newest action ``action`` of ``server`` (of ``request_id`` when given)."""
    rows = InstanceAction.objects.filter(server=server, action=action)
    if request_id:
        rows = rows.filter(request_id=request_id)
    return rows.order_by("-created_at", "-id").first()


def actions_of(server: Server) -> list[InstanceAction]:
    """Every action of a server, newest first, its events prefetched (the console)."""
    events = Prefetch("events", queryset=InstanceActionEvent.objects.order_by("-created_at", "-id"))
    return list(InstanceAction.objects.filter(server=server).prefetch_related(events).order_by("-created_at", "-id"))


def event_start(action: InstanceAction | None, event: str, host: str | None = None) -> InstanceActionEvent | None:
    if action is None:
        return None
    now = timezone.now()
    InstanceAction.objects.filter(pk=action.pk).update(updated_at=now)
    return InstanceActionEvent.objects.create(action=action, event=event, start_time=now, created_at=now, host=host)


def event_finish(
    action: InstanceAction | None,
    event: str,
    result: str = InstanceActionEvent.SUCCESS,
    host: str | None = None,
    traceback: str | None = None,
    details: str | None = None,
) -> None:
    """Finish the event ``event`` of ``action`` with ``result``; an error
    marks the action's message "Error", as Nova does. An event not started
    is recorded started and finished now (a step Corral takes at once: a
    compute host's part of a build or a move)."""
    if action is None:
        return
    now = timezone.now()
    row = action.events.filter(event=event, finish_time__isnull=True).order_by("-id").first()
    if row is None:
        row = InstanceActionEvent(action=action, event=event, start_time=now, created_at=now)
    row.finish_time, row.result = now, result
    row.host = host if host is not None else row.host
    row.traceback, row.details = traceback, details
    row.save()
    updates: dict[str, object] = {"updated_at": now}
    if result == InstanceActionEvent.ERROR:
        updates["message"] = "Error"
    InstanceAction.objects.filter(pk=action.pk).update(**updates)


def finish(action: InstanceAction | None) -> None:
    if action is None:
        return
    now = timezone.now()
    InstanceAction.objects.filter(pk=action.pk).update(finish_time=now, updated_at=now)
