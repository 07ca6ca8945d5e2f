"""Request schemas of ``/os-availability-zone``: its query strings (it takes no body)."""

from typing import Any

from aggregates.value_schemas import query

NO_QUERY = query()
NO_QUERY_V2_102 = query(strict=True)


def zone_query(version: tuple[int, int]) -> dict[str, Any]:
    """Zone routes read no query parameter; from 2.102 they refuse any."""
    return NO_QUERY_V2_102 if version >= (2, 102) else NO_QUERY
