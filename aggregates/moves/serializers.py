"""Response bodies of migrations, per microversion (Nova's migrations.py and
server_migrations.py output)."""

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from aggregates.compute_api.base import isotime
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.moves.models import ServerMigration
from config.public_url import public_base


def _links(request: ComputeRequest, migration: ServerMigration) -> list[dict[str, str]]:
    base = public_base(request)
    path = f"servers/{migration.server.uuid}/migrations/{migration.id}"
    return [
        {"rel": "self", "href": f"{base}/compute/v2.1/{path}"},
        {"rel": "bookmark", "href": f"{base}/compute/{path}"},
    ]


def migration_item(request: ComputeRequest, migration: ServerMigration) -> dict[str, Any]:
    """One item of GET /os-migrations."""
    version = request.version
    item: dict[str, Any] = {
        "created_at": isotime(migration.created_at),
        "dest_compute": migration.dest_compute,
        "dest_host": migration.dest_host,
        "dest_node": migration.dest_node,
        "id": migration.id,
        "instance_uuid": str(migration.server.uuid),
        "new_instance_type_id": migration.new_instance_type_id,
        "old_instance_type_id": migration.old_instance_type_id,
        "source_compute": migration.source_compute,
        "source_node": migration.source_node,
        "status": migration.status,
        "updated_at": isotime(migration.updated_at),
    }
    if version >= (2, 23):
        item["migration_type"] = migration.migration_type
        if migration.migration_type == ServerMigration.LIVE and migration.status in ServerMigration.LIVE_IN_PROGRESS:
            item["links"] = _links(request, migration)
    if version >= (2, 59):
        item["uuid"] = str(migration.uuid)
    if version >= (2, 80):
        item["user_id"] = migration.user_id
        item["project_id"] = migration.project_id
    return item


def migration_list_body(
    request: ComputeRequest, migrations: Sequence[ServerMigration], limit: int | None, max_limit: int
) -> dict[str, Any]:
    body: dict[str, Any] = {"migrations": [migration_item(request, migration) for migration in migrations]}
    if request.version >= (2, 59):
        page = max_limit if limit is None or limit > max_limit else limit
        if migrations and page == len(migrations):
            params = dict(sorted(request.query_params.items()))
            params["marker"] = str(migrations[-1].uuid)
            body["migrations_links"] = [
                {"rel": "next", "href": f"{public_base(request)}/compute/v2.1/os-migrations?{urlencode(params)}"}
            ]
    return body


def server_migration(request: ComputeRequest, migration: ServerMigration) -> dict[str, Any]:
    """One in-progress live migration of GET /servers/{id}/migrations[/{id}]."""
    version = request.version
    body: dict[str, Any] = {
        "created_at": isotime(migration.created_at),
        "dest_compute": migration.dest_compute,
        "dest_host": migration.dest_host,
        "dest_node": migration.dest_node,
        "disk_processed_bytes": None,
        "disk_remaining_bytes": None,
        "disk_total_bytes": None,
        "id": migration.id,
        "memory_processed_bytes": None,
        "memory_remaining_bytes": None,
        "memory_total_bytes": None,
        "server_uuid": str(migration.server.uuid),
        "source_compute": migration.source_compute,
        "source_node": migration.source_node,
        "status": migration.status,
        "updated_at": isotime(migration.updated_at),
    }
    if version >= (2, 59):
        body["uuid"] = str(migration.uuid)
    if version >= (2, 80):
        body["user_id"] = migration.user_id
        body["project_id"] = migration.project_id
    return body
