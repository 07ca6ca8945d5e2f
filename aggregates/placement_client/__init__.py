"""Corral's one client of the Placement API, as Nova's report client is
Nova's: every request the compute side and the console send to placement
goes through a method of ``PlacementClient`` (``session``), at the
microversion ``microversions`` names for it, and comes back as data or as
one of the errors of ``errors``. Corral's own placement is reached in
process (``inprocess``), any other over HTTP. ``client()`` is this thread's
client for the configured endpoint."""

from aggregates.placement_client.errors import (
    AllocationConflict,
    GenerationConflict,
    InventoryInUse,
    PlacementError,
    PlacementTransactionError,
    PlacementUnreachable,
    ProviderNotFound,
)
from aggregates.placement_client.read_cache import clear_read_cache
from aggregates.placement_client.session import PlacementClient, Update, client

__all__ = [
    "AllocationConflict",
    "GenerationConflict",
    "InventoryInUse",
    "PlacementClient",
    "PlacementError",
    "PlacementTransactionError",
    "PlacementUnreachable",
    "ProviderNotFound",
    "Update",
    "clear_read_cache",
    "client",
]
