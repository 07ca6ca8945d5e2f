"""Response bodies of ``/os-aggregates``, per microversion."""

from collections.abc import Iterable
from typing import Any

from aggregates.compute_api.base import isotime
from aggregates.compute_api.microversions import APIVersion
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate


def aggregate(agg: Aggregate, version: APIVersion, full: bool = True) -> dict[str, Any]:
    """An aggregate as Nova shows it; ``full=False`` is the create response
    (no hosts, no metadata)."""
    metadata = services.metadata_of(agg)
    body: dict[str, Any] = {
        "availability_zone": metadata.get("availability_zone"),
        "created_at": isotime(agg.created_at),
        "deleted": False,
        "deleted_at": None,
        "id": agg.id,
        "name": agg.name,
        "updated_at": isotime(agg.updated_at),
    }
    if full:
        body["hosts"] = services.hosts_of(agg)
        body["metadata"] = metadata
    if version >= (2, 41):
        body["uuid"] = str(agg.uuid)
    return body


def aggregate_list_body(aggregates: Iterable[Aggregate], version: APIVersion) -> dict[str, list[dict[str, Any]]]:
    return {"aggregates": [aggregate(agg, version) for agg in aggregates]}


def aggregate_body(agg: Aggregate, version: APIVersion, full: bool = True) -> dict[str, dict[str, Any]]:

    return {"aggregate": aggregate(agg, version, full)}
