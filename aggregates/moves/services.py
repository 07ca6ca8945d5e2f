"""Moving servers as the API asks for it: live migration, cold migration,
evacuation, resize, and reading the migration records. A move is accepted in one
transaction (Nova's checks, the server's task state and its migration row,
the audit event); the move itself (``running``) runs after commit, in a
Celery worker (corral.moves.run) or in this process when there is no
broker. ``move_server`` does both at once, synchronously (jobs call it).
Confirming a cold migration is ``confirmation``; moves a dead worker left
behind, ``recovery``.
"""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from aggregates import after_commit
from aggregates.audit import services as events
from aggregates.errors import Forbidden, Invalid, NotFound
from aggregates.flavors import services as flavor_services
from aggregates.flavors.models import Flavor
from aggregates.identity.caller import Caller
from aggregates.images.models import Image
from aggregates.moves import checks, notifications, running, states
from aggregates.moves.models import ServerMigration
from aggregates.quotas import services as quotas
from aggregates.scheduling import boot_request
from aggregates.servers import actions
from aggregates.servers import services as server_services
from aggregates.servers.models import Server

log = logging.getLogger(__name__)


def _flavor_pk(flavorid: str) -> int | None:
    return Flavor.objects.filter(flavorid=flavorid).values_list("pk", flat=True).first()


def _accept(
    caller: Caller,
    server: Server,
    kind: str,
    requested_host: str | None,
    request: dict[str, Any],
    new_flavor: Flavor | None = None,
) -> ServerMigration:
    """Inside the caller's transaction, with the server locked: the migration
    row and the server's task state, and the audit event. A resize keeps
    both flavors' copies in the migration's request (``old_flavor``,
    ``new_flavor``: flavorid and the server's copy), for its end and its revert."""
    now = timezone.now()
    flavor_pk = _flavor_pk(server.flavorid)
    if new_flavor is not None:
        request = {
            **request,
            "old_flavor": {"flavorid": server.flavorid, "flavor": server.flavor},
            "new_flavor": {"flavorid": new_flavor.flavorid, "flavor": server_services.flavor_snapshot(new_flavor)},
        }
    action = actions.start(caller, server, states.INSTANCE_ACTION[kind], now)
    migration = ServerMigration.objects.create(
        server=server,
        migration_type=kind,
        status=states.STATUS_ACCEPTED[kind],
        source_compute=server.host,
        source_node=server.node,
        dest_compute=requested_host or None,
        old_instance_type_id=flavor_pk,
        new_instance_type_id=new_flavor.pk if new_flavor is not None else flavor_pk,
        project_id=server.project_id,
        user_id=server.user_id,
        request={
            "requested_host": requested_host,
            "old_vm_state": server.vm_state,
            "request_id": action.request_id,
            **request,
        },
        created_at=now,
        updated_at=now,
    )
    server.task_state = states.TASK_ACCEPTED[kind]
    server.updated_at = now
    server.save(update_fields=["task_state", "updated_at"])
    notifications.record(caller, f"{states.EVENT[kind]}.start", server, migration, request_id=caller.request_id)
    return migration


# The policies of each kind, without and with a requested host (config/policy.py:
# Nova's project managers may move their project's servers without a host).
POLICIES = {
    states.LIVE: (
        "os_compute_api:os-migrate-server:migrate_live",
        "os_compute_api:os-migrate-server:migrate_live:host",
    ),
    states.COLD: ("os_compute_api:os-migrate-server:migrate", "os_compute_api:os-migrate-server:migrate:host"),
    states.EVACUATION: ("os_compute_api:os-evacuate", "os_compute_api:os-evacuate"),
}
FORCE_WITHOUT_HOST = "Can't force to a non-provided destination"


def _begin(
    caller: Caller,
    server_uuid: str,
    kind: str,
    requested_host: str | None,
    request: dict[str, Any],
    dispatch: bool,
) -> ServerMigration:
    with events.failures_recorded(caller, f"move_server:{kind}", "server", server_uuid):
        with transaction.atomic():
            server = checks.locked_server(caller, server_uuid)
            checks.authorize(caller, POLICIES[kind][1 if requested_host else 0], server)
            if kind != states.EVACUATION:  # Nova's evacuate does not check the lock
                server_services.check_unlocked(caller, server)
            if request.get("force") and not requested_host:
                raise Invalid(FORCE_WITHOUT_HOST, field="force")
            checks.check_move(server, kind, server_uuid, requested_host)
            migration = _accept(caller, server, kind, requested_host, request)
            if dispatch:
                dispatch_move(migration.pk)
    log.info(
        "Accepted the %s of server %s from host %s%s (migration %s)",
        kind,
        server_uuid,
        migration.source_compute,
        f" to host {requested_host}" if requested_host else "",
        migration.pk,
    )
    return migration


def dispatch_move(migration_pk: int) -> None:
    """Run the move once the transaction commits: in this process when
    there is no broker, else in a worker. A move that could not start fails
    (the server back as it was)."""
    after_commit.dispatch(
        lambda: running.run_move(migration_pk),
        send=after_commit.task(running.RUN_TASK, migration_pk),
        outbound=f"migration {migration_pk}",
        failure=f"could not run migration {migration_pk}",
        if_failed=lambda: running.fail(migration_pk, "The move could not be started; see the logs."),
    )


def move_server(
    caller: Caller,
    server_uuid: str,
    kind: str,
    *,
    requested_host: str | None = None,
    preferred_aggregates: frozenset[str] = frozenset(),
    confirm: bool = False,
    initiator: str = "api",
) -> running.MoveOutcome:
    """Move one server now, synchronously (jobs call this from their worker;
    no transaction may be open): accept the move (Nova's checks, raising a
    ServiceError before anything changes), schedule it, and record the
    outcome. A cold migration (kind "migration") ends in VERIFY_RESIZE with
    the source held by the migration, unless ``confirm`` (then it is
    confirmed at once: the source is released in the same allocation move)."""
    if kind not in states.KINDS:
        raise Invalid(f"Unknown move kind {kind}: one of {', '.join(states.KINDS)}.", field="kind")
    request = {
        "preferred_aggregates": sorted(preferred_aggregates),
        "confirm": bool(confirm),
        "initiator": initiator,
    }
    migration = _begin(caller, server_uuid, kind, requested_host, request, dispatch=False)
    return running.run_move(migration.pk)


def live_migrate(
    caller: Caller,
    server_uuid: str,
    host: str | None = None,
    block_migration: bool | str | None = "auto",
    force: bool | None = None,
    synchronous_checks: bool = False,
) -> ServerMigration:
    """os-migrateLive: MIGRATING at once, the move after commit. With
    ``synchronous_checks`` (Nova below 2.34) a move that ran in this process
    and found no host is refused (Invalid) as Nova's pre-checks would."""
    request = {"block_migration": block_migration, "force": force, "initiator": "api"}
    migration = _begin(caller, server_uuid, states.LIVE, host, request, dispatch=True)
    return _after_dispatch(migration, synchronous_checks)


def cold_migrate(caller: Caller, server_uuid: str, host: str | None = None) -> ServerMigration:
    """migrate: RESIZE at once, the move after commit; it ends in VERIFY_RESIZE."""
    return _begin(caller, server_uuid, states.COLD, host, {"confirm": False, "initiator": "api"}, dispatch=True)


def evacuate(
    caller: Caller,
    server_uuid: str,
    host: str | None = None,
    force: bool | None = None,
    target_state: str | None = None,
) -> ServerMigration:
    """evacuate: only off a host whose compute service is down (or forced
    down); REBUILD at once, the move after commit. ``target_state``
    "stopped" (Nova from 2.95) leaves the server stopped on its target."""
    request = {"force": force, "target_state": target_state, "initiator": "api"}
    return _begin(caller, server_uuid, states.EVACUATION, host, request, dispatch=True)


SAME_FLAVOR = "When resizing, instances must change flavor!"
ZERO_DISK = "Resize to zero disk flavor is not allowed."


def _flavor_for_resize(caller: Caller, server: Server, flavor_ref: str) -> Flavor:
    """Nova's flavor checks of a resize, in its order: a flavor the caller
    may see (disabled counts as missing unless it is the server's own), a
    change of flavor, no zero disk for an image-backed server, the image's
    minimums."""
    flavorid = str(flavor_ref).rstrip("/").rsplit("/", 1)[-1]
    flavor = flavor_services.visible_flavors(caller).filter(flavorid=flavorid).first()
    same = flavor is not None and flavor.flavorid == server.flavorid
    if flavor is None or (flavor.disabled and not same):
        raise Invalid(f"Flavor {flavorid} could not be found.", field="flavorRef")
    if flavor.root_gb == 0 and int((server.flavor or {}).get("disk", 0)) != 0 and server.image_id:
        raise Invalid(ZERO_DISK, field="flavorRef")
    if same:
        raise Invalid(SAME_FLAVOR, field="flavorRef")
    image_uuid = boot_request.parse_uuid(server.image_id) if server.image_id else None
    image = Image.objects.filter(pk=image_uuid).first() if image_uuid else None
    if image is not None:
        boot_request.check_image_fits(image, flavor)
    return flavor


def resize(caller: Caller, server_uuid: str, flavor_ref: str) -> ServerMigration:
    """resize (a project's members on their servers, admins on any): Nova's
    checks (state, host up, the flavor), then RESIZE at once and the move
    after commit: the new flavor through the scheduler (its extra specs,
    the aggregate filters; the server's own host only with
    ALLOW_RESIZE_TO_SAME_HOST), the source held by the migration's
    consumer; it ends in VERIFY_RESIZE showing the new flavor, or where it
    was when no host takes it."""
    kind = states.RESIZE
    with events.failures_recorded(caller, "resize_server", "server", server_uuid):
        with transaction.atomic():
            server = checks.locked_server(caller, server_uuid)
            checks.authorize(caller, "os_compute_api:servers:resize", server)
            server_services.check_unlocked(caller, server)
            checks.check_move(server, kind, server_uuid, None)
            flavor = _flavor_for_resize(caller, server, flavor_ref)
            quotas.check_resize(server.project_id, server.user_id or None, server.flavor, flavor)
            request = {"initiator": "api", "same_host": bool(settings.ALLOW_RESIZE_TO_SAME_HOST)}
            migration = _accept(caller, server, kind, None, request, new_flavor=flavor)
            dispatch_move(migration.pk)
    log.info(
        "Accepted the resize of server %s on host %s to flavor %s (migration %s)",
        server_uuid,
        migration.source_compute,
        flavor.flavorid,
        migration.pk,
    )
    return migration


def _after_dispatch(migration: ServerMigration, synchronous_checks: bool) -> ServerMigration:
    migration.refresh_from_db()
    if synchronous_checks and migration.status == ServerMigration.ERROR and migration.message:
        raise Invalid(migration.message, field="host")
    return migration


@dataclass
class MigrationQuery:
    """GET /os-migrations filters (Nova's, plus dest_compute, source_node and dest_node)."""

    host: str | None = None
    source_compute: str | None = None
    dest_compute: str | None = None
    source_node: str | None = None
    dest_node: str | None = None
    status: str | None = None
    migration_type: str | None = None
    instance_uuid: str | None = None
    project_id: str | None = None
    user_id: str | None = None
    changes_since: datetime | None = None
    changes_before: datetime | None = None
    limit: int | None = None
    marker: str | None = None
    newest_first: bool = False


def _admin_only(caller: Caller, policy: str) -> None:
    if not caller.may(policy):
        raise Forbidden.by_policy(policy)


# MigrationQuery attribute -> the lookup it filters by, when given.
_EXACT_FILTERS = (
    ("dest_compute", "dest_compute"),
    ("source_node", "source_node"),
    ("dest_node", "dest_node"),
    ("status", "status"),
    ("migration_type", "migration_type"),
    ("project_id", "project_id"),
    ("user_id", "user_id"),
    ("changes_since", "updated_at__gte"),
    ("changes_before", "updated_at__lte"),
)


def list_migrations(caller: Caller, query: MigrationQuery, max_limit: int = 1000) -> list[ServerMigration]:
    """One page of migrations: newest first with paging (Nova from 2.59), else by id."""
    _admin_only(caller, "os_compute_api:os-migrations:index")
    rows: QuerySet[ServerMigration] = ServerMigration.objects.select_related("server")
    if query.host is not None:
        rows = rows.filter(Q(source_compute=query.host) | Q(dest_compute=query.host))
    elif query.source_compute is not None:
        rows = rows.filter(source_compute=query.source_compute)
    for attribute, lookup in _EXACT_FILTERS:
        value = getattr(query, attribute)
        if value is not None:
            rows = rows.filter(**{lookup: value})
    if query.instance_uuid is not None:
        parsed = boot_request.parse_uuid(query.instance_uuid)
        rows = rows.filter(server__uuid=parsed) if parsed else rows.none()
    if not query.newest_first:
        return list(rows.order_by("id"))
    rows = rows.order_by("-created_at", "-id")
    if query.marker:
        parsed = boot_request.parse_uuid(query.marker)
        marker = ServerMigration.objects.filter(uuid=parsed).first() if parsed else None
        if marker is None:
            raise Invalid(f"Marker {query.marker} could not be found.", field="marker")
        rows = rows.filter(Q(created_at__lt=marker.created_at) | Q(created_at=marker.created_at, id__lt=marker.id))
    limit = min(query.limit if query.limit is not None else max_limit, max_limit)
    return list(rows[:limit])


def in_progress_live_migrations(caller: Caller, server_uuid: str) -> list[ServerMigration]:
    """GET /servers/{id}/migrations: the server's live migrations in progress."""
    server = server_services.get_server(caller, server_uuid)
    _admin_only(caller, "os_compute_api:servers:migrations:index")
    rows = ServerMigration.objects.filter(
        server=server, migration_type=states.LIVE, status__in=ServerMigration.LIVE_IN_PROGRESS
    ).select_related("server")
    return list(rows.order_by("id"))


def in_progress_live_migration(caller: Caller, server_uuid: str, migration_id: int) -> ServerMigration:
    """GET /servers/{id}/migrations/{migration_id}, with Nova's 404s."""
    server = server_services.get_server(caller, server_uuid)
    _admin_only(caller, "os_compute_api:servers:migrations:show")
    migration = ServerMigration.objects.select_related("server").filter(pk=migration_id, server=server).first()
    if migration is None:
        raise NotFound(f"In-progress live migration {migration_id} is not found for server {server_uuid}.")
    if migration.migration_type != states.LIVE:
        raise NotFound(f"Migration {migration_id} for server {server_uuid} is not live-migration.")
    if migration.status not in ServerMigration.LIVE_IN_PROGRESS:
        raise NotFound(f"Live migration {migration_id} for server {server_uuid} is not in progress.")
    return migration


def migrations_of(server: Server) -> list[ServerMigration]:
    """Every migration of a server, newest first (the console)."""
    return list(ServerMigration.objects.filter(server=server).select_related("decision").order_by("-created_at", "-id"))


def resize_source(server: Server) -> str | None:
    """The host a server in VERIFY_RESIZE came from (its migration's, which
    holds it until confirmed or reverted; the console)."""
    return (
        ServerMigration.objects.filter(server=server, status=ServerMigration.FINISHED)
        .order_by("-created_at", "-id")
        .values_list("source_compute", flat=True)
        .first()
    )
