"""What the placement client raises: every error placement answers with, or
the lack of an answer, is a PlacementError (with the HTTP status and
placement's error code when there was an answer); the subclasses name the
answers callers act on."""

# Placement's error codes (microversion 1.23 and later) that callers tell apart.
CONCURRENT_UPDATE = "placement.concurrent_update"
INVENTORY_IN_USE = "placement.inventory.inuse"


class PlacementError(Exception):
    """Placement answered with an error, or could not be reached."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


class PlacementUnreachable(PlacementError):
    """No HTTP answer: connection refused, timeout, DNS failure..."""


class ProviderNotFound(PlacementError):
    """Placement has no such resource provider."""


class GenerationConflict(PlacementError):
    """The provider kept changing under us for every attempt."""


class InventoryInUse(PlacementError):
    """Placement refused to lower an inventory below its allocations."""


class AllocationConflict(PlacementError):
    """Placement refused a claim or a move of allocations with a conflict
    (409): a provider no longer has the room, or the consumer changed
    meanwhile (its generation)."""


class PlacementTransactionError(RuntimeError):
    """Placement was called with a database transaction open. It never is:
    a slow or remote placement must not hold the caller's locks, and Corral's
    own placement, in process, would run inside the caller's transaction."""
