"""Consumers, their allocations, and usages.

Writing allocations replaces everything a consumer holds, in one
transaction that locks the providers involved (in id order, so concurrent
claims queue instead of deadlocking), checks capacity against what others
already use, and bumps provider and consumer generations. Two claims racing
for the last unit therefore cannot both succeed.

What a provider's allocations of a class add up to is kept on its inventory
row (``Inventory.used``), changed only in the transaction that changes the
allocations and only while it holds the provider's lock: every provider whose
allocations change is locked, including those a consumer moves off without
being emptied (whose generations stay, as upstream's). Usages and capacity
are read from it, never summed from the allocations."""

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Self

from django.db import connection, transaction
from django.db.models import Count, F, Model, OuterRef, QuerySet, Subquery, Sum
from django.db.models.expressions import Combinable
from django.db.models.functions import Coalesce
from django.utils import timezone

from placement import errors
from placement.models import (
    Allocation,
    Consumer,
    ConsumerType,
    Inventory,
    Project,
    ResourceClass,
    ResourceProvider,
    ResourceProviderTrait,
    User,
)
from placement.models import quoted_table as _table
from placement.standards import STANDARD_CLASS_IDS

from . import one_flush

# Owner of allocations written before 1.8 (no project/user in the request).
INCOMPLETE_CONSUMER_PROJECT = "00000000-0000-0000-0000-000000000000"
INCOMPLETE_CONSUMER_USER = "00000000-0000-0000-0000-000000000000"
UNKNOWN_CONSUMER_TYPE = "unknown"
UNSET = object()
# {(provider id, resource class id): amount used}
Usage = dict[tuple[int, int], int]


@dataclass
class ConsumerRequest:
    """What one consumer should hold: ``allocations`` is
    ``{provider uuid: {resource class: amount}}`` (empty: hold nothing)."""

    uuid: str
    allocations: dict[str, dict[str, int]]
    project_id: str | None = None
    user_id: str | None = None
    generation: object = UNSET  # an int compared when set (1.28+); None means "new consumer"
    consumer_type: str | None = None  # set from 1.38


# --- reading ---------------------------------------------------------------


def consumer_allocations(consumer_uuid: str) -> tuple[Consumer | None, list[Allocation]]:
    """(consumer or None, allocations with their providers)."""
    allocations = list(
        Allocation.objects.filter(consumer__uuid=consumer_uuid)
        .select_related(
            "resource_provider", "resource_class", "consumer__project", "consumer__user", "consumer__consumer_type"
        )
        .order_by("id")
    )
    return (allocations[0].consumer if allocations else None), allocations


def provider_usages(provider: ResourceProvider) -> dict[str, int]:
    """{class name: used} for every class the provider has inventory of, in
    class id order (upstream's order on its (provider, class) index)."""
    return dict(
        Inventory.objects.filter(resource_provider=provider)
        .order_by("resource_class_id")
        .values_list("resource_class__name", "used")
    )


def total_usages(project_id: str, user_id: str | None = None) -> dict[str, int]:
    """{class name: used} over a project's (and user's) consumers."""
    allocations = _project_allocations(project_id, user_id)
    return dict(
        allocations.values("resource_class__name")
        .annotate(used=Sum("used"))
        .values_list("resource_class__name", "used")
    )


def _project_allocations(project_id: str, user_id: str | None) -> QuerySet[Allocation]:
    allocations = Allocation.objects.filter(consumer__project__external_id=project_id)
    if user_id:
        allocations = allocations.filter(consumer__user__external_id=user_id)
    return allocations


def usages_by_consumer_type(
    project_id: str, user_id: str | None = None, consumer_type: str | None = None
) -> dict[str, dict[str, int]]:
    """{type name: {class name: used, ..., "consumer_count": n}} (1.38).

    ``consumer_type`` "all" folds every consumer into one "all" group,
    "unknown" keeps consumers without a type, any other name that type."""
    allocations = _project_allocations(project_id, user_id)
    if consumer_type == UNKNOWN_CONSUMER_TYPE:
        allocations = allocations.filter(consumer__consumer_type__isnull=True)
    elif consumer_type and consumer_type != "all":
        allocations = allocations.filter(consumer__consumer_type__name=consumer_type)
    group: Combinable
    if consumer_type in ("all", UNKNOWN_CONSUMER_TYPE):
        group = F("consumer_id") * 0  # one group for everything
    else:
        group = F("consumer__consumer_type__name")
    result: defaultdict[str, dict[str, int]] = defaultdict(dict)
    counts = allocations.annotate(group=group).values("group").annotate(n=Count("consumer_id", distinct=True))
    names = {}
    for row in counts:
        name = (
            consumer_type
            if consumer_type in ("all", UNKNOWN_CONSUMER_TYPE)
            else (row["group"] or UNKNOWN_CONSUMER_TYPE)
        )
        names[row["group"]] = name
        result[name]["consumer_count"] = row["n"]
    sums = allocations.annotate(group=group).values("group", "resource_class__name").annotate(used=Sum("used"))
    for sum_row in sums:
        result[names[sum_row["group"]]][sum_row["resource_class__name"]] = sum_row["used"]
    return dict(result)


# --- writing ---------------------------------------------------------------
#
# A claim is a handful of statements, each a round trip to the database (on a
# loaded machine each costs milliseconds whatever it does): the owner rows in
# one, each consumer in one (created, or locked, compared and bumped at once),
# the consumers' old allocations deleted and returned in one, the providers
# locked and bumped in one, their inventories with what is used of them in
# one, the new allocations inserted in one.


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _marks(values: Collection[object]) -> str:
    return ", ".join(["%s"] * len(values))


def _sql(sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
    """The rows of one statement (none for statements without any)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)  # type: ignore[arg-type]  # plain values: ints, strings, datetimes
        return cursor.fetchall() if cursor.description else []


# The owner rows a write refers to, looked up by one name column, in the
# order they are created (the lock order).
_OWNER_MODELS: tuple[tuple[type[Model], str], ...] = (
    (Project, "external_id"),
    (User, "external_id"),
    (ConsumerType, "name"),
)


def _owner_ids(names: Sequence[Collection[str]]) -> list[dict[str, int]]:
    """For each of _OWNER_MODELS, {name: id} of the rows named in ``names``
    (one collection per model), creating the missing ones in the caller's
    transaction (undone with it). Found in one statement for all three.

    Race-safe: the insert is ``ON CONFLICT DO NOTHING`` (``INSERT OR IGNORE``
    on SQLite), so a concurrent writer creating the same name makes this one
    wait for its commit and then read its row back (each statement sees what
    is committed, at PostgreSQL's default isolation) instead of failing.
    Names are inserted in sorted order, and every write creates projects,
    then users, then consumer types before locking anything else, so two
    writers never wait on each other's rows in opposite orders."""
    parts: list[str] = []
    params: list[object] = []
    for index, ((model, field), wanted) in enumerate(zip(_OWNER_MODELS, names, strict=True)):
        if wanted:
            column = _q(field)  # the name columns are named as their fields
            parts.append(f"SELECT {index}, {column}, id FROM {_table(model)} WHERE {column} IN ({_marks(wanted)})")
            params.extend(sorted(wanted))
    found: list[dict[str, int]] = [{} for _ in _OWNER_MODELS]
    if parts:
        for index, name, row_id in _sql(" UNION ALL ".join(parts), params):
            found[index][name] = row_id
    for (model, field), wanted, ids in zip(_OWNER_MODELS, names, found, strict=True):
        missing = sorted(set(wanted) - set(ids))
        if missing:
            model._default_manager.bulk_create([model(**{field: name}) for name in missing], ignore_conflicts=True)
            ids.update(model._default_manager.filter(**{f"{field}__in": missing}).values_list(field, "id"))
    return found


@dataclass
class Owners:
    """Ids of the projects, users and consumer types a write refers to."""

    projects: dict[str, int]
    users: dict[str, int]
    consumer_types: dict[str, int]

    @classmethod
    def of(cls, requests: Sequence[ConsumerRequest]) -> Self:
        projects, users, consumer_types = _owner_ids(
            [
                {_project_of(r) for r in requests},
                {_user_of(r) for r in requests},
                {r.consumer_type for r in requests if r.consumer_type},
            ]
        )
        return cls(projects, users, consumer_types)


def _project_of(request: ConsumerRequest) -> str:
    return request.project_id or INCOMPLETE_CONSUMER_PROJECT


def _user_of(request: ConsumerRequest) -> str:
    return request.user_id or INCOMPLETE_CONSUMER_USER


def _prepare_consumer(request: ConsumerRequest, owners: Owners, now: object) -> tuple[int, bool]:
    """(consumer id, whether it is new) for a request: created if new
    (already at generation 1, for the write it is made for); if not, locked,
    its generation compared with the request's and bumped, its owners set,
    in one statement (a conflict undoes the bump with the transaction)."""
    project_id = owners.projects[_project_of(request)]
    user_id = owners.users[_user_of(request)]
    # No consumer type (None) finds no id.
    type_id = owners.consumer_types.get(request.consumer_type)  # type: ignore[arg-type]
    table = _table(Consumer)
    insert = (
        f"INSERT INTO {table} (created_at, updated_at, uuid, project_id, user_id, generation, consumer_type_id) "
        "VALUES (%s, NULL, %s, %s, %s, 1, %s) ON CONFLICT (uuid) DO NOTHING RETURNING id"
    )
    insert_params = (now, request.uuid, project_id, user_id, type_id)
    if request.generation is None:  # the client says the consumer is new
        created = _sql(insert, insert_params)
        if created:
            return created[0][0], True
    # Generation 1: the allocations written now are its first change.
    rows = _sql(
        f"UPDATE {table} SET generation = generation + 1, updated_at = %s, project_id = %s, user_id = %s, "
        "consumer_type_id = COALESCE(%s, consumer_type_id) WHERE uuid = %s RETURNING id, generation - 1",
        (now, project_id, user_id, type_id, request.uuid),
    )
    if rows:
        consumer_id, generation = rows[0]
        if request.generation is not UNSET and generation != request.generation:
            raise errors.Conflict(
                f"consumer generation conflict - expected {generation} but got {request.generation}",
                code=errors.CONCURRENT_UPDATE,
            )
        return consumer_id, False
    if request.generation is not UNSET and request.generation is not None:
        raise errors.Conflict(
            f"consumer generation conflict - expected null but got {request.generation}",
            code=errors.CONCURRENT_UPDATE,
        )
    created = _sql(insert, insert_params)
    if not created:
        raise errors.Conflict(
            "consumer generation conflict - another request created the consumer; retry",
            code=errors.CONCURRENT_UPDATE,
        )
    return created[0][0], True


class AllocationProblem(Exception):
    """A request that cannot be met: ``kind`` is "provider" (no such provider),
    "class" (no such resource class) or "inventory" (does not fit)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _providers_where(uuids: Sequence[str], ids: Collection[int], table: str = "") -> tuple[str, list[object]]:
    """A condition matching the providers ``uuids`` and ``ids`` (columns of
    ``table`` when given), and its parameters."""
    prefix = f"{table}." if table else ""
    where = " OR ".join(
        clause
        for clause, values in (
            (f"{prefix}uuid IN ({_marks(uuids)})", uuids),
            (f"{prefix}id IN ({_marks(ids)})", ids),
        )
        if values
    )
    return where, [*uuids, *ids]


def _lock_providers(ids: Collection[int], uuids: Sequence[str] = ()) -> None:
    """Lock the providers ``ids`` and ``uuids`` in id order (so writers queue,
    never deadlock), in one statement. On SQLite the write transaction
    already holds the whole database (it begins IMMEDIATE)."""
    if connection.vendor == "postgresql" and (ids or uuids):
        where, params = _providers_where(uuids, ids)
        _sql(f"SELECT id FROM {_table(ResourceProvider)} WHERE {where} ORDER BY id FOR UPDATE", params)


def _lock_and_bump_providers(
    uuids: Sequence[str], also_ids: Collection[int], now: object, lock_ids: Collection[int] = ()
) -> dict[str, int]:
    """{uuid: id} of the providers ``uuids`` and ``also_ids``, locked in id
    order (so writers queue, never deadlock) and their generations bumped, in
    one statement. The providers ``lock_ids`` are locked with them, in the
    same order and statement, but keep their generations (each is rewritten
    unchanged: an update takes every row it matches, whatever plan it runs)."""
    providers = dict(_sql(*_lock_and_bump_statement(uuids, also_ids, now, lock_ids)))
    for uuid in uuids:
        if uuid not in providers:
            raise AllocationProblem("provider", f"Allocation for resource provider '{uuid}' that does not exist.")
    return providers


def _lock_and_bump_statement(
    uuids: Sequence[str], also_ids: Collection[int], now: object, lock_ids: Collection[int] = ()
) -> tuple[str, list[object]]:
    """The statement of ``_lock_and_bump_providers`` and its parameters; it
    returns (uuid, id) of each provider locked."""
    table = _table(ResourceProvider)
    lock_only = set(lock_ids) - set(also_ids)
    where, where_params = _providers_where(uuids, {*also_ids, *lock_only})
    if lock_only:
        bump, bump_params = _providers_where(uuids, also_ids, table)
        changes = (
            f"generation = {table}.generation + CASE WHEN {bump} THEN 1 ELSE 0 END, "
            f"updated_at = CASE WHEN {bump} THEN %s ELSE {table}.updated_at END"
        )
        params = [*bump_params, *bump_params, now, *where_params]
    else:
        changes = f"generation = {table}.generation + 1, updated_at = %s"
        params = [now, *where_params]
    if connection.vendor == "postgresql":
        sql = (
            f"UPDATE {table} SET {changes} "
            f"FROM (SELECT id FROM {table} WHERE {where} ORDER BY id FOR UPDATE) locked "
            f"WHERE {table}.id = locked.id RETURNING {table}.uuid, {table}.id"
        )
    else:
        sql = f"UPDATE {table} SET {changes} WHERE {where} RETURNING uuid, id"
    return sql, params


@dataclass(frozen=True)
class Limits:
    """What an inventory allows, and what its allocations use."""

    total: int
    reserved: int
    allocation_ratio: float
    min_unit: int
    max_unit: int
    step_size: int
    used: int  # as counted before this write (what it released included)


def _limits(provider_ids: Collection[int], class_ids: Collection[int]) -> dict[tuple[int, int], Limits]:
    """{(provider id, class id): Limits} of the inventories, with what their
    allocations use (as last counted: the caller holds the providers' locks),
    in one statement."""
    rows = _sql(
        "SELECT resource_provider_id, resource_class_id, total, reserved, allocation_ratio, "
        f"min_unit, max_unit, step_size, used FROM {_table(Inventory)} "
        f"WHERE resource_provider_id IN ({_marks(provider_ids)}) AND resource_class_id IN ({_marks(class_ids)})",
        [*provider_ids, *class_ids],
    )
    return {
        (rp_id, class_id): Limits(total, reserved, ratio, min_unit, max_unit, step, int(used))
        for rp_id, class_id, total, reserved, ratio, min_unit, max_unit, step, used in rows
    }


def _add_usage(change: Usage) -> None:
    """Add ``change`` ({(provider id, class id): amount}) to the inventories'
    ``used``, in one statement; the caller holds the providers' locks.
    Changes of classes a provider has no inventory of find no row."""
    rows = [(rp_id, class_id, amount) for (rp_id, class_id), amount in sorted(change.items()) if amount]
    if rows:
        table = _table(Inventory)
        _sql(
            f"UPDATE {table} SET used = {table}.used + change.column3 "
            f"FROM (VALUES {', '.join(['(%s, %s, %s)'] * len(rows))}) AS change "
            f"WHERE {table}.resource_provider_id = change.column1 AND {table}.resource_class_id = change.column2",
            [value for row in rows for value in row],
        )


def _check_fits(
    requests: Sequence[ConsumerRequest],
    providers: dict[str, int],
    class_ids: dict[str, int],
    released: Usage,
) -> None:
    """Every requested amount must respect the inventory's min_unit, max_unit
    and step_size, and all amounts together must fit in the capacity left by
    other consumers (or at least not grow an existing overage). ``released``:
    what the consumers held before this write (their rows already deleted,
    still counted in the inventories' ``used``)."""
    inventories = _limits(set(providers.values()), set(class_ids.values())) if class_ids else {}
    with_inventory = {rp_id for rp_id, _ in inventories}
    missing = [uuid for uuid, rp_id in providers.items() if rp_id not in with_inventory]
    if missing:
        raise AllocationProblem(
            "inventory",
            f"Inventory for '{', '.join(sorted(class_ids, key=class_ids.__getitem__))}' on resource provider "
            f"'{', '.join(missing)}' invalid.",
        )
    wanted: defaultdict[tuple[int, int], int] = defaultdict(int)
    for request in requests:
        for rp_uuid, resources in request.allocations.items():
            for class_name, amount in resources.items():
                key = (providers[rp_uuid], class_ids[class_name])
                inventory = inventories.get(key)
                where = f"'{class_name}' on resource provider '{rp_uuid}'"
                if inventory is None:
                    raise AllocationProblem("inventory", f"Inventory for {where} invalid.")
                if amount < inventory.min_unit or amount > inventory.max_unit or amount % inventory.step_size:
                    raise AllocationProblem(
                        "inventory",
                        f"Unable to create allocation for {where}. "
                        "The requested amount would violate inventory constraints.",
                    )
                wanted[key] += amount
                # What other consumers use; what was used before this write is
                # that plus what it released (amounts are at least 1, so with
                # nothing used nor released any amount exceeds it).
                used = inventory.used - released.get(key, 0)
                if used + wanted[key] > (inventory.total - inventory.reserved) * inventory.allocation_ratio:
                    if used + wanted[key] > inventory.used:
                        raise AllocationProblem(
                            "inventory",
                            f"Unable to create allocation for {where}. The requested amount would exceed the capacity.",
                        )


def _class_ids(names: Collection[str]) -> dict[str, int]:
    """{name: id} of those resource classes ``names`` that exist."""
    found = {name: STANDARD_CLASS_IDS[name] for name in names if name in STANDARD_CLASS_IDS}
    custom = set(names) - set(found)
    if custom:
        found.update(ResourceClass.objects.filter(name__in=custom).values_list("name", "id"))
    return found


def _claim_in_one_flush(request: ConsumerRequest) -> None:
    """A new consumer's claim in one transaction sent at once (PostgreSQL):
    the consumer created (its owners found), its providers locked in id
    order and bumped, then, with a snapshot taken after the locks, every
    amount checked against its inventory (min_unit, max_unit, step_size,
    capacity left) and, if all fit, the allocations inserted and counted on
    the inventories. Guarded (nothing done) when anything is not so: an owner
    row or a consumer type to create, a consumer that exists, a provider or
    an inventory missing, an amount that does not fit; the ordinary path
    then does the work or says what is wrong."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    consumers, projects, users, types = (
        _table(Consumer),
        _table(Project),
        _table(User),
        _table(ConsumerType),
    )
    providers, inventories, allocations = _table(ResourceProvider), _table(Inventory), _table(Allocation)
    create_consumer = (
        f"WITH owner AS (SELECT (SELECT id FROM {projects} WHERE external_id = %s) AS project_id, "
        f"(SELECT id FROM {users} WHERE external_id = %s) AS user_id, "
        f"(SELECT id FROM {types} WHERE name = %s) AS type_id), "
        f"created AS (INSERT INTO {consumers} (created_at, updated_at, uuid, project_id, user_id, generation, "
        "consumer_type_id) SELECT %s, NULL, %s, project_id, user_id, 1, type_id FROM owner "
        "WHERE project_id IS NOT NULL AND user_id IS NOT NULL AND (type_id IS NOT NULL OR %s) "
        "ON CONFLICT (uuid) DO NOTHING RETURNING id) "
        f"SELECT {one_flush.guard('(SELECT count(*) FROM created) = 1')}"
    )
    uuids = sorted(request.allocations)
    lock_sql, lock_params = _lock_and_bump_statement(uuids, (), now)
    lock_providers = f"WITH bumped AS ({lock_sql}) SELECT {one_flush.guard('(SELECT count(*) FROM bumped) = %s')}"
    wanted = [
        (uuid, STANDARD_CLASS_IDS[name], amount)
        for uuid, resources in sorted(request.allocations.items())
        for name, amount in sorted(resources.items())
    ]
    rows = ", ".join(["(%s, %s::integer, %s::integer)"] * len(wanted))
    write = (
        f"WITH wanted (uuid, class_id, amount) AS (VALUES {rows}), "
        "room AS (SELECT rp.id AS rp_id, wanted.class_id, wanted.amount, "
        "wanted.amount >= inv.min_unit AND wanted.amount <= inv.max_unit AND mod(wanted.amount, inv.step_size) = 0 "
        "AND inv.used + wanted.amount <= (inv.total - inv.reserved) * inv.allocation_ratio AS fits "
        f"FROM wanted JOIN {providers} rp ON rp.uuid = wanted.uuid "
        f"JOIN {inventories} inv ON inv.resource_provider_id = rp.id AND inv.resource_class_id = wanted.class_id), "
        f"inserted AS (INSERT INTO {allocations} (created_at, resource_provider_id, consumer_id, resource_class_id, "
        f"used) SELECT %s, rp_id, (SELECT id FROM {consumers} WHERE uuid = %s), class_id, amount FROM room), "
        f"counted AS (UPDATE {inventories} SET used = {inventories}.used + room.amount FROM room "
        f"WHERE {inventories}.resource_provider_id = room.rp_id AND {inventories}.resource_class_id = room.class_id) "
        f"SELECT {one_flush.guard('(SELECT count(*) FROM room WHERE fits) = %s')}"
    )
    one_flush.run(
        [
            (
                create_consumer,
                [
                    _project_of(request),
                    _user_of(request),
                    request.consumer_type,
                    now,
                    request.uuid,
                    request.consumer_type is None,
                ],
            ),
            (lock_providers, [*lock_params, len(uuids)]),
            (write, [*(value for row in wanted for value in row), now, request.uuid, len(wanted)]),
        ]
    )


def _claims_in_one_flush(requests: Sequence[ConsumerRequest]) -> bool:
    """Whether ``requests`` were written by _claim_in_one_flush: one new
    consumer (the client said so) claiming standard classes, outside any
    transaction, on PostgreSQL. False: nothing was done."""
    if len(requests) != 1 or not one_flush.available():
        return False
    (request,) = requests
    if request.generation is not None or not request.allocations:
        return False
    if any(name not in STANDARD_CLASS_IDS for resources in request.allocations.values() for name in resources):
        return False
    if any(not resources for resources in request.allocations.values()):
        return False
    try:
        _claim_in_one_flush(request)
    except one_flush.Guarded:
        return False
    return True


def replace_allocations(requests: Sequence[ConsumerRequest], owners: Owners | None = None) -> None:
    """Make each consumer in ``requests`` hold exactly what its request says.

    Raises errors.Conflict for generation conflicts and AllocationProblem
    when the request cannot be met; changes nothing in either case, not even
    the owner rows (projects, users, consumer types) it would have created:
    they are written first, in the same transaction (see ``_owner_ids``).

    Rows are locked in a fixed order (owner rows, consumers by uuid, then
    providers by id) so that concurrent writers queue instead of deadlocking.
    ``owners``: the owner rows, when the caller's transaction already made
    them (the reshaper does, before it locks providers)."""
    if owners is None and _claims_in_one_flush(requests):
        return
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with transaction.atomic():
        if owners is None:
            owners = Owners.of(requests)
        requests = sorted(requests, key=lambda r: r.uuid)
        consumers: dict[str, int] = {}
        existing: list[int] = []
        for request in requests:
            consumers[request.uuid], is_new = _prepare_consumer(request, owners, now)
            if not is_new:
                existing.append(consumers[request.uuid])
        # What the existing consumers held, gone; as upstream, the
        # generations bumped are those of the providers written to and of
        # those an emptied consumer leaves. Every provider losing
        # allocations is locked all the same: its usage changes.
        released: Usage = defaultdict(int)
        emptied = {consumers[r.uuid] for r in requests if not r.allocations}
        left_ids: set[int] = set()
        if existing:
            for consumer_id, rp_id, class_id, used in _sql(
                f"DELETE FROM {_table(Allocation)} WHERE consumer_id IN ({_marks(existing)}) "
                "RETURNING consumer_id, resource_provider_id, resource_class_id, used",
                existing,
            ):
                released[(rp_id, class_id)] += used
                if consumer_id in emptied:
                    left_ids.add(rp_id)
        class_names = {name for r in requests for resources in r.allocations.values() for name in resources}
        class_ids = _class_ids(class_names)
        provider_uuids = sorted({uuid for r in requests for uuid in r.allocations})
        providers: dict[str, int] = {}
        if provider_uuids or left_ids:
            locked = _lock_and_bump_providers(provider_uuids, left_ids, now, {rp_id for rp_id, _ in released})
            providers = {uuid: locked[uuid] for uuid in provider_uuids}
        for name in sorted(class_names):
            if name not in class_ids:
                raise AllocationProblem("class", f"No such resource class {name}.")
        if provider_uuids:
            _check_fits(requests, providers, class_ids, released)
        rows = [
            (now, providers[rp_uuid], consumers[request.uuid], class_ids[class_name], amount)
            for request in requests
            for rp_uuid, resources in request.allocations.items()
            for class_name, amount in resources.items()
        ]
        if rows:
            _sql(
                f"INSERT INTO {_table(Allocation)} (created_at, resource_provider_id, consumer_id, "
                f"resource_class_id, used) VALUES {', '.join(['(%s, %s, %s, %s, %s)'] * len(rows))}",
                [value for row in rows for value in row],
            )
        change: Usage = defaultdict(int, {key: -amount for key, amount in released.items()})
        for _now, rp_id, _consumer_id, class_id, amount in rows:
            change[(rp_id, class_id)] += amount
        _add_usage(change)
        if emptied:
            _sql(f"DELETE FROM {_table(Consumer)} WHERE id IN ({_marks(emptied)})", list(emptied))


def delete_consumer_allocations(consumer_uuid: str) -> None:
    """Remove a consumer and all it holds (provider generations stay, as
    upstream; the providers are locked while their usage goes down)."""
    with transaction.atomic():
        consumer = Consumer.objects.select_for_update().filter(uuid=consumer_uuid).first()
        change: Usage = defaultdict(int)
        if consumer is not None:
            for rp_id, class_id, used in _sql(
                f"DELETE FROM {_table(Allocation)} WHERE consumer_id = %s "
                "RETURNING resource_provider_id, resource_class_id, used",
                [consumer.id],
            ):
                change[(rp_id, class_id)] -= used
        if consumer is None or not change:  # (a deletion is undone with the transaction)
            raise errors.NotFound(f"No allocations for consumer '{consumer_uuid}'")
        _lock_providers({rp_id for rp_id, _ in change})
        _add_usage(change)
        consumer.delete()


def usages_of_providers(uuids: Iterable[str]) -> dict[str, dict[str, int]]:
    """{provider uuid: {class name: used}} for each of ``uuids`` that exists,
    what ``provider_usages`` gives for one, in three queries for all."""
    uuid_of = dict(ResourceProvider.objects.filter(uuid__in=list(uuids)).values_list("id", "uuid"))
    usages: dict[str, dict[str, int]] = {str(uuid): {} for uuid in uuid_of.values()}
    for provider_id, name, used in Inventory.objects.filter(resource_provider_id__in=uuid_of).values_list(
        "resource_provider_id", "resource_class__name", "used"
    ):
        usages[str(uuid_of[provider_id])][name] = used
    return usages


def recount_usages() -> None:
    """Count every inventory's ``used`` again from the allocations: for
    tools that write allocation rows directly (benchmarks' bulk loads), not
    for the service's own writes, which keep it."""
    sums = (
        Allocation.objects.filter(
            resource_provider=OuterRef("resource_provider"), resource_class=OuterRef("resource_class")
        )
        .order_by()
        .values("resource_provider")
        .annotate(total=Sum("used"))
        .values("total")
    )
    Inventory.objects.update(used=Coalesce(Subquery(sums), 0))


# Above this many providers asked for, rooms_of_providers reads every row and
# keeps those asked for: cheaper than sending thousands of ids in each query.
ROOMS_READ_ALL_ABOVE = 500


def rooms_of_providers(uuids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{provider uuid: {"inventories": {class: record}, "usages": {class:
    used}, "traits": [names]}} for each of ``uuids`` that exists: what one
    provider's inventories, usages and traits give, in three queries for all
    (Corral's capacity by flavor reads every compute node's room at once)."""
    wanted = set(uuids)
    providers = ResourceProvider.objects.all()
    if len(wanted) <= ROOMS_READ_ALL_ABOVE:
        providers = providers.filter(uuid__in=wanted)
    uuid_of = {pk: str(value) for pk, value in providers.values_list("id", "uuid") if str(value) in wanted}

    def rows(model: type[Inventory] | type[ResourceProviderTrait]) -> QuerySet[Any]:
        found = model.objects.all()
        return found.filter(resource_provider_id__in=uuid_of) if len(wanted) <= ROOMS_READ_ALL_ABOVE else found

    inventories: dict[str, dict[str, dict[str, Any]]] = {value: {} for value in uuid_of.values()}
    usages: dict[str, dict[str, int]] = {value: {} for value in uuid_of.values()}
    fields = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
    for provider_id, name, used, *figures in rows(Inventory).values_list(
        "resource_provider_id", "resource_class__name", "used", *fields
    ):
        if provider_id in uuid_of:
            inventories[uuid_of[provider_id]][name] = dict(zip(fields, figures, strict=True))
            usages[uuid_of[provider_id]][name] = used
    traits: dict[str, list[str]] = defaultdict(list)
    for provider_id, name in rows(ResourceProviderTrait).values_list("resource_provider_id", "trait__name"):
        if provider_id in uuid_of:
            traits[uuid_of[provider_id]].append(name)
    return {
        value: {"inventories": inventories[value], "usages": usages[value], "traits": sorted(traits[value])}
        for value in uuid_of.values()
    }
