"""Server metadata as Nova's server-metadata API changes it: POST merges,
PUT replaces, one item set or deleted by its key. Nova's rules: at most
items as its metadata_items quota allows (403), and changed only
while the server is active, paused, suspended or stopped, with no task
running and once it has been launched (409)."""

from collections.abc import Mapping

from django.db import transaction
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Invalid, NotFound
from aggregates.identity.caller import Caller
from aggregates.quotas import services as quotas
from aggregates.servers import notifications, services
from aggregates.servers.models import Server

# Nova's vm_states in which metadata (and tags) may change.
MUTABLE_VM_STATES = (Server.ACTIVE, "paused", "suspended", Server.STOPPED)
ITEM_NOT_FOUND = "Metadata item was not found"


def get_metadata(caller: Caller, server_uuid: str) -> dict[str, str]:
    return dict(services.get_server(caller, server_uuid).metadata or {})


def get_item(caller: Caller, server_uuid: str, key: str) -> str:
    metadata = get_metadata(caller, server_uuid)
    if key not in metadata:
        raise NotFound(ITEM_NOT_FOUND, field="key")
    return metadata[key]


def check_state(server: Server, action: str, server_ref: str) -> None:
    """Nova's check_instance_state for metadata: vm_state one of
    MUTABLE_VM_STATES, no task, launched once; its conflict message."""
    if server.vm_state not in MUTABLE_VM_STATES:
        raise services.invalid_state(action, server_ref, "vm_state", server.vm_state)
    if server.task_state is not None:
        raise services.invalid_state(action, server_ref, "task_state", server.task_state)
    if server.launched_at is None:
        raise services.invalid_state(action, server_ref, "launched_at", None)


def check_quota(server: Server, metadata: Mapping[str, str]) -> None:
    """The server's project's metadata_items quota."""
    quotas.check_metadata_items(server.project_id, len(metadata))


def _save(caller: Caller, server: Server, metadata: dict[str, str]) -> None:
    server.metadata = metadata
    server.updated_at = timezone.now()
    server.save(update_fields=["metadata", "updated_at"])
    notifications.record(caller, "instance.update", server, request_id=caller.request_id)


def update_metadata(
    caller: Caller, server_uuid: str, metadata: Mapping[str, str], replace: bool = False
) -> dict[str, str]:
    """POST (merge) or PUT (``replace``) /servers/{id}/metadata: the server's metadata after."""
    with events.failures_recorded(caller, "update_server_metadata", "server", server_uuid):
        with transaction.atomic():
            server = services.locked_server(caller, server_uuid)
            new = dict(metadata) if replace else {**(server.metadata or {}), **metadata}
            services.check_unlocked(caller, server)
            check_state(server, "update metadata", str(server.uuid))
            check_quota(server, new)
            _save(caller, server, new)
    return new


def set_item(caller: Caller, server_uuid: str, key: str, item: Mapping[str, str]) -> dict[str, str]:
    """PUT /servers/{id}/metadata/{key} with ``{"meta": {key: value}}``: the item."""
    with events.failures_recorded(caller, "update_server_metadata", "server", server_uuid):
        with transaction.atomic():
            server = services.locked_server(caller, server_uuid)
            if key not in item:
                raise Invalid("Request body and URI mismatch", field="meta")
            services.check_unlocked(caller, server)
            check_state(server, "update metadata", str(server.uuid))
            new = {**(server.metadata or {}), **item}
            check_quota(server, new)
            _save(caller, server, new)
    return dict(item)


def delete_item(caller: Caller, server_uuid: str, key: str) -> None:
    """DELETE /servers/{id}/metadata/{key}: 404 when there is no such item."""
    with events.failures_recorded(caller, "delete_server_metadata", "server", server_uuid):
        with transaction.atomic():
            server = services.locked_server(caller, server_uuid)
            metadata = dict(server.metadata or {})
            if key not in metadata:
                raise NotFound(ITEM_NOT_FOUND, field="key")
            services.check_unlocked(caller, server)
            check_state(server, "delete metadata", server_uuid)
            del metadata[key]
            _save(caller, server, metadata)
