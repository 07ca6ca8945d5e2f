"""A resource provider's aggregates (/resource_providers/{uuid}/aggregates).

Replacing them locks the provider; from microversion 1.19 the client's
generation is compared and bumped, as upstream does."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from placement.models import PlacementAggregate, ResourceProvider, ResourceProviderAggregate

from .providers import bump_generation, lock_provider


def provider_aggregates(provider: ResourceProvider) -> list[str]:
    """The uuids of the provider's aggregates."""
    return list(
        PlacementAggregate.objects.filter(resourceprovideraggregate__resource_provider=provider)
        .order_by("id")
        .values_list("uuid", flat=True)
    )


def set_provider_aggregates(
    uuid: str, aggregate_uuids: Iterable[str], generation: int | None = None
) -> tuple[ResourceProvider, list[str]]:
    """Replace the provider's aggregates; with a ``generation`` (1.19+) compare
    and bump it, as upstream does."""
    aggregate_uuids = list(aggregate_uuids)
    with transaction.atomic():
        provider = lock_provider(uuid, generation)
        wanted = set(aggregate_uuids)
        existing = {a.uuid: a for a in PlacementAggregate.objects.filter(uuid__in=wanted)}
        for missing in wanted - set(existing):
            existing[missing], _ = PlacementAggregate.objects.get_or_create(uuid=missing)
        links = ResourceProviderAggregate.objects.filter(resource_provider=provider)
        have = set(links.values_list("aggregate_id", flat=True))
        want = {a.id for a in existing.values()}
        links.filter(aggregate_id__in=have - want).delete()
        ResourceProviderAggregate.objects.bulk_create(
            [ResourceProviderAggregate(resource_provider=provider, aggregate_id=a) for a in want - have]
        )
        if generation is not None:
            bump_generation(provider)
    return provider, aggregate_uuids
