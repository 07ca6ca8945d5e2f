"""What a move's notifications carry: the server's InstancePayload with
the migration's, recorded as an audit event."""

from typing import Any

from aggregates.identity.caller import Caller
from aggregates.moves.models import ServerMigration
from aggregates.servers import notifications as server_notifications
from aggregates.servers.models import Server


def record(caller: Caller, event_type: str, server: Server, migration: ServerMigration, **extra: Any) -> None:
    """The audit event ``event_type`` of moving ``server``: its snapshot, the migration's, and ``extra``."""
    server_notifications.record(caller, event_type, server, migration=migration_payload(migration), **extra)


def migration_payload(migration: ServerMigration) -> dict[str, Any]:
    return {
        "uuid": str(migration.uuid),
        "migration_type": migration.migration_type,
        "status": migration.status,
        "source_compute": migration.source_compute,
        "dest_compute": migration.dest_compute,
        "initiator": migration.request.get("initiator", "api"),
        "decision": str(migration.decision.uuid) if migration.decision_id and migration.decision else None,
        "message": migration.message,
    }
