"""Server tags as Nova's server-tags API (2.26) changes them: replace all,
add one, delete one or all. Nova's rules: at most MAX_TAG_COUNT tags a
server, each 1-60 characters without '/' or ',' (400), changed only while
the server is active, paused, suspended or stopped (409)."""

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from aggregates import schema_check
from aggregates.audit import services as events
from aggregates.errors import Invalid, NotFound
from aggregates.identity.caller import Caller
from aggregates.servers import notifications, schemas, services
from aggregates.servers.models import Server, ServerTag

MUTABLE_VM_STATES = (Server.ACTIVE, "paused", "suspended", Server.STOPPED)


def tags_of(server: Server) -> list[str]:
    return sorted(ServerTag.objects.filter(server=server).values_list("tag", flat=True))


def list_tags(caller: Caller, server_uuid: str) -> list[str]:
    return tags_of(services.get_server(caller, server_uuid))


def has_tag(caller: Caller, server_uuid: str, tag: str) -> None:
    """GET /servers/{id}/tags/{tag}: None when the server has it, else 404."""
    server = services.get_server(caller, server_uuid)
    if not ServerTag.objects.filter(server=server, tag=tag).exists():
        raise NotFound(f"Server {server_uuid} has no tag '{tag}'", field="tag")


def _check_state(server: Server, action: str, server_ref: str) -> None:
    if server.vm_state not in MUTABLE_VM_STATES:
        raise services.invalid_state(action, server_ref, "vm_state", server.vm_state)


def _changed(caller: Caller, server: Server) -> None:
    server.updated_at = timezone.now()
    server.save(update_fields=["updated_at"])
    notifications.record(caller, "instance.update", server, request_id=caller.request_id, tags=tags_of(server))


def replace_tags(caller: Caller, server_uuid: str, tags: Iterable[str]) -> list[str]:
    """PUT /servers/{id}/tags: the server's tags become ``tags`` (the API's
    schema checked each one and their number)."""
    with events.failures_recorded(caller, "replace_server_tags", "server", server_uuid):
        with transaction.atomic():
            server = services.locked_server(caller, server_uuid)
            _check_state(server, "update tags", server_uuid)
            ServerTag.objects.filter(server=server).delete()
            ServerTag.objects.bulk_create(ServerTag(server=server, tag=tag) for tag in sorted(set(tags)))
            _changed(caller, server)
            return tags_of(server)


def add_tag(caller: Caller, server_uuid: str, tag: str) -> bool:
    """PUT /servers/{id}/tags/{tag}: True when added, False when the server had it."""
    with events.failures_recorded(caller, "add_server_tag", "server", server_uuid):
        with transaction.atomic():
            server = services.locked_server(caller, server_uuid)
            _check_state(server, "update tag", server_uuid)
            message = schema_check.first_error_message(tag, schemas.TAG)
            if message is not None:
                raise Invalid(
                    f"Tag '{tag}' is invalid. It must be a non empty string without characters '/' and ','. "
                    f"Validation error message: {message}",
                    field="tag",
                )
            existing = tags_of(server)
            if len(existing) >= schemas.MAX_TAG_COUNT:
                raise Invalid(f"The number of tags exceeded the per-server limit {schemas.MAX_TAG_COUNT}", field="tag")
            if tag in existing:
                return False
            ServerTag.objects.create(server=server, tag=tag)
            _changed(caller, server)
    return True


def delete_tag(caller: Caller, server_uuid: str, tag: str) -> None:
    with events.failures_recorded(caller, "delete_server_tag", "server", server_uuid):
        with transaction.atomic():
            server = services.locked_server(caller, server_uuid)
            _check_state(server, "delete tag", server_uuid)
            deleted, _ = ServerTag.objects.filter(server=server, tag=tag).delete()
            if not deleted:
                raise NotFound(f"Instance {server_uuid} has no tag '{tag}'", field="tag")
            _changed(caller, server)


def delete_tags(caller: Caller, server_uuid: str) -> None:
    with events.failures_recorded(caller, "delete_server_tags", "server", server_uuid):
        with transaction.atomic():
            server = services.locked_server(caller, server_uuid)
            _check_state(server, "delete tags", server_uuid)
            ServerTag.objects.filter(server=server).delete()
            _changed(caller, server)
