"""A resource provider's inventories (/resource_providers/{uuid}/inventories).

Every change locks the provider, compares the client's generation when it
sends one, and bumps the generation; removing inventory that allocations
use is refused (``placement.inventory.inuse``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from placement import errors
from placement.models import Inventory, ResourceProvider

from . import resource_classes as rc_service
from .providers import bump_generation, lock_provider

INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
# One inventory as a request gives it: the INVENTORY_FIELDS (ints, and a float
# allocation_ratio), and for a single-class update the provider's generation.
InventoryData = Mapping[str, Any]


def provider_inventories(provider: ResourceProvider) -> list[Inventory]:
    return list(
        Inventory.objects.filter(resource_provider=provider)
        .select_related("resource_class")
        .order_by("resource_class_id")
    )


def get_inventory(provider: ResourceProvider, class_name: str) -> Inventory:
    inventory = (
        Inventory.objects.filter(resource_provider=provider, resource_class__name=class_name)
        .select_related("resource_class")
        .first()
    )
    if inventory is None:
        raise errors.NotFound(f"No inventory of class {class_name} for {provider.uuid}")
    return inventory


def _check_capacity(
    provider: ResourceProvider, class_name: str, data: InventoryData, reserved_may_equal_total: bool
) -> None:
    capacity = data["total"] - data["reserved"]
    if capacity < 0 or (capacity == 0 and not reserved_may_equal_total):
        relation = "greater than" if reserved_may_equal_total else "greater than or equal to"
        raise errors.Invalid(
            f"Unable to update inventory for resource provider {provider.uuid}: Invalid inventory for "
            f"'{class_name}' on resource provider '{provider.uuid}'. The reserved value is {relation} total."
        )


def _used_by_class(provider: ResourceProvider) -> dict[str, int]:
    """{class name: used} of its inventories, in resource class id order
    (upstream names the classes of an "in use" error in that order)."""
    return dict(
        Inventory.objects.filter(resource_provider=provider)
        .order_by("resource_class_id")
        .values_list("resource_class__name", "used")
    )


def create_inventory(
    uuid: str, class_name: str, data: InventoryData, reserved_may_equal_total: bool
) -> tuple[ResourceProvider, Inventory]:
    with transaction.atomic():
        provider = lock_provider(uuid)
        try:
            _check_capacity(provider, class_name, data, reserved_may_equal_total)
        except errors.Invalid as exc:
            raise errors.Invalid(exc.detail.replace("Unable to update", "Unable to create")) from None
        try:
            resource_class = rc_service.get_resource_class(class_name)
        except errors.NotFound as exc:
            raise errors.Invalid(f"Unable to create inventory for resource provider {uuid}: {exc.detail}") from None
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


def update_inventory(
    uuid: str, class_name: str, data: InventoryData, reserved_may_equal_total: bool
) -> tuple[ResourceProvider, Inventory]:
    with transaction.atomic():
        provider = lock_provider(uuid, data["resource_provider_generation"], "resource provider generation conflict")
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


def _apply(inventory: Inventory, data: InventoryData) -> None:
    for name in INVENTORY_FIELDS:
        setattr(inventory, name, data[name])
    inventory.updated_at = timezone.now()
    # Not ``used``: the allocation writes keep it.
    inventory.save(update_fields=[*INVENTORY_FIELDS, "updated_at"])


def set_inventories(
    uuid: str, generation: int, inventories: Mapping[str, InventoryData], reserved_may_equal_total: bool
) -> tuple[ResourceProvider, list[Inventory]]:
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


def replace_inventory(provider: ResourceProvider, inventories: Mapping[str, InventoryData]) -> list[Inventory]:
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


def _refuse_removing_used(
    provider: ResourceProvider, class_names: Collection[str], message: str = "update conflict: {error}"
) -> None:
    used = [name for name, amount in _used_by_class(provider).items() if name in class_names and amount]
    if used:
        raise errors.Conflict(
            message.format(error=f"Inventory for '{', '.join(used)}' on resource provider '{provider.uuid}' in use."),
            code=errors.INVENTORY_INUSE,
        )


def delete_inventory(uuid: str, class_name: str) -> None:
    with transaction.atomic():
        provider = lock_provider(uuid)
        inventory = Inventory.objects.filter(resource_provider=provider, resource_class__name=class_name).first()
        if inventory is None:
            raise errors.NotFound(
                f"No inventory of class {class_name} found for delete: "
                f"No inventory of class {class_name} found for delete"
            )
        _refuse_removing_used(provider, {class_name}, f"Unable to delete inventory of class {class_name}: {{error}}")
        inventory.delete()
        bump_generation(provider)


def delete_inventories(uuid: str) -> None:
    with transaction.atomic():
        provider = lock_provider(uuid)
        inventories = provider_inventories(provider)
        _refuse_removing_used(provider, {inv.resource_class.name for inv in inventories}, "{error}")
        Inventory.objects.filter(resource_provider=provider).delete()
        bump_generation(provider)
