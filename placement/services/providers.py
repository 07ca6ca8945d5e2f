"""Resource providers: trees, traits, aggregates and inventories.

Every write locks the provider row (``select_for_update``), compares the
generation the client sent with the stored one, and bumps the generation,
all in one transaction."""
from django.db import IntegrityError, transaction
from django.db.models import F, Q, Sum
from django.utils import timezone

from placement import errors
from placement.models import (
    Allocation,
    Inventory,
    PlacementAggregate,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)

from . import resource_classes as rc_service
from . import traits as trait_service

GENERATION_CHANGED = (
    "Resource provider's generation already changed. Please update the generation and try again."
)
UNSET = object()


def _providers():
    return ResourceProvider.objects.select_related("root", "parent")


def get_provider(uuid):
    provider = _providers().filter(uuid=uuid).first()
    if provider is None:
        raise errors.NotFound(f"No resource provider with uuid {uuid} found")
    return provider


def lock_provider(uuid, expected_generation=None, conflict_message=GENERATION_CHANGED):
    """The provider, locked for this transaction; Conflict if the client's
    generation is stale."""
    provider = _providers().select_for_update(of=("self",)).filter(uuid=uuid).first()
    if provider is None:
        raise errors.NotFound(f"No resource provider with uuid {uuid} found")
    if expected_generation is not None and provider.generation != expected_generation:
        raise errors.Conflict(conflict_message, code=errors.CONCURRENT_UPDATE)
    return provider


def bump_generation(provider):
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


def _duplicate_message(name, uuid):
    duplicates = []
    if ResourceProvider.objects.filter(uuid=uuid).exists():
        duplicates.append(f"uuid: {uuid}")
    if ResourceProvider.objects.filter(name=name).exists():
        duplicates.append(f"name: {name}")
    return f"Conflicting resource provider {', '.join(duplicates)} already exists."


def create_provider(name, uuid, parent_uuid=None):
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


def _subtree_ids(provider):
    """Ids of ``provider`` and everything below it."""
    children_of = {}
    for pid, parent_id in ResourceProvider.objects.filter(root_id=provider.root_id).values_list("id", "parent_id"):
        children_of.setdefault(parent_id, []).append(pid)
    found, todo = [], [provider.id]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children_of.get(current, []))
    return found


def update_provider(uuid, name=UNSET, parent_uuid=UNSET, allow_reparenting=False):
    def fail(reason, action="update"):
        raise errors.Invalid(
            f"Unable to save resource provider {uuid}: Object action {action} failed because: {reason}"
        )

    with transaction.atomic():
        provider = lock_provider(uuid)
        fields = ["updated_at"]
        if name is not UNSET and name != provider.name:
            if ResourceProvider.objects.filter(name=name).exclude(id=provider.id).exists():
                raise errors.Conflict(
                    f"Conflicting resource provider {name} already exists.", code=errors.DUPLICATE_NAME
                )
            provider.name = name
            fields.append("name")
        if parent_uuid is not UNSET:
            new_root = None
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


def delete_provider(uuid):
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


def providers_in_aggregates(member_of):
    """Ids of providers in at least one aggregate of every set in ``member_of``."""
    ids = None
    for any_of in member_of:
        matching = set(
            ResourceProviderAggregate.objects.filter(aggregate__uuid__in=any_of).values_list(
                "resource_provider_id", flat=True
            )
        )
        ids = matching if ids is None else ids & matching
    return ids or set()


def providers_with_traits(required):
    """Ids of providers having, for each any-of set of trait ids, one of them."""
    ids = None
    for any_of in required:
        matching = set(
            ResourceProviderTrait.objects.filter(trait_id__in=any_of).values_list("resource_provider_id", flat=True)
        )
        ids = matching if ids is None else ids & matching
    return ids or set()


def providers_with_capacity(resource_class_id, amount):
    """Ids of providers whose inventory of the class can take ``amount`` more units."""
    used = dict(
        Allocation.objects.filter(resource_class_id=resource_class_id)
        .values("resource_provider_id")
        .annotate(used=Sum("used"))
        .values_list("resource_provider_id", "used")
    )
    candidates = Inventory.objects.filter(
        resource_class_id=resource_class_id, min_unit__lte=amount, max_unit__gte=amount
    ).values_list("resource_provider_id", "total", "reserved", "allocation_ratio", "step_size")
    return {
        rp_id
        for rp_id, total, reserved, ratio, step in candidates
        if amount % step == 0 and used.get(rp_id, 0) + amount <= (total - reserved) * ratio
    }


def list_providers(
    name=None,
    uuid=None,
    in_tree=None,
    member_of=(),
    forbidden_aggregates=(),
    required_traits=(),
    forbidden_traits=(),
    resources=None,
):
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


# --- traits ---------------------------------------------------------------


def provider_traits(provider):
    return list(Trait.objects.filter(resourceprovidertrait__resource_provider=provider).order_by("name"))


def set_provider_traits(uuid, generation, names):
    with transaction.atomic():
        provider = lock_provider(uuid, generation)
        wanted = list(Trait.objects.filter(name__in=names))
        missing = set(names) - {t.name for t in wanted}
        if missing:
            raise errors.Invalid(f"No such trait {', '.join(sorted(missing))}")
        _replace_traits(provider, wanted)
    return provider, wanted


def _replace_traits(provider, wanted):
    have = set(ResourceProviderTrait.objects.filter(resource_provider=provider).values_list("trait_id", flat=True))
    want = {t.id for t in wanted}
    if have == want:
        return
    ResourceProviderTrait.objects.filter(resource_provider=provider, trait_id__in=have - want).delete()
    ResourceProviderTrait.objects.bulk_create(
        [ResourceProviderTrait(resource_provider=provider, trait_id=t) for t in want - have]
    )
    bump_generation(provider)


def delete_provider_traits(uuid):
    with transaction.atomic():
        provider = lock_provider(uuid)
        _replace_traits(provider, [])


# --- aggregates -------------------------------------------------------------


def provider_aggregates(provider):
    return list(
        PlacementAggregate.objects.filter(resourceprovideraggregate__resource_provider=provider)
        .order_by("id")
        .values_list("uuid", flat=True)
    )


def set_provider_aggregates(uuid, aggregate_uuids, generation=None):
    """Replace the provider's aggregates; with a ``generation`` (1.19+) compare
    and bump it, as upstream does."""
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
    return provider, list(aggregate_uuids)


# --- inventories -------------------------------------------------------------

INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")


def provider_inventories(provider):
    return list(
        Inventory.objects.filter(resource_provider=provider).select_related("resource_class").order_by("resource_class_id")
    )


def get_inventory(provider, class_name):
    inventory = (
        Inventory.objects.filter(resource_provider=provider, resource_class__name=class_name)
        .select_related("resource_class")
        .first()
    )
    if inventory is None:
        raise errors.NotFound(f"No inventory of class {class_name} for {provider.uuid}")
    return inventory


def _check_capacity(provider, class_name, data, reserved_may_equal_total):
    capacity = data["total"] - data["reserved"]
    if capacity < 0 or (capacity == 0 and not reserved_may_equal_total):
        relation = "greater than" if reserved_may_equal_total else "greater than or equal to"
        raise errors.Invalid(
            f"Unable to update inventory for resource provider {provider.uuid}: Invalid inventory for "
            f"'{class_name}' on resource provider '{provider.uuid}'. The reserved value is {relation} total."
        )


def _used_by_class(provider):
    return dict(
        Allocation.objects.filter(resource_provider=provider)
        .values("resource_class__name")
        .annotate(used=Sum("used"))
        .values_list("resource_class__name", "used")
    )


def create_inventory(uuid, class_name, data, reserved_may_equal_total):
    with transaction.atomic():
        provider = lock_provider(uuid)
        try:
            _check_capacity(provider, class_name, data, reserved_may_equal_total)
        except errors.Invalid as exc:
            raise errors.Invalid(exc.detail.replace("Unable to update", "Unable to create")) from None
        try:
            resource_class = rc_service.get_resource_class(class_name)
        except errors.NotFound as exc:
            raise errors.Invalid(
                f"Unable to create inventory for resource provider {uuid}: {exc.detail}"
            ) from None
        if Inventory.objects.filter(resource_provider=provider, resource_class=resource_class).exists():
            raise errors.Conflict(
                f"Update conflict: Inventory for '{class_name}' on resource provider '{uuid}' already exists.",
                code=errors.CONCURRENT_UPDATE,
            )
        inventory = Inventory.objects.create(
            resource_provider=provider, resource_class=resource_class, **{f: data[f] for f in INVENTORY_FIELDS}
        )
        bump_generation(provider)
    return provider, inventory


def update_inventory(uuid, class_name, data, reserved_may_equal_total):
    with transaction.atomic():
        provider = lock_provider(
            uuid, data["resource_provider_generation"], "resource provider generation conflict"
        )
        try:
            resource_class = rc_service.get_resource_class(class_name)
        except errors.NotFound as exc:
            raise errors.Invalid(
                f"No inventory record with resource class for resource provider {uuid}: {exc.detail}"
            ) from None
        _check_capacity(provider, class_name, data, reserved_may_equal_total)
        inventory = Inventory.objects.filter(resource_provider=provider, resource_class=resource_class).first()
        if inventory is None:
            raise errors.Invalid(
                f"No inventory record with resource class for resource provider {uuid}: "
                f"No inventory of {class_name} found."
            )
        _apply(inventory, data)
        bump_generation(provider)
    return provider, inventory


def _apply(inventory, data):
    for name in INVENTORY_FIELDS:
        setattr(inventory, name, data[name])
    inventory.updated_at = timezone.now()
    inventory.save()


def set_inventories(uuid, generation, inventories, reserved_may_equal_total):
    """Replace all of a provider's inventory with ``{class name: fields}``."""
    with transaction.atomic():
        provider = lock_provider(uuid, generation, "resource provider generation conflict")
        for class_name, data in inventories.items():
            _check_capacity(provider, class_name, data, reserved_may_equal_total)
        try:
            result = replace_inventory(provider, inventories)
        except errors.NotFound as exc:
            raise errors.Invalid(
                f"Unknown resource class in inventory for resource provider {uuid}: {exc.detail}"
            ) from None
    return provider, result


def replace_inventory(provider, inventories):
    """Make the (locked) provider's inventory exactly ``inventories`` and bump
    its generation. NotFound for unknown classes; Conflict
    (placement.inventory.inuse) when removing a class that is allocated."""
    class_ids = rc_service.resource_class_ids(list(inventories))
    current = {inv.resource_class.name: inv for inv in provider_inventories(provider)}
    removed = set(current) - set(inventories)
    _refuse_removing_used(provider, removed)
    Inventory.objects.filter(resource_provider=provider, resource_class__name__in=removed).delete()
    result = []
    for class_name, data in inventories.items():
        if class_name in current:
            _apply(current[class_name], data)
            result.append(current[class_name])
        else:
            result.append(
                Inventory.objects.create(
                    resource_provider=provider,
                    resource_class_id=class_ids[class_name],
                    **{f: data[f] for f in INVENTORY_FIELDS},
                )
            )
    bump_generation(provider)
    return result


def _refuse_removing_used(provider, class_names, message="update conflict: {error}"):
    used = sorted(name for name, amount in _used_by_class(provider).items() if name in class_names and amount)
    if used:
        raise errors.Conflict(
            message.format(
                error=f"Inventory for '{', '.join(used)}' on resource provider '{provider.uuid}' in use."
            ),
            code=errors.INVENTORY_INUSE,
        )


def delete_inventory(uuid, class_name):
    with transaction.atomic():
        provider = lock_provider(uuid)
        inventory = Inventory.objects.filter(resource_provider=provider, resource_class__name=class_name).first()
        if inventory is None:
            raise errors.NotFound(
                f"No inventory of class {class_name} found for delete: "
                f"No inventory of class {class_name} found for delete"
            )
        _refuse_removing_used(
            provider, {class_name}, f"Unable to delete inventory of class {class_name}: {{error}}"
        )
        inventory.delete()
        bump_generation(provider)


def delete_inventories(uuid):
    with transaction.atomic():
        provider = lock_provider(uuid)
        inventories = provider_inventories(provider)
        _refuse_removing_used(provider, {inv.resource_class.name for inv in inventories}, "{error}")
        Inventory.objects.filter(resource_provider=provider).delete()
        bump_generation(provider)
