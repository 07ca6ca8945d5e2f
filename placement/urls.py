"""Placement API routes (mounted at /placement/, or at / with CORRAL_SERVICE=placement)."""

from placement.api import (
    aggregates,
    allocation_candidates,
    allocations,
    inventories,
    reshaper,
    resource_classes,
    resource_providers,
    root,
    traits,
    usages,
)
from placement.api.base import Route

RP = "resource_providers/<str:uuid>"

ROUTES = [
    Route("", name="placement-root", open_route=True, GET=root.home),
    Route(
        "resource_classes",
        GET=resource_classes.list_resource_classes,
        POST=resource_classes.create_resource_class,
    ),
    Route(
        "resource_classes/<str:name>",
        GET=resource_classes.get_resource_class,
        PUT=resource_classes.update_resource_class,
        DELETE=resource_classes.delete_resource_class,
    ),
    Route(
        "resource_providers",
        GET=resource_providers.list_resource_providers,
        POST=resource_providers.create_resource_provider,
    ),
    Route(
        RP,
        GET=resource_providers.get_resource_provider,
        PUT=resource_providers.update_resource_provider,
        DELETE=resource_providers.delete_resource_provider,
    ),
    Route(
        f"{RP}/inventories",
        GET=inventories.get_inventories,
        POST=inventories.create_inventory,
        PUT=inventories.set_inventories,
        DELETE=inventories.delete_inventories,
    ),
    Route(
        f"{RP}/inventories/<str:resource_class>",
        GET=inventories.get_inventory,
        PUT=inventories.update_inventory,
        DELETE=inventories.delete_inventory,
    ),
    Route(f"{RP}/usages", GET=usages.provider_usages),
    Route(f"{RP}/aggregates", GET=aggregates.get_aggregates, PUT=aggregates.set_aggregates),
    Route(f"{RP}/allocations", GET=allocations.list_for_provider),
    Route(
        f"{RP}/traits",
        GET=traits.list_provider_traits,
        PUT=traits.set_provider_traits,
        DELETE=traits.delete_provider_traits,
    ),
    Route("allocations", POST=allocations.set_allocations),
    Route(
        "allocations/<str:consumer_uuid>",
        GET=allocations.list_for_consumer,
        PUT=allocations.set_for_consumer,
        DELETE=allocations.delete_for_consumer,
    ),
    Route("allocation_candidates", GET=allocation_candidates.list_allocation_candidates),
    Route("traits", GET=traits.list_traits),
    Route("traits/<str:name>", GET=traits.get_trait, PUT=traits.put_trait, DELETE=traits.delete_trait),
    Route("usages", GET=usages.total_usages),
    Route("reshaper", POST=reshaper.reshape),
    # Anything else under the mount point: 404 in placement's error format.
    Route("<path:unknown>"),
]

urlpatterns = [route.urlpattern() for route in ROUTES]

# The all-in-one server also answers the version document at "/placement"
# without the slash: openstacksdk discovers placement there.
root_view = ROUTES[0].urlpattern().callback
