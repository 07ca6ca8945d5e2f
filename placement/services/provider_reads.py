"""The reads every nova-compute sends for each of its providers once a
minute: its inventories, allocations, aggregates and traits. At the size of
a large region (8,000 nodes and more) they are most of placement's
requests, so each is one statement written here in SQL: the provider's row
LEFT JOINed with its rows (a provider with none still answers its
generation), in upstream's order, without the ORM's per-request work of
building and compiling a query (about two thirds of such a request's time
in Python), prepared on PostgreSQL (``prepared``): planned once per
connection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone

from placement import errors
from placement.models import (
    Allocation,
    Consumer,
    Inventory,
    PlacementAggregate,
    ResourceClass,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
    quoted_table,
)

from . import prepared
from .inventories import INVENTORY_FIELDS


@dataclass(frozen=True, slots=True)
class ProviderRows:
    """A provider's generation, its rows (without the generation), and when the newest of them changed."""

    generation: int
    rows: list[tuple[Any, ...]]
    last_modified: datetime | None


def _stored_time(value: datetime | None) -> datetime | None:
    """A timestamp as the ORM gives it: SQLite's come back naive (stored in UTC)."""
    if value is not None and timezone.is_naive(value):
        return value.replace(tzinfo=UTC)
    return value


def _read(uuid: str, columns: Sequence[str], joins: str, order: str, changed: str | None = None) -> ProviderRows:
    """The provider ``uuid``'s generation and rows, in one statement:
    ``columns`` (the first never NULL in a row that exists) from ``joins``
    (LEFT JOINs off ``rp``) in ``order``; with ``changed`` (a table alias),
    the newest of its rows' changes. NotFound if there is no such provider."""
    selected = ["rp.generation", *columns]
    if changed:
        selected += [f"{changed}.updated_at", f"{changed}.created_at"]  # each its own column: SQLite types them
    found = prepared.rows(
        f"SELECT {', '.join(selected)} FROM {quoted_table(ResourceProvider)} rp {joins} "
        f"WHERE rp.uuid = %s ORDER BY {order}",
        [uuid],
    )
    if not found:
        raise errors.NotFound(f"No resource provider with uuid {uuid} found")
    rows = [row[1:] for row in found if row[1] is not None]
    last_modified = None
    if changed and rows:
        last_modified = _stored_time(max(row[-2] or row[-1] for row in rows))
        rows = [row[:-2] for row in rows]
    return ProviderRows(found[0][0], rows, last_modified)


def aggregates_of(uuid: str) -> tuple[int, list[str]]:
    """(generation, uuids of its aggregates in id order)."""
    read = _read(
        uuid,
        ["a.uuid"],
        f"LEFT JOIN {quoted_table(ResourceProviderAggregate)} link ON link.resource_provider_id = rp.id "
        f"LEFT JOIN {quoted_table(PlacementAggregate)} a ON a.id = link.aggregate_id",
        "a.id",
    )
    return read.generation, [uuid for (uuid,) in read.rows]


def inventories_of(uuid: str) -> tuple[ProviderRows, dict[str, dict[str, Any]]]:
    """(the read, {class name: INVENTORY_FIELDS}) in resource class id order."""
    read = _read(
        uuid,
        ["rc.name", *(f"inv.{name}" for name in INVENTORY_FIELDS)],
        f"LEFT JOIN {quoted_table(Inventory)} inv ON inv.resource_provider_id = rp.id "
        f"LEFT JOIN {quoted_table(ResourceClass)} rc ON rc.id = inv.resource_class_id",
        "inv.resource_class_id",
        changed="inv",
    )
    return read, {row[0]: dict(zip(INVENTORY_FIELDS, row[1:], strict=True)) for row in read.rows}


def allocations_of(uuid: str) -> ProviderRows:
    """Rows of (consumer uuid, consumer generation, class name, used), in
    upstream's order (its (provider, class, used) index's)."""
    return _read(
        uuid,
        ["c.uuid", "c.generation", "rc.name", "a.used"],
        f"LEFT JOIN {quoted_table(Allocation)} a ON a.resource_provider_id = rp.id "
        f"LEFT JOIN {quoted_table(Consumer)} c ON c.id = a.consumer_id "
        f"LEFT JOIN {quoted_table(ResourceClass)} rc ON rc.id = a.resource_class_id",
        "a.resource_class_id, a.used, a.id",
        changed="a",
    )


def traits_of(uuid: str) -> tuple[ProviderRows, list[str]]:
    """(the read, names of its traits in id order, as upstream lists them)."""
    read = _read(
        uuid,
        ["t.name"],
        f"LEFT JOIN {quoted_table(ResourceProviderTrait)} link ON link.resource_provider_id = rp.id "
        f"LEFT JOIN {quoted_table(Trait)} t ON t.id = link.trait_id",
        "t.id",
        changed="t",
    )
    return read, [name for (name,) in read.rows]
