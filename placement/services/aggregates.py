"""A resource provider's aggregates (/resource_providers/{uuid}/aggregates).

Replacing them locks the provider; from microversion 1.19 the client's
generation is compared and bumped, as upstream does. A read is one
statement (``provider_reads``), a replacement three or four (the provider's row locked, and
bumped when the client sent a generation; the links and the aggregates
named; the links removed and/or added). On PostgreSQL, a replacement with a
generation whose aggregates all exist is two statements sent at once
(``one_flush``): the compare-and-bump, then the links replaced; anything
else (a stale generation, an unknown provider, an aggregate to create)
takes the ordinary path."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction

from placement.models import PlacementAggregate, ResourceProvider, ResourceProviderAggregate
from placement.models import quoted_table as _table

from . import one_flush
from .providers import STORABLE_GENERATIONS, compare_and_bump, compare_and_bump_statement, lock_provider


def set_provider_aggregates(
    uuid: str, aggregate_uuids: Iterable[str], generation: int | None = None
) -> tuple[int, list[str]]:
    """Replace the provider's aggregates; with a ``generation`` (1.19+) compare
    and bump it, as upstream does. Returns (the provider's generation now,
    the aggregates)."""
    aggregate_uuids = list(aggregate_uuids)
    if generation is not None and generation in STORABLE_GENERATIONS and one_flush.available():
        try:
            return _replace_in_one_flush(uuid, aggregate_uuids, generation), aggregate_uuids
        except one_flush.Guarded:
            pass  # the ordinary path says why, or creates the aggregates
    with transaction.atomic():
        if generation is None:
            provider = lock_provider(uuid)
            provider_id, new_generation = provider.id, provider.generation
        else:
            provider_id, new_generation = compare_and_bump(uuid, generation)
        wanted = set(aggregate_uuids)
        # The aggregates named (kind 0) and those linked now (kind 1), at once.
        with connection.cursor() as cursor:
            marks = ", ".join(["%s"] * len(wanted))
            named = f"SELECT 0, id, uuid FROM {_table(PlacementAggregate)} WHERE uuid IN ({marks}) UNION ALL "
            named = named if wanted else ""
            cursor.execute(
                f"{named}SELECT 1, aggregate_id, NULL FROM {_table(ResourceProviderAggregate)} "
                "WHERE resource_provider_id = %s",
                [*sorted(wanted), provider_id],
            )
            rows = cursor.fetchall()
        existing = {aggregate: row_id for kind, row_id, aggregate in rows if kind == 0}
        have = {row_id for kind, row_id, _aggregate in rows if kind == 1}
        for missing in sorted(wanted - set(existing)):
            existing[missing] = PlacementAggregate.objects.get_or_create(uuid=missing)[0].id
        want = set(existing.values())
        if have - want:
            ResourceProviderAggregate.objects.filter(
                resource_provider_id=provider_id, aggregate_id__in=have - want
            ).delete()
        if want - have:
            ResourceProviderAggregate.objects.bulk_create(
                [ResourceProviderAggregate(resource_provider_id=provider_id, aggregate_id=a) for a in want - have]
            )
    return new_generation, aggregate_uuids


def _replace_in_one_flush(uuid: str, aggregate_uuids: list[str], generation: int) -> int:
    """The provider's new generation, its generation compared and bumped and
    its links replaced in one transaction sent at once; Guarded (nothing
    done) when the generation is stale, the provider unknown or an
    aggregate does not exist yet."""
    providers, aggregates, links = (
        _table(ResourceProvider),
        _table(PlacementAggregate),
        _table(ResourceProviderAggregate),
    )
    bump_sql, bump_params = compare_and_bump_statement(uuid, generation)
    bump = (
        f"WITH bumped AS ({bump_sql}) "
        f"SELECT (SELECT generation FROM bumped), {one_flush.guard('(SELECT count(*) FROM bumped) = 1')}"
    )
    # After the bump, with the provider locked: a snapshot of its own.
    replace = (
        f"WITH me AS (SELECT id FROM {providers} WHERE uuid = %s), "
        f"wanted AS (SELECT id FROM {aggregates} WHERE uuid = ANY(%s)), "
        f"removed AS (DELETE FROM {links} WHERE resource_provider_id = (SELECT id FROM me) "
        "AND aggregate_id NOT IN (SELECT id FROM wanted)), "
        f"added AS (INSERT INTO {links} (resource_provider_id, aggregate_id) "
        "SELECT (SELECT id FROM me), wanted.id FROM wanted WHERE NOT EXISTS "
        f"(SELECT 1 FROM {links} link WHERE link.resource_provider_id = (SELECT id FROM me) "
        "AND link.aggregate_id = wanted.id)) "
        f"SELECT {one_flush.guard('(SELECT count(*) FROM wanted) = %s')}"
    )
    wanted = sorted(set(aggregate_uuids))
    bumped, _replaced = one_flush.run([(bump, bump_params), (replace, [uuid, wanted, len(wanted)])])
    return int(bumped[0][0])
