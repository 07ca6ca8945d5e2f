"""Moving servers: live migration, cold migration (then confirm), evacuation,
and reading the migration records.

Rules kept here:

* A move is accepted in one transaction (the server's task state and its
  migration row, the audit event); the move itself runs after commit, in a
  Celery worker (corral.moves.run) or in this process when Celery is eager.
  ``move_server`` does both at once, synchronously (jobs call it).
* The scheduler (aggregates.scheduling.services.schedule_move) picks the
  target and moves the placement allocation in one POST /allocations; it is
  never called with a transaction open. No hypervisor: a move is done when
  the allocation has moved.
* The outcome is written in one transaction: the server on its target, or
  back as it was on its source with the migration in error and the
  scheduler's decision saying why.
* A cold migration ends in VERIFY_RESIZE (vm_state resized) with the source
  allocation held by the migration's consumer, as Nova holds it, until
  ``confirm_resize`` releases it (or corral.moves.confirm_resizes once
  RESIZE_CONFIRM_WINDOW has passed).
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Conflict, Forbidden, Invalid, NotFound, ServiceError, Unavailable
from aggregates.flavors.models import Flavor
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.caller import Caller
from aggregates.mirroring.placement_client import PlacementError, client
from aggregates.moves.models import ServerMigration
from aggregates.scheduling import boot_request
from aggregates.scheduling import services as scheduling
from aggregates.servers import services as servers
from aggregates.servers.models import Server
from aggregates.zones import services as zones

log = logging.getLogger(__name__)

RUN_TASK = "corral.moves.run"
LIVE, COLD, EVACUATION = ServerMigration.LIVE, ServerMigration.COLD, ServerMigration.EVACUATION
KINDS = (LIVE, COLD, EVACUATION)

# vm_states and task_states of moves (Nova's names).
RESIZED = "resized"
STOPPED = "stopped"
PAUSED = "paused"
MIGRATING = "migrating"
RESIZE_PREP = "resize_prep"
RESIZE_MIGRATING = "resize_migrating"
REBUILDING = "rebuilding"
POWER_RUNNING = 1
POWER_SHUTDOWN = 4

# The task state of a server while a move of each kind is accepted / running.
_TASK_ACCEPTED = {LIVE: MIGRATING, COLD: RESIZE_PREP, EVACUATION: REBUILDING}
_TASK_RUNNING = {LIVE: MIGRATING, COLD: RESIZE_MIGRATING, EVACUATION: REBUILDING}
# The migration's status once accepted / while running / once moved.
_STATUS_ACCEPTED = {LIVE: ServerMigration.QUEUED, COLD: ServerMigration.PRE_MIGRATING, EVACUATION: "accepted"}
_STATUS_RUNNING = {LIVE: ServerMigration.RUNNING, COLD: ServerMigration.MIGRATING, EVACUATION: "pre-migrating"}
_STATUS_MOVED = {LIVE: ServerMigration.COMPLETED, COLD: ServerMigration.FINISHED, EVACUATION: ServerMigration.DONE}
# The notification names of each kind (Nova's instance.<action>.start/end).
_EVENT = {LIVE: "instance.live_migration", COLD: "instance.migrate", EVACUATION: "instance.evacuate"}
# The action names in Nova's conflict messages.
_ACTION = {LIVE: "os-migrateLive", COLD: "migrate", EVACUATION: "evacuate"}


@dataclass
class MoveOutcome:
    moved: bool
    server_uuid: str
    source: str
    target: str | None
    migration_uuid: str
    decision_uuid: str | None
    message: str


# --- checks --------------------------------------------------------------------


def _invalid_state(action: str, server_ref: str, attr: str, state: object) -> Conflict:
    return Conflict(f"Cannot '{action}' instance {server_ref} while it is in {attr} {state}")


def _check_state(
    server: Server, action: str, server_ref: str, vm_states: Iterable[str], task_states: Iterable[str | None] = (None,)
) -> None:
    """Nova's check_instance_state: the vm_state, the task_state, launched once."""
    if server.vm_state not in set(vm_states):
        raise _invalid_state(action, server_ref, "vm_state", server.vm_state)
    if server.task_state not in set(task_states):
        raise _invalid_state(action, server_ref, "task_state", server.task_state)
    if server.launched_at is None:
        raise _invalid_state(action, server_ref, "launched_at", None)


def _compute_service(host: str | None) -> Service | None:
    if not host:
        return None
    return Service.objects.filter(host=host, binary=Service.COMPUTE).first()


def _service_is_up(host: str | None) -> bool:
    service = _compute_service(host)
    return service is not None and service.is_up


def _host_exists(host: str) -> bool:
    return ComputeNode.objects.filter(host=host).exists()


def _locked_server(caller: Caller, server_uuid: str) -> Server:
    server = servers.get_server(caller, server_uuid)
    return Server.objects.select_for_update().get(pk=server.pk)


def _flavor_pk(flavorid: str) -> int | None:
    return Flavor.objects.filter(flavorid=flavorid).values_list("pk", flat=True).first()


def _check_move(server: Server, kind: str, server_ref: str, requested_host: str | None) -> None:
    """The checks every move makes before anything changes, in Nova's order
    and with its messages."""
    action = _ACTION[kind]
    if kind == LIVE:
        _check_state(server, action, server_ref, (Server.ACTIVE, PAUSED))
        if requested_host and not _host_exists(requested_host):
            raise Invalid(f"Compute host {requested_host} could not be found.", field="host")
        if not _service_is_up(server.host):
            raise Invalid(f"Compute service of {server.host} is unavailable at this time.", field="host")
        if requested_host and requested_host == server.host:
            raise Invalid(f"Unable to migrate instance ({server.uuid}) to current host ({server.host}).", field="host")
    elif kind == COLD:
        _check_state(server, action, server_ref, (Server.ACTIVE, STOPPED))
        if not server.host:
            raise Conflict(f"Instance {server.uuid} is not ready")
        if not _service_is_up(server.host):
            raise Conflict("Service is unavailable at this time.")
        if requested_host is not None:
            if requested_host == server.host:
                raise Invalid("Cannot migrate to the host where the server exists.", field="host")
            if not _host_exists(requested_host):
                raise Invalid(f"Compute host {requested_host} could not be found.", field="host")
    elif kind == EVACUATION:
        if requested_host is not None and _compute_service(requested_host) is None:
            raise NotFound(f"Compute host {requested_host} not found.", field="host")
        if server.host == requested_host:
            raise Invalid("The target host can't be the same one.", field="host")
        _check_state(server, action, server_ref, (Server.ACTIVE, STOPPED, Server.ERROR))
        if _service_is_up(server.host):
            raise Invalid(f"Compute service of {server.host} is still in use.", field="host")
    else:
        raise Invalid(f"Unknown move kind {kind}: one of {', '.join(KINDS)}.", field="kind")


# --- accepting a move ------------------------------------------------------------


def _record(caller: Caller, event_type: str, server: Server, migration: ServerMigration, **extra: Any) -> None:
    events.record(
        caller,
        event_type,
        object_type="server",
        object_id=server.pk or "",
        object_uuid=server.uuid,
        payload={**servers.snapshot(server), "migration": _migration_payload(migration), **extra},
    )


def _migration_payload(migration: ServerMigration) -> dict[str, Any]:
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


def _accept(
    caller: Caller,
    server: Server,
    kind: str,
    requested_host: str | None,
    request: dict[str, Any],
) -> ServerMigration:
    """Inside the caller's transaction, with the server locked: the migration
    row and the server's task state, and the audit event."""
    now = timezone.now()
    flavor_pk = _flavor_pk(server.flavorid)
    migration = ServerMigration.objects.create(
        server=server,
        migration_type=kind,
        status=_STATUS_ACCEPTED[kind],
        source_compute=server.host,
        source_node=server.node,
        dest_compute=requested_host or None,
        old_instance_type_id=flavor_pk,
        new_instance_type_id=flavor_pk,
        project_id=server.project_id,
        user_id=server.user_id,
        request={"requested_host": requested_host, "old_vm_state": server.vm_state, **request},
        created_at=now,
        updated_at=now,
    )
    server.task_state = _TASK_ACCEPTED[kind]
    server.updated_at = now
    server.save(update_fields=["task_state", "updated_at"])
    _record(caller, f"{_EVENT[kind]}.start", server, migration, request_id=caller.request_id)
    return migration


# The policies of each kind, without and with a requested host (admin only
# in Corral: Nova's project-manager role does not exist here).
POLICIES = {
    LIVE: ("os_compute_api:os-migrate-server:migrate_live", "os_compute_api:os-migrate-server:migrate_live:host"),
    COLD: ("os_compute_api:os-migrate-server:migrate", "os_compute_api:os-migrate-server:migrate:host"),
    EVACUATION: ("os_compute_api:os-evacuate", "os_compute_api:os-evacuate"),
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
            server = _locked_server(caller, server_uuid)
            _admin_only(caller, POLICIES[kind][1 if requested_host else 0])
            if request.get("force") and not requested_host:
                raise Invalid(FORCE_WITHOUT_HOST, field="force")
            _check_move(server, kind, server_uuid, requested_host)
            migration = _accept(caller, server, kind, requested_host, request)
            if dispatch:
                migration_pk = migration.pk
                transaction.on_commit(lambda: dispatch_move(migration_pk))
    return migration


def dispatch_move(migration_pk: int) -> None:
    """Run the move after commit: in this process when Celery is eager (no
    broker), else in a worker."""
    try:
        if current_app.conf.task_always_eager:
            run_move(migration_pk)
        else:
            current_app.send_task(RUN_TASK, args=[migration_pk])
    except Exception:
        log.exception("could not run migration %s", migration_pk)
        _fail(migration_pk, "The move could not be started; see the logs.")


def move_server(
    caller: Caller,
    server_uuid: str,
    kind: str,
    *,
    requested_host: str | None = None,
    preferred_aggregates: frozenset[str] = frozenset(),
    confirm: bool = False,
    initiator: str = "api",
) -> MoveOutcome:
    """Move one server now, synchronously (jobs call this from their worker;
    no transaction may be open): accept the move (Nova's checks, raising a
    ServiceError before anything changes), schedule it, and record the
    outcome. A cold migration (kind "migration") ends in VERIFY_RESIZE with
    the source held by the migration, unless ``confirm`` (then it is
    confirmed at once: the source is released in the same allocation move)."""
    if kind not in KINDS:
        raise Invalid(f"Unknown move kind {kind}: one of {', '.join(KINDS)}.", field="kind")
    request = {
        "preferred_aggregates": sorted(preferred_aggregates),
        "confirm": bool(confirm),
        "initiator": initiator,
    }
    migration = _begin(caller, server_uuid, kind, requested_host, request, dispatch=False)
    return run_move(migration.pk)


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
    migration = _begin(caller, server_uuid, LIVE, host, request, dispatch=True)
    return _after_dispatch(migration, synchronous_checks)


def cold_migrate(caller: Caller, server_uuid: str, host: str | None = None) -> ServerMigration:
    """migrate: RESIZE at once, the move after commit; it ends in VERIFY_RESIZE."""
    return _begin(caller, server_uuid, COLD, host, {"confirm": False, "initiator": "api"}, dispatch=True)


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
    return _begin(caller, server_uuid, EVACUATION, host, request, dispatch=True)


def _after_dispatch(migration: ServerMigration, synchronous_checks: bool) -> ServerMigration:
    migration.refresh_from_db()
    if synchronous_checks and migration.status == ServerMigration.ERROR and migration.message:
        raise Invalid(migration.message, field="host")
    return migration


# --- running a move --------------------------------------------------------------


def _outcome(migration: ServerMigration, moved: bool, target: str | None = None) -> MoveOutcome:
    return MoveOutcome(
        moved=moved,
        server_uuid=str(migration.server.uuid),
        source=migration.source_compute or "",
        target=target,
        migration_uuid=str(migration.uuid),
        decision_uuid=str(migration.decision.uuid) if migration.decision_id and migration.decision else None,
        message=migration.message,
    )


def _take(migration_pk: int) -> ServerMigration | None:
    """Mark an accepted migration running; None when it is not waiting (run
    already, or its server went away meanwhile)."""
    with transaction.atomic():
        migration = ServerMigration.objects.select_for_update().select_related("server").filter(pk=migration_pk).first()
        if migration is None:
            return None
        kind = migration.migration_type
        if migration.status != _STATUS_ACCEPTED[kind]:
            return None
        server = Server.objects.select_for_update().get(pk=migration.server_id)
        now = timezone.now()
        if server.task_state != _TASK_ACCEPTED[kind] or server.vm_state == Server.DELETED:
            migration.status, migration.updated_at = ServerMigration.FAILED, now
            migration.message = f"The server left {_TASK_ACCEPTED[kind]} before the move ran."
            migration.save(update_fields=["status", "message", "updated_at"])
            return None
        migration.status, migration.updated_at = _STATUS_RUNNING[kind], now
        migration.save(update_fields=["status", "updated_at"])
        server.task_state, server.updated_at = _TASK_RUNNING[kind], now
        server.save(update_fields=["task_state", "updated_at"])
        migration.server = server
    return migration


def run_move(migration_pk: int) -> MoveOutcome:
    """Schedule an accepted move and record its outcome (the task's body).
    No transaction may be open."""
    migration = _take(migration_pk)
    if migration is None:
        current = ServerMigration.objects.select_related("server", "decision").get(pk=migration_pk)
        return _outcome(current, moved=False)
    server = migration.server
    kind = migration.migration_type
    confirm = bool(migration.request.get("confirm"))
    hold_as = str(migration.uuid) if kind == COLD and not confirm else None
    try:
        spec = scheduling.spec_for_server(
            server,
            requested_host=migration.request.get("requested_host") or None,
            preferred_aggregates=frozenset(migration.request.get("preferred_aggregates") or ()),
        )
        result = scheduling.schedule_move(spec, str(server.uuid), hold_source_as=hold_as)
    except Exception as exc:
        log.exception("moving server %s (migration %s) failed", server.uuid, migration.uuid)
        message = exc.message if isinstance(exc, ServiceError) else f"{type(exc).__name__}: {exc}"
        return _finish(migration_pk, None, None, f"The move failed: {message}", ServerMigration.FAILED)
    return _finish(migration_pk, result.target, result.decision, result.fault_message, ServerMigration.ERROR)


def _dest_ip(node_uuid: str) -> str | None:
    return ComputeNode.objects.filter(uuid=node_uuid).values_list("host_ip", flat=True).first()


def _finish(
    migration_pk: int,
    target: scheduling.Placed | None,
    decision: Any,
    message: str,
    failed_status: str,
) -> MoveOutcome:
    """Write the outcome in one transaction; release after commit what a
    server deleted meanwhile would leave behind."""
    caller = Caller.system("corral-moves")
    release_after: list[str] = []
    moved = False
    now = timezone.now()
    with transaction.atomic():
        migration = ServerMigration.objects.select_for_update().get(pk=migration_pk)
        server = Server.objects.select_for_update().get(pk=migration.server_id)
        migration.server = server
        kind = migration.migration_type
        migration.decision = decision
        migration.updated_at = now
        gone = server.vm_state == Server.DELETED or server.task_state == Server.DELETING
        if target is not None and gone:
            migration.status = ServerMigration.FAILED
            migration.message = "The server was deleted while it moved."
            release_after = [str(server.uuid), str(migration.uuid)]
            migration.save()
        elif target is not None:
            migration.dest_compute, migration.dest_node = target.host, target.node
            migration.dest_host = _dest_ip(target.node_uuid)
            migration.status, migration.message = _STATUS_MOVED[kind], ""
            server.host, server.node, server.node_uuid = target.host, target.node, str(target.node_uuid)
            server.availability_zone = target.availability_zone or ""
            server.task_state = None
            server.decision = decision
            if kind == COLD:
                server.vm_state = RESIZED
                if migration.request.get("confirm"):
                    server.vm_state = migration.request.get("old_vm_state") or Server.ACTIVE
                    migration.status = ServerMigration.CONFIRMED
            elif kind == EVACUATION and migration.request.get("target_state") == STOPPED:
                server.vm_state, server.power_state = STOPPED, POWER_SHUTDOWN
            server.updated_at = now
            server.save()
            migration.save()
            moved = True
            _record(caller, f"{_EVENT[kind]}.end", server, migration)
        else:
            migration.status = failed_status
            migration.message = message or servers.NO_VALID_HOST
            if not gone:
                server.task_state = None
                server.updated_at = now
                server.save(update_fields=["task_state", "updated_at"])
            migration.save()
            _record(caller, f"{_EVENT[kind]}.error", server, migration)
        outcome = _outcome(migration, moved, migration.dest_compute if moved else None)
    for consumer_uuid in release_after:
        _release_quietly(consumer_uuid)
    return outcome


def _release_quietly(consumer_uuid: str) -> None:
    try:
        scheduling.release(consumer_uuid)
    except (PlacementError, NotImplementedError):
        log.exception("could not release the allocations of %s", consumer_uuid)


def _fail(migration_pk: int, message: str) -> None:
    """A move that could not even start: the server back as it was."""
    try:
        migration = ServerMigration.objects.filter(pk=migration_pk).first()
        if migration is not None and migration.status == _STATUS_ACCEPTED[migration.migration_type]:
            _finish(migration_pk, None, None, message, ServerMigration.FAILED)
    except Exception:
        log.exception("could not mark migration %s failed", migration_pk)


# --- moves a dead worker left behind ------------------------------------------------

# An accepted or running move untouched this long lost its worker.
STALE_AFTER = timedelta(minutes=2)


def _where_allocated(server: Server) -> ComputeNode | None:
    """The compute node holding the server's allocation now (None: none, or
    placement cannot say)."""
    try:
        response = client().request("GET", f"/allocations/{server.uuid}", "1.28")
    except PlacementError:
        return None
    if response.status_code != 200:
        return None
    providers = list(response.json().get("allocations", {}))
    return ComputeNode.objects.filter(uuid__in=providers).first() if providers else None


def resume_moves(now: datetime | None = None) -> dict[str, int]:
    """Finish the moves whose worker died: an accepted move never taken is
    run now; a running one is settled from where placement holds the
    server: on another node it moved (recorded as moved there), on its
    source it did not (the move failed, the server stays). Every server ends
    on its source or its target, with its allocation where it is."""
    cutoff = (now or timezone.now()) - STALE_AFTER
    counts = {"run": 0, "moved": 0, "failed": 0}
    stale = ServerMigration.objects.filter(updated_at__lt=cutoff).select_related("server")
    for migration in list(stale.filter(status__in=set(_STATUS_ACCEPTED.values())).order_by("id")):
        if migration.status == _STATUS_ACCEPTED[migration.migration_type]:
            run_move(migration.pk)
            counts["run"] += 1
    for migration in list(stale.filter(status__in=set(_STATUS_RUNNING.values())).order_by("id")):
        kind = migration.migration_type
        if migration.status != _STATUS_RUNNING[kind]:
            continue
        server = migration.server
        node = _where_allocated(server)
        if node is not None and str(node.uuid) != server.node_uuid:
            zone = zones.zone_of_host(node.host)
            target = scheduling.Placed(str(server.uuid), node.host, node.hypervisor_hostname, str(node.uuid), zone)
            _finish(migration.pk, target, migration.decision, "", ServerMigration.FAILED)
            counts["moved"] += 1
        else:
            message = "The worker moving the server stopped before the move; the server stayed on its source."
            _finish(migration.pk, None, migration.decision, message, ServerMigration.FAILED)
            counts["failed"] += 1
    return counts


# --- confirming a cold migration -------------------------------------------------


def confirm_resize(caller: Caller, server_uuid: str) -> ServerMigration:
    """confirmResize: release the source the migration holds, then the server
    is ACTIVE (or stopped, as it was) and the migration confirmed. No
    transaction may be open (placement is called between two)."""
    with events.failures_recorded(caller, "confirm_resize", "server", server_uuid):
        with transaction.atomic():
            server = _locked_server(caller, server_uuid)
            if server.vm_state != RESIZED:
                raise _invalid_state("confirmResize", server_uuid, "vm_state", server.vm_state)
            if server.task_state is not None:
                raise _invalid_state("confirmResize", server_uuid, "task_state", server.task_state)
            migration = (
                ServerMigration.objects.select_for_update()
                .filter(server=server, status=ServerMigration.FINISHED)
                .order_by("-created_at", "-id")
                .first()
            )
            if migration is None:
                raise Invalid("Instance has not been resized.")
            if not _service_is_up(migration.source_compute):
                raise Conflict("Service is unavailable at this time.")
            migration.status, migration.updated_at = ServerMigration.CONFIRMING, timezone.now()
            migration.save(update_fields=["status", "updated_at"])
        return _complete_confirm(caller, migration.pk)


def _complete_confirm(caller: Caller, migration_pk: int) -> ServerMigration:
    migration = ServerMigration.objects.get(pk=migration_pk)
    try:
        scheduling.release(str(migration.uuid))
    except (PlacementError, NotImplementedError) as exc:
        ServerMigration.objects.filter(pk=migration_pk, status=ServerMigration.CONFIRMING).update(
            status=ServerMigration.FINISHED, updated_at=timezone.now()
        )
        raise Unavailable(f"Releasing the source of the migration is not possible now: {exc}")
    with transaction.atomic():
        migration = ServerMigration.objects.select_for_update().get(pk=migration_pk)
        server = Server.objects.select_for_update().get(pk=migration.server_id)
        now = timezone.now()
        migration.status, migration.updated_at = ServerMigration.CONFIRMED, now
        migration.save(update_fields=["status", "updated_at"])
        if server.vm_state == RESIZED:
            server.vm_state = migration.request.get("old_vm_state") or Server.ACTIVE
            server.updated_at = now
            server.save(update_fields=["vm_state", "updated_at"])
        migration.server = server
        _record(caller, "instance.resize_confirm.end", server, migration, request_id=caller.request_id)
    return migration


def confirm_resizes(now: datetime | None = None) -> int:
    """Confirm the cold migrations left in VERIFY_RESIZE longer than
    RESIZE_CONFIRM_WINDOW seconds (0: never), and release the sources held
    for servers deleted while resized. Returns how many were confirmed."""
    now = now or timezone.now()
    caller = Caller.system("corral-confirm-resizes")
    finished = ServerMigration.objects.filter(migration_type=COLD, status=ServerMigration.FINISHED)
    for migration in list(finished.filter(server__vm_state=Server.DELETED)):
        _release_quietly(str(migration.uuid))
        ServerMigration.objects.filter(pk=migration.pk, status=ServerMigration.FINISHED).update(
            status=ServerMigration.CONFIRMED, updated_at=now
        )
    window = int(getattr(settings, "RESIZE_CONFIRM_WINDOW", 0) or 0)
    if window <= 0:
        return 0
    due = finished.filter(server__vm_state=RESIZED, updated_at__lte=now - timedelta(seconds=window))
    confirmed = 0
    for server_uuid in list(due.values_list("server__uuid", flat=True).distinct()):
        try:
            confirm_resize(caller, str(server_uuid))
            confirmed += 1
        except ServiceError as exc:
            log.warning("could not confirm the resize of server %s: %s", server_uuid, exc.message)
    return confirmed


# --- reading migrations ------------------------------------------------------------


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
    if not caller.is_admin:
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
    server = servers.get_server(caller, server_uuid)
    _admin_only(caller, "os_compute_api:servers:migrations:index")
    rows = ServerMigration.objects.filter(
        server=server, migration_type=LIVE, status__in=ServerMigration.LIVE_IN_PROGRESS
    ).select_related("server")
    return list(rows.order_by("id"))


def in_progress_live_migration(caller: Caller, server_uuid: str, migration_id: int) -> ServerMigration:
    """GET /servers/{id}/migrations/{migration_id}, with Nova's 404s."""
    server = servers.get_server(caller, server_uuid)
    _admin_only(caller, "os_compute_api:servers:migrations:show")
    migration = ServerMigration.objects.select_related("server").filter(pk=migration_id, server=server).first()
    if migration is None:
        raise NotFound(f"In-progress live migration {migration_id} is not found for server {server_uuid}.")
    if migration.migration_type != LIVE:
        raise NotFound(f"Migration {migration_id} for server {server_uuid} is not live-migration.")
    if migration.status not in ServerMigration.LIVE_IN_PROGRESS:
        raise NotFound(f"Live migration {migration_id} for server {server_uuid} is not in progress.")
    return migration


def migrations_of(server: Server) -> list[ServerMigration]:
    """Every migration of a server, newest first (the console)."""
    return list(ServerMigration.objects.filter(server=server).select_related("decision").order_by("-created_at", "-id"))
