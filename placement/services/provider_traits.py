"""A resource provider's traits (/resource_providers/{uuid}/traits; the
traits themselves are ``traits``). Every change locks the provider, compares
the client's generation and bumps it."""

from __future__ import annotations

from collections.abc import Collection

from django.db import transaction

from placement import errors
from placement.models import ResourceProvider, ResourceProviderTrait, Trait

from .providers import bump_generation, lock_provider


def set_provider_traits(
    uuid: str, generation: int | None, names: Collection[str]
) -> tuple[ResourceProvider, list[Trait]]:
    with transaction.atomic():
        provider = lock_provider(uuid, generation)
        wanted = list(Trait.objects.filter(name__in=names))
        missing = set(names) - {t.name for t in wanted}
        if missing:
            raise errors.Invalid(f"No such trait {', '.join(sorted(missing))}")
        _replace_traits(provider, wanted)
    return provider, wanted


def _replace_traits(provider: ResourceProvider, wanted: Collection[Trait]) -> None:
    have = set(ResourceProviderTrait.objects.filter(resource_provider=provider).values_list("trait_id", flat=True))
    want = {t.id for t in wanted}
    if have == want:
        return
    ResourceProviderTrait.objects.filter(resource_provider=provider, trait_id__in=have - want).delete()
    ResourceProviderTrait.objects.bulk_create(
        [ResourceProviderTrait(resource_provider=provider, trait_id=t) for t in want - have]
    )
    bump_generation(provider)


def delete_provider_traits(uuid: str) -> None:
    with transaction.atomic():
        provider = lock_provider(uuid)
        _replace_traits(provider, [])
