"""What a server's notifications carry: its InstancePayload (``snapshot``)
and the audit event recording it (``record``), for every change of a
server: create, build, delete, moves."""

from typing import Any

from aggregates.audit import services as events
from aggregates.identity.caller import Caller
from aggregates.servers.models import Server


def snapshot(server: Server) -> dict[str, Any]:
    """The InstancePayload of a notification (the fields Corral has)."""
    return {
        "uuid": str(server.uuid),
        "display_name": server.name,
        "tenant_id": server.project_id,
        "user_id": server.user_id,
        "flavor": {"flavorid": server.flavorid, **server.flavor},
        "image_uuid": server.image_id,
        "availability_zone": server.availability_zone or None,
        "host": server.host,
        "node": server.node,
        "state": server.vm_state,
        "task_state": server.task_state,
        "power_state": server.power_state,
        "reservation_id": server.reservation_id,
        "fault": server.fault,
    }


def record(caller: Caller, event_type: str, server: Server, **extra: Any) -> None:
    """The audit event ``event_type`` of ``server``, its payload the server's snapshot and ``extra``."""
    events.record(
        caller,
        event_type,
        object_type="server",
        object_id=server.pk or "",
        object_uuid=server.uuid,
        payload={**snapshot(server), **extra},
    )
