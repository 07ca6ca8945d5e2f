"""/resource_providers/{uuid}/inventories[/{resource_class}]."""

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from django.http import HttpResponse

from placement import errors
from placement.models import MAX_INT, Inventory, ResourceProvider
from placement.services import inventories as service
from placement.services import provider_reads
from placement.services import providers as provider_service

from . import schemas
from .base import PlacementRequest, absolute_url, authorize, empty_response, handler, json_body, json_response, latest

DEFAULTS: dict[str, Any] = {"reserved": 0, "min_unit": 1, "max_unit": MAX_INT, "step_size": 1, "allocation_ratio": 1.0}


def with_defaults(data: Mapping[str, Any]) -> dict[str, Any]:
    """An inventory's fields with the defaults filled in. A negative
    allocation ratio is refused (upstream's schema has no minimum;
    docs/compatibility.md); NaN and Infinity never get past the JSON parser."""
    ratio = data.get("allocation_ratio")
    if isinstance(ratio, int | float) and ratio < 0:
        raise errors.Invalid(f"JSON does not validate: {ratio} is less than the minimum of 0")
    return {**DEFAULTS, **data}


def inventories_of(inventories: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """An ``inventories`` map with each inventory's defaults filled in: 400,
    never a 500, when a value is not an inventory object (a key no resource
    class pattern of the schema covers gets through the schema)."""
    for name, fields in inventories.items():
        if not isinstance(fields, dict):
            raise errors.Invalid(f"JSON does not validate: {name!r} does not match any of the regexes: '^[A-Z0-9_]+$'")
    return {name: with_defaults(fields) for name, fields in inventories.items()}


def _serialize(inventory: Inventory) -> dict[str, Any]:
    return {name: getattr(inventory, name) for name in service.INVENTORY_FIELDS}


def _one(
    request: PlacementRequest, provider: ResourceProvider, inventory: Inventory, status: int = 200
) -> HttpResponse:
    data = {**_serialize(inventory), "resource_provider_generation": provider.generation}
    return json_response(request, data, status=status, last_modified=inventory.last_modified)


def _all(request: PlacementRequest, provider: ResourceProvider, inventories: Sequence[Inventory]) -> HttpResponse:
    by_class = {inv.resource_class.name: _serialize(inv) for inv in inventories}
    return _listed(request, provider.generation, by_class, latest(inventories))


def _listed(
    request: PlacementRequest, generation: int, by_class: dict[str, dict[str, Any]], last_modified: datetime | None
) -> HttpResponse:
    data = {"resource_provider_generation": generation, "inventories": by_class}
    return json_response(request, data, last_modified=last_modified)


@contextmanager
def _provider_named(uuid: str) -> Iterator[None]:
    try:
        yield
    except errors.NotFound as exc:
        raise errors.NotFound(f"No resource provider with uuid {uuid} found : {exc.detail}") from None


def _provider(uuid: str) -> ResourceProvider:
    with _provider_named(uuid):
        return provider_service.get_provider(uuid)


def _reserved_may_equal_total(request: PlacementRequest) -> bool:
    return request.version >= (1, 26)


@handler(returns_json=True)
def get_inventories(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:inventories:list")
    with _provider_named(uuid):
        read, by_class = provider_reads.inventories_of(uuid)
    return _listed(request, read.generation, by_class, read.last_modified)


@handler(returns_json=True)
def get_inventory(request: PlacementRequest, uuid: str, resource_class: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:inventories:show")
    provider = _provider(uuid)
    return _one(request, provider, service.get_inventory(provider, resource_class))


@handler(takes_json=True)
def create_inventory(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:inventories:create")
    provider_service.get_provider(uuid)
    data = with_defaults(json_body(request, schemas.INVENTORY_POST))
    class_name = data.pop("resource_class")
    provider, inventory = service.create_inventory(uuid, class_name, data, _reserved_may_equal_total(request))
    response = _one(request, provider, inventory, status=201)
    response["Location"] = absolute_url(request, "resource_providers", uuid, "inventories", class_name)
    return response


@handler(takes_json=True)
def set_inventories(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:inventories:update")
    provider_service.get_provider(uuid)
    data = json_body(request, schemas.INVENTORIES_PUT)
    inventories = inventories_of(data["inventories"])
    provider, result = service.set_inventories(
        uuid, data["resource_provider_generation"], inventories, _reserved_may_equal_total(request)
    )
    return _all(request, provider, result)


@handler(takes_json=True)
def update_inventory(request: PlacementRequest, uuid: str, resource_class: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:inventories:update")
    provider_service.get_provider(uuid)
    data = with_defaults(json_body(request, schemas.INVENTORY))
    provider, inventory = service.update_inventory(uuid, resource_class, data, _reserved_may_equal_total(request))
    return _one(request, provider, inventory)


@handler()
def delete_inventory(request: PlacementRequest, uuid: str, resource_class: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:inventories:delete")
    service.delete_inventory(uuid, resource_class)
    return empty_response()


@handler(since=(1, 5), absent_status=405)
def delete_inventories(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:inventories:delete")
    service.delete_inventories(uuid)
    return empty_response()
