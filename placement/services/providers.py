"""Resource providers: creating, updating (name, parent) and deleting them,
listing them by filters, and the row lock and generation every write to a
provider or to what hangs off it (inventories, aggregates, traits,
allocations) goes through.

Every write locks the provider row (``lock_provider``), compares the
generation the client sent with the stored one, and bumps the generation
(``bump_generation``), all in one transaction."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Final, NoReturn

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from placement import errors
from placement.models import (
    Allocation,
    Inventory,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    quoted_table,
)

from . import resource_classes as rc_service
from . import traits as trait_service

GENERATION_CHANGED = "Resource provider's generation already changed. Please update the generation and try again."


class _Unset:
    """The type of UNSET: "leave this as it is" (None means something else)."""


UNSET: Final = _Unset()


def _providers() -> QuerySet[ResourceProvider]:
    return ResourceProvider.objects.select_related("root", "parent")


def get_provider(uuid: str) -> ResourceProvider:
    provider = _providers().filter(uuid=uuid).first()
    if provider is None:
        raise errors.NotFound(f"No resource provider with uuid {uuid} found")
    return provider


def lock_provider(
    uuid: str, expected_generation: int | None = None, conflict_message: str = GENERATION_CHANGED
) -> ResourceProvider:
    """The provider, locked for this transaction; Conflict if the client's
    generation is stale."""
    provider = _providers().select_for_update(of=("self",)).filter(uuid=uuid).first()
    if provider is None:
        raise errors.NotFound(f"No resource provider with uuid {uuid} found")
    if expected_generation is not None and provider.generation != expected_generation:
        raise errors.Conflict(conflict_message, code=errors.CONCURRENT_UPDATE)
    return provider


# The generations a provider can have: a 64-bit signed column on both databases.
STORABLE_GENERATIONS = range(-(2**63), 2**63)


def compare_and_bump(
    uuid: str, expected_generation: int, conflict_message: str = GENERATION_CHANGED
) -> tuple[int, int]:
    """(id, new generation) of the provider, its generation compared with the
    client's and bumped in one statement, which also locks its row for this
    transaction (a concurrent writer waits for it, then sees the new
    generation and is refused: no lost update). NotFound or Conflict as
    ``lock_provider``."""
    row = None
    if expected_generation in STORABLE_GENERATIONS:  # one past 64 bits matches none (and SQLite cannot bind it)
        sql, params = compare_and_bump_statement(uuid, expected_generation)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)  # type: ignore[arg-type]  # plain values: a datetime, a string, an int
            row = cursor.fetchone()
    if row is None:
        if not ResourceProvider.objects.filter(uuid=uuid).exists():
            raise errors.NotFound(f"No resource provider with uuid {uuid} found")
        raise errors.Conflict(conflict_message, code=errors.CONCURRENT_UPDATE)
    return row[0], row[1]


def compare_and_bump_statement(uuid: str, expected_generation: int) -> tuple[str, list[object]]:
    """The one statement of ``compare_and_bump`` and its parameters: it
    returns (id, new generation), or no row when the generation is stale or
    the provider unknown."""
    table = quoted_table(ResourceProvider)
    return (
        f"UPDATE {table} SET generation = generation + 1, updated_at = %s "
        "WHERE uuid = %s AND generation = %s RETURNING id, generation",
        [connection.ops.adapt_datetimefield_value(timezone.now()), uuid, expected_generation],
    )


def bump_generation(provider: ResourceProvider) -> None:
    """Count one more change of ``provider`` (locked by the caller)."""
    now = timezone.now()
    updated = ResourceProvider.objects.filter(id=provider.id, generation=provider.generation).update(
        generation=F("generation") + 1, updated_at=now
    )
    if updated != 1:
        raise errors.Conflict(
            "Another thread concurrently updated the resource provider data. Please retry your update",
            code=errors.CONCURRENT_UPDATE,
        )
    provider.generation += 1
    provider.updated_at = now


# --- providers -------------------------------------------------------------


def _duplicate_message(name: str, uuid: str) -> str:
    duplicates = []
    if ResourceProvider.objects.filter(uuid=uuid).exists():
        duplicates.append(f"uuid: {uuid}")
    if ResourceProvider.objects.filter(name=name).exists():
        duplicates.append(f"name: {name}")
    return f"Conflicting resource provider {', '.join(duplicates)} already exists."


def create_provider(name: str, uuid: str, parent_uuid: str | None = None) -> ResourceProvider:
    with transaction.atomic():
        parent = None
        if parent_uuid is not None:
            if parent_uuid == uuid:
                raise errors.Invalid(
                    f'Unable to create resource provider "{name}", {uuid}: Object action create failed '
                    "because: parent provider UUID cannot be same as UUID. Please set parent provider "
                    "UUID to None if there is no parent."
                )
            parent = ResourceProvider.objects.select_for_update().filter(uuid=parent_uuid).first()
            if parent is None:
                raise errors.Invalid(
                    f'Unable to create resource provider "{name}", {uuid}: Object action create failed '
                    "because: parent provider UUID does not exist."
                )
        if ResourceProvider.objects.filter(Q(uuid=uuid) | Q(name=name)).exists():
            raise errors.Conflict(_duplicate_message(name, uuid), code=errors.DUPLICATE_NAME)
        try:
            with transaction.atomic():
                provider = ResourceProvider.objects.create(
                    uuid=uuid, name=name, parent=parent, root_id=parent.root_id if parent else None
                )
        except IntegrityError:
            raise errors.Conflict(_duplicate_message(name, uuid), code=errors.DUPLICATE_NAME) from None
        if parent is None:
            provider.root = provider
            provider.save(update_fields=["root"])
    return get_provider(uuid)


def _subtree_ids(provider: ResourceProvider) -> list[int]:
    """Ids of ``provider`` and everything below it."""
    children_of: dict[int | None, list[int]] = {}
    for pid, parent_id in ResourceProvider.objects.filter(root_id=provider.root_id).values_list("id", "parent_id"):
        children_of.setdefault(parent_id, []).append(pid)
    found: list[int] = []
    todo = [provider.id]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children_of.get(current, []))
    return found


def update_provider(
    uuid: str,
    name: str | _Unset = UNSET,
    parent_uuid: str | None | _Unset = UNSET,
    allow_reparenting: bool = False,
) -> ResourceProvider:
    def fail(reason: str, action: str = "update") -> NoReturn:
        raise errors.Invalid(
            f"Unable to save resource provider {uuid}: Object action {action} failed because: {reason}"
        )

    with transaction.atomic():
        provider = lock_provider(uuid)
        fields = ["updated_at"]
        if not isinstance(name, _Unset) and name != provider.name:
            if ResourceProvider.objects.filter(name=name).exclude(id=provider.id).exists():
                raise errors.Conflict(
                    f"Conflicting resource provider {name} already exists.", code=errors.DUPLICATE_NAME
                )
            provider.name = name
            fields.append("name")
        if not isinstance(parent_uuid, _Unset):
            new_root = None
            subtree: list[int] = []
            if parent_uuid is not None:
                parent = ResourceProvider.objects.filter(uuid=parent_uuid).first()
                if parent is None:
                    fail("parent provider UUID does not exist.", action="create")
                if provider.parent_id is not None and provider.parent_id != parent.id and not allow_reparenting:
                    fail("re-parenting a provider is not currently allowed.")
                if provider.parent_id != parent.id:
                    subtree = _subtree_ids(provider)
                    if parent.id in subtree:
                        fail("creating loop in the provider tree is not allowed.")
                    new_root = parent.root_id
                provider.parent = parent
            elif provider.parent_id is not None:
                if not allow_reparenting:
                    fail("un-parenting a provider is not currently allowed.")
                subtree = _subtree_ids(provider)
                provider.parent = None
                new_root = provider.id
            if new_root is not None:
                ResourceProvider.objects.filter(id__in=subtree).update(root_id=new_root)
                provider.root_id = new_root
            fields += ["parent", "root"]
        provider.updated_at = timezone.now()
        try:
            with transaction.atomic():
                provider.save(update_fields=fields)
        except IntegrityError:
            raise errors.Conflict(
                f"Conflicting resource provider {name} already exists.", code=errors.DUPLICATE_NAME
            ) from None
    return get_provider(uuid)


def delete_provider(uuid: str) -> None:
    with transaction.atomic():
        provider = ResourceProvider.objects.select_for_update().filter(uuid=uuid).first()
        if provider is None:
            raise errors.NotFound(f"No resource provider with uuid {uuid} found for delete")
        if ResourceProvider.objects.filter(parent=provider).exists():
            raise errors.Conflict(
                f"Unable to delete parent resource provider {uuid}: It has child resource providers.",
                code=errors.PROVIDER_CANNOT_DELETE_PARENT,
            )
        if Allocation.objects.filter(resource_provider=provider).exists():
            raise errors.Conflict(
                f"Unable to delete resource provider {uuid}: Resource provider has allocations.",
                code=errors.PROVIDER_IN_USE,
            )
        Inventory.objects.filter(resource_provider=provider).delete()
        ResourceProviderAggregate.objects.filter(resource_provider=provider).delete()
        ResourceProviderTrait.objects.filter(resource_provider=provider).delete()
        ResourceProvider.objects.filter(id=provider.id).update(root=None)
        provider.delete()


# --- finding providers -------------------------------------------------------


def providers_in_aggregates(member_of: Iterable[Collection[str]]) -> set[int]:
    """Ids of providers in at least one aggregate of every any-of set of
    aggregate uuids in ``member_of`` (``list_providers`` and the
    allocation-candidate engine both filter with it)."""
    ids: set[int] | None = None
    for any_of in member_of:
        matching = set(
            ResourceProviderAggregate.objects.filter(aggregate__uuid__in=any_of).values_list(
                "resource_provider_id", flat=True
            )
        )
        ids = matching if ids is None else ids & matching
    return ids or set()


def providers_with_traits(required: Iterable[Collection[int]]) -> set[int]:
    """Ids of providers having, for each any-of set of trait ids, one of them."""
    ids: set[int] | None = None
    for any_of in required:
        matching = set(
            ResourceProviderTrait.objects.filter(trait_id__in=any_of).values_list("resource_provider_id", flat=True)
        )
        ids = matching if ids is None else ids & matching
    return ids or set()


def providers_with_capacity(resource_class_id: int, amount: int) -> set[int]:
    """Ids of providers whose inventory of the class can take ``amount`` more units."""
    candidates = Inventory.objects.filter(
        resource_class_id=resource_class_id, min_unit__lte=amount, max_unit__gte=amount
    ).values_list("resource_provider_id", "total", "reserved", "allocation_ratio", "step_size", "used")
    return {
        rp_id
        for rp_id, total, reserved, ratio, step, used in candidates
        if amount % step == 0 and used + amount <= (total - reserved) * ratio
    }


def list_providers(
    name: str | None = None,
    uuid: str | None = None,
    in_tree: str | None = None,
    member_of: Collection[Collection[str]] = (),
    forbidden_aggregates: Collection[str] = (),
    required_traits: Collection[Collection[str]] = (),
    forbidden_traits: Collection[str] = (),
    resources: Mapping[str, int] | None = None,
) -> list[ResourceProvider]:
    """Providers matching every given filter. ``required_traits`` is a list of
    any-of sets of names; unknown trait or resource class names raise NotFound."""
    providers = _providers().order_by("id")
    if name:
        providers = providers.filter(name=name)
    if uuid:
        providers = providers.filter(uuid=uuid)
    if in_tree:
        tree = ResourceProvider.objects.filter(uuid=in_tree).values_list("root_id", flat=True).first()
        if tree is None:
            return []
        providers = providers.filter(root_id=tree)
    if required_traits:
        ids = trait_service.trait_ids(set().union(*required_traits))
        providers = providers.filter(id__in=providers_with_traits([{ids[t] for t in s} for s in required_traits]))
    if forbidden_traits:
        ids = trait_service.trait_ids(forbidden_traits)
        providers = providers.exclude(
            id__in=ResourceProviderTrait.objects.filter(trait_id__in=ids.values()).values("resource_provider_id")
        )
    if member_of:
        providers = providers.filter(id__in=providers_in_aggregates(member_of))
    if forbidden_aggregates:
        providers = providers.exclude(
            id__in=ResourceProviderAggregate.objects.filter(aggregate__uuid__in=forbidden_aggregates).values(
                "resource_provider_id"
            )
        )
    if resources:
        class_ids = rc_service.resource_class_ids(list(resources))
        for class_name, amount in resources.items():
            providers = providers.filter(id__in=providers_with_capacity(class_ids[class_name], amount))
    return list(providers)
