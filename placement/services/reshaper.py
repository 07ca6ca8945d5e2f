"""POST /reshaper: move inventory and allocations between providers of a
tree in one transaction (e.g. VGPU from a compute node to its new child)."""

from collections.abc import Mapping, Sequence

from django.db import transaction

from placement import errors

from . import allocations as allocation_service
from . import inventories as inventory_service
from . import providers as provider_service
from .allocations import ConsumerRequest

# One inventory's fields (total, reserved, min_unit, max_unit, step_size: int;
# allocation_ratio: float).
InventoryFields = dict[str, int | float]


def reshape(
    inventories: Mapping[str, tuple[int, dict[str, InventoryFields]]],
    consumer_requests: Sequence[ConsumerRequest],
) -> None:
    """``inventories``: {provider uuid: (generation, {class name: fields})};
    ``consumer_requests``: ConsumerRequests for every consumer whose
    allocations change. Raises errors.* or AllocationProblem; all or nothing."""
    with transaction.atomic():
        # Owner rows first, as every allocation write does (the lock order).
        owners = allocation_service.Owners.of(consumer_requests)
        locked = {}
        for uuid, (generation, _wanted) in inventories.items():
            try:
                provider = provider_service.lock_provider(uuid)
            except errors.NotFound as exc:
                raise errors.Invalid(
                    f"Resource provider {uuid} in inventories not found: {exc.detail}",
                    code=errors.RESOURCE_PROVIDER_NOT_FOUND,
                ) from None
            if provider.generation != generation:
                raise errors.Conflict(
                    f"resource provider generation conflict for provider {uuid}: "
                    f"actual: {provider.generation}, given: {generation}",
                    code=errors.CONCURRENT_UPDATE,
                )
            locked[uuid] = provider
        # First keep old and new inventory side by side so allocations can move...
        for uuid, (_generation, wanted) in inventories.items():
            if wanted:
                provider = locked[uuid]
                current = {
                    inv.resource_class.name: {f: getattr(inv, f) for f in inventory_service.INVENTORY_FIELDS}
                    for inv in inventory_service.provider_inventories(provider)
                }
                inventory_service.replace_inventory(provider, {**current, **wanted})
        allocation_service.replace_allocations(consumer_requests, owners)
        # ...then settle on the new inventory.
        for uuid, (_generation, wanted) in inventories.items():
            provider = provider_service.lock_provider(uuid)
            inventory_service.replace_inventory(provider, wanted)
