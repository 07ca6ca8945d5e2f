"""Compute nodes as placement resource providers, as Nova's resource tracker
keeps them: provider uuid = compute node uuid, name = hypervisor hostname,
VCPU / MEMORY_MB / DISK_GB inventories from the node's resources with the
allocation ratios and reservations of the settings (or of the host's own
registration), the COMPUTE_STATUS_DISABLED trait while the compute
service is disabled, and, with QUERY_PLACEMENT_FOR_IMAGE_TYPE_SUPPORT on,
a COMPUTE_IMAGE_TYPE_<FORMAT> trait for each disk format the node boots.

The functions here talk to placement; when they run is the outbox's
business (aggregates.mirroring).
"""

import logging
import math
from typing import Any, NamedTuple, TypedDict

from django.conf import settings

from aggregates.hosts.models import IMAGE_TYPES_BY_HYPERVISOR, ComputeNode, image_types_of
from aggregates.placement_client import PlacementClient, ProviderNotFound, Update

log = logging.getLogger(__name__)

DISABLED_TRAIT = "COMPUTE_STATUS_DISABLED"
IMAGE_TYPE_TRAIT_PREFIX = "COMPUTE_IMAGE_TYPE_"
# Every image type trait Corral may set (the others a provider carries are left alone).
IMAGE_TYPE_TRAITS = frozenset(
    IMAGE_TYPE_TRAIT_PREFIX + disk_format.upper()
    for formats in IMAGE_TYPES_BY_HYPERVISOR.values()
    for disk_format in formats
)
MANAGED_CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB")


class InventoryRecord(TypedDict):
    """One resource class's inventory, as placement takes it."""

    total: int
    reserved: int
    min_unit: int
    max_unit: int
    step_size: int
    allocation_ratio: float


class ProviderState(TypedDict):
    """What a node's provider must carry; kept in ComputeNode.provider_state."""

    inventories: dict[str, InventoryRecord]
    disabled: bool
    # COMPUTE_IMAGE_TYPE_* traits (sorted), empty unless QUERY_PLACEMENT_FOR_IMAGE_TYPE_SUPPORT.
    image_types: list[str]


def _own_or_setting(node: ComputeNode, name: str) -> Any:
    value = getattr(node, name)
    return getattr(settings, name.upper()) if value is None else value


def _inventory(total: int, reserved: int, allocation_ratio: float) -> InventoryRecord:
    # Placement refuses a reservation above the total (a host reporting
    # less memory than RESERVED_HOST_MEMORY_MB): the whole of it is reserved.
    return {
        "total": total,
        "reserved": min(reserved, total),
        "min_unit": 1,
        "max_unit": total,
        "step_size": 1,
        "allocation_ratio": float(allocation_ratio),
    }


def inventories(node: ComputeNode) -> dict[str, InventoryRecord]:
    """The node's VCPU, MEMORY_MB and DISK_GB inventory records; a class
    whose total is 0 is left out (placement wants a total of at least 1)."""
    records = {
        "VCPU": _inventory(
            node.vcpus, _own_or_setting(node, "reserved_host_cpus"), _own_or_setting(node, "cpu_allocation_ratio")
        ),
        "MEMORY_MB": _inventory(
            node.memory_mb,
            _own_or_setting(node, "reserved_host_memory_mb"),
            _own_or_setting(node, "ram_allocation_ratio"),
        ),
        "DISK_GB": _inventory(
            node.local_gb,
            math.ceil(_own_or_setting(node, "reserved_host_disk_mb") / 1024),
            _own_or_setting(node, "disk_allocation_ratio"),
        ),
    }
    return {rc: record for rc, record in records.items() if record["total"] > 0}


def desired_state(node: ComputeNode) -> ProviderState:
    """What the node's provider must carry (``node.service`` is read)."""
    image_types: list[str] = []
    if settings.QUERY_PLACEMENT_FOR_IMAGE_TYPE_SUPPORT:
        image_types = sorted(IMAGE_TYPE_TRAIT_PREFIX + f.upper() for f in image_types_of(node.hypervisor_type))
    return {"inventories": inventories(node), "disabled": node.service.disabled, "image_types": image_types}


def in_sync(node: ComputeNode, generation: int | None) -> bool:
    """Whether the provider, now at ``generation``, is known to match the
    node: nothing changed in placement since Corral last wrote or verified
    it, and the node still wants what was written then."""
    return (
        generation is not None and node.provider_generation == generation and node.provider_state == desired_state(node)
    )


class SyncOutcome(NamedTuple):
    provider_uuid: str
    created: bool
    inventory_changed: bool
    traits_changed: bool


def sync_node(node: ComputeNode, placement: PlacementClient, provider_uuid: str | None = None) -> SyncOutcome:
    """Make the node's provider exist and carry the node's inventories and
    disabled trait. ``provider_uuid`` is the provider standing for the node
    when known (see mirroring._Providers); else the node's uuid, else the
    only provider named like the node, else a new one. Raises
    PlacementError (InventoryInUse when an inventory would go below its
    allocations)."""
    state = desired_state(node)
    provider_uuid = provider_uuid or str(node.uuid)
    created = False
    try:
        inventory = placement.set_inventories(provider_uuid, state["inventories"], MANAGED_CLASSES)
    except ProviderNotFound:
        provider_uuid = placement.provider_uuid_by_name(node.hypervisor_hostname)
        if provider_uuid is None:
            provider_uuid = str(node.uuid)
            placement.create_provider(provider_uuid, node.hypervisor_hostname)
            created = True
            log.info(
                "Created resource provider %s for compute node %s of host %s",
                provider_uuid,
                node.hypervisor_hostname,
                node.host,
            )
        inventory = placement.set_inventories(provider_uuid, state["inventories"], MANAGED_CLASSES)
    generation, traits_changed = inventory.generation, False
    trait_known = (created and not state["disabled"] and not state["image_types"]) or (
        node.provider_generation == inventory.generation_before
        and node.provider_state.get("disabled") == state["disabled"]
        and node.provider_state.get("image_types", []) == state["image_types"]
    )
    if not trait_known:
        present = set(state["image_types"]) | ({DISABLED_TRAIT} if state["disabled"] else set())
        absent = (IMAGE_TYPE_TRAITS | {DISABLED_TRAIT}) - present
        traits = placement.change_traits(provider_uuid, present, absent)
        generation, traits_changed = traits.generation, traits.changed
    remember(node, generation, state)
    return SyncOutcome(provider_uuid, created, inventory.changed, traits_changed)


def remember(node: ComputeNode, generation: int, state: ProviderState | None = None) -> None:
    """Record that the node's provider matches ``state`` (default: the
    state remembered already) at ``generation``."""
    state = node.provider_state if state is None else state
    node.provider_generation, node.provider_state = generation, state
    ComputeNode.objects.filter(pk=node.pk).update(provider_generation=generation, provider_state=state)


def followed(update: Update, **node_filter: object) -> None:
    """After Corral changed only the aggregates of a provider (``update``):
    the node (``node_filter``: uuid=..., or host=... and
    hypervisor_hostname=...) whose provider was in sync before still is,
    at the new generation."""
    if update.changed:
        ComputeNode.objects.filter(provider_generation=update.generation_before, **node_filter).update(
            provider_generation=update.generation
        )
