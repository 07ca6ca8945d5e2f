"""Server moves in Nova's shapes: the os-migrateLive, migrate, evacuate,
resize, confirmResize and revertResize server actions (dispatched by /servers/{id}/action), GET
/os-migrations and GET /servers/{id}/migrations[/{id}]."""

import secrets
import string
from datetime import UTC, datetime
from typing import Any

from django.utils.dateparse import parse_datetime
from rest_framework.response import Response

from aggregates.compute_api.auth import caller_of, enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import MAX_LIMIT, query_params
from aggregates.compute_api.validation import validate
from aggregates.moves import confirmation, schemas, serializers, states
from aggregates.moves import services as service
from aggregates.servers import services as server_services
from aggregates.value_schemas import to_bool

# --- server actions -----------------------------------------------------------------


def migrate_live(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    version = request.version
    arguments = validate(body, schemas.migrate_live(version))["os-migrateLive"]
    host = arguments["host"] or None
    force: bool | None = None
    if version >= (2, 30):
        force = to_bool(arguments.get("force", False))
    requested = arguments["block_migration"]
    block_migration: bool | None
    if version >= (2, 25) and requested == "auto":
        block_migration = None
    else:
        block_migration = to_bool(requested)
    service.live_migrate(
        caller_of(request),
        server_id,
        host=host,
        block_migration=block_migration,
        force=force,
        synchronous_checks=version < (2, 34),
    )
    return Response(status=202)


def migrate(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    version = request.version
    schema = schemas.migrate(version)
    if schema is not None:
        validate(body, schema)
    host = None
    if version >= (2, 56) and body["migrate"] is not None:
        host = body["migrate"].get("host")
    service.cold_migrate(caller_of(request), server_id, host=host)
    return Response(status=202)


def _password() -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(12))


def evacuate(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    version = request.version
    arguments = validate(body, schemas.evacuate(version))["evacuate"]
    caller = caller_of(request)
    host = arguments.get("host")
    force = to_bool(arguments.get("force", False)) if version >= (2, 29) else None
    password = None
    if version < (2, 14):
        on_shared_storage = to_bool(arguments["onSharedStorage"])
        if "adminPass" in arguments:
            server_services.get_server(caller, server_id)
            enforce(request, "os_compute_api:os-evacuate")
            if on_shared_storage:
                raise ApiError(400, "admin password can't be changed on existing disk")
            password = arguments["adminPass"]
        elif not on_shared_storage:
            password = _password()
    target_state = states.STOPPED if version >= (2, 95) else None
    service.evacuate(caller, server_id, host=host, force=force, target_state=target_state)
    if version < (2, 14):
        return Response({"adminPass": password}, status=200)
    return Response(status=200)


def confirm_resize(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    validate(body, schemas.CONFIRM_RESIZE)
    confirmation.confirm_resize(caller_of(request), server_id)
    return Response(status=204)


def resize(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    # OS-DCF:diskConfig is checked (AUTO or MANUAL) and has no effect: there is no disk to partition.
    arguments = validate(body, schemas.RESIZE)["resize"]
    service.resize(caller_of(request), server_id, str(arguments["flavorRef"]))
    return Response(status=202)


def revert_resize(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    validate(body, schemas.REVERT_RESIZE)
    confirmation.revert_resize(caller_of(request), server_id)
    return Response(status=202)


# The server actions of moves, by the body's key (servers.api's ServerActionView
# dispatches them: the routes table gives it these).
ACTIONS = {
    "os-migrateLive": migrate_live,
    "migrate": migrate,
    "evacuate": evacuate,
    "confirmResize": confirm_resize,
    "resize": resize,
    "revertResize": revert_resize,
}


# --- migrations ---------------------------------------------------------------------


def _time(name: str, value: str) -> datetime:
    parsed = parse_datetime(value) if value else None
    if parsed is None:
        message = f"Invalid input for query parameters {name}. Value: {value}. '{value}' is not a 'date-time'"
        raise ApiError(400, message)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class MigrationListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        version = request.version
        params = query_params(request, schemas.migrations_query(version))
        enforce(request, "os_compute_api:os-migrations:index")
        query = service.MigrationQuery(
            host=params.get("host"),
            source_compute=params.get("source_compute"),
            dest_compute=params.get("dest_compute"),
            source_node=params.get("source_node"),
            dest_node=params.get("dest_node"),
            status=params.get("status"),
            migration_type=params.get("migration_type"),
            instance_uuid=params.get("instance_uuid"),
            project_id=params.get("project_id"),
            user_id=params.get("user_id"),
        )
        if version >= (2, 59):
            query.newest_first = True
            if "limit" in params:
                query.limit = int(params["limit"])
            query.marker = params.get("marker")
            if "changes-since" in params:
                query.changes_since = _time("changes-since", params["changes-since"])
        if version >= (2, 66) and "changes-before" in params:
            query.changes_before = _time("changes-before", params["changes-before"])
            if query.changes_since and query.changes_before < query.changes_since:
                raise ApiError(400, "The value of changes-since must be less than or equal to changes-before.")
        if query.limit == 0:
            return Response({"migrations": []})
        migrations = service.list_migrations(caller_of(request), query, max_limit=MAX_LIMIT)
        return Response(serializers.migration_list_body(request, migrations, query.limit, MAX_LIMIT))


class ServerMigrationListView(ComputeAPIView):
    min_version = (2, 23)

    def get(self, request: ComputeRequest, server_id: str) -> Response:
        query_params(request, schemas.server_migrations_query(request.version))
        migrations = service.in_progress_live_migrations(caller_of(request), server_id)
        return Response({"migrations": [serializers.server_migration(request, item) for item in migrations]})


class ServerMigrationView(ComputeAPIView):
    min_version = (2, 23)

    def get(self, request: ComputeRequest, server_id: str, migration_id: str) -> Response:
        query_params(request, schemas.server_migrations_query(request.version))
        caller = caller_of(request)
        if not migration_id.isdigit():
            server_services.get_server(caller, server_id)
            raise ApiError(404, f"In-progress live migration {migration_id} is not found for server {server_id}.")
        migration = service.in_progress_live_migration(caller, server_id, int(migration_id))
        return Response({"migration": serializers.server_migration(request, migration)})
