"""Traits: the standard ones (os-traits) and CUSTOM_* ones."""

from collections.abc import Collection

from django.db import IntegrityError, transaction

from placement import errors
from placement.models import ResourceProviderTrait, Trait
from placement.standards import is_standard_trait


def list_traits(
    name_in: Collection[str] | None = None, prefix: str | None = None, associated: bool | None = None
) -> list[Trait]:
    traits = Trait.objects.all()
    if name_in is not None:
        traits = traits.filter(name__in=name_in)
    if prefix is not None:
        traits = traits.filter(name__startswith=prefix)
    if associated is True:
        traits = traits.filter(id__in=ResourceProviderTrait.objects.values("trait_id"))
    elif associated is False:
        traits = traits.exclude(id__in=ResourceProviderTrait.objects.values("trait_id"))
    return list(traits.order_by("id"))  # database order, as upstream


def get_trait(name: str) -> Trait:
    try:
        return Trait.objects.get(name=name)
    except Trait.DoesNotExist:
        raise errors.NotFound(f"No such trait(s): {name}.") from None


def trait_ids(names: Collection[str]) -> dict[str, int]:
    """{name: id}; NotFound listing the unknown names."""
    found = dict(Trait.objects.filter(name__in=set(names)).values_list("name", "id"))
    missing = sorted(set(names) - set(found))
    if missing:
        raise errors.NotFound(f"No such trait(s): {', '.join(missing)}.")
    return found


def ensure_trait(name: str) -> tuple[Trait, bool]:
    """(trait, created)."""
    existing = Trait.objects.filter(name=name).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            return Trait.objects.create(name=name), True
    except IntegrityError:
        return Trait.objects.get(name=name), False


def delete_trait(name: str) -> None:
    with transaction.atomic():
        trait = get_trait(name)
        if is_standard_trait(name):
            raise errors.Invalid(f"Cannot delete standard trait {name}.")
        if ResourceProviderTrait.objects.filter(trait=trait).exists():
            raise errors.Conflict(f"The trait {name} is in use by a resource provider.")
        trait.delete()
