"""/resource_providers/{uuid}/usages and /usages (1.9+)."""

import uuid
from typing import cast

from django.http import HttpResponse

from placement import errors
from placement.services import allocations as allocation_service
from placement.services import providers as provider_service

from . import schemas
from .base import PlacementRequest, authorize, handler, json_response, validate_query


@handler(returns_json=True)
def provider_usages(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:usages")
    try:
        provider = provider_service.get_provider(uuid)
    except errors.NotFound as exc:
        raise errors.NotFound(f"No resource provider with uuid {uuid} found: {exc.detail}") from None
    data = {
        "resource_provider_generation": provider.generation,
        "usages": allocation_service.provider_usages(provider),
    }
    return json_response(request, data)


@handler(since=(1, 9), returns_json=True)
def total_usages(request: PlacementRequest) -> HttpResponse:
    project_id = request.GET.get("project_id")
    authorize(request, "placement:usages", project_id=project_id)
    by_type = request.version >= (1, 38)
    validate_query(request, schemas.USAGES_1_38 if by_type else schemas.USAGES_1_9)
    user_id = request.GET.get("user_id")
    project = cast(str, project_id)  # the query's schema requires it
    usages: dict[str, dict[str, int]] | dict[str, int]
    if by_type:
        usages = allocation_service.usages_by_consumer_type(project, user_id, request.GET.get("consumer_type"))
    else:
        usages = allocation_service.total_usages(project, user_id)
    return json_response(request, {"usages": usages})


@handler(returns_json=True)
def usages_of_providers(request: PlacementRequest) -> HttpResponse:
    """Corral's own, served only to its in-process placement client (never
    on the public URLconf, see placement/internal_urls.py): the usages of
    many providers in one read, ``?uuids=<uuid>,<uuid>...``, as
    ``{"usages": {uuid: {class: used}}}``; unknown providers are left out."""
    authorize(request, "placement:resource_providers:usages")
    return json_response(request, {"usages": allocation_service.usages_of_providers(_uuids_of(request))})


def _uuids_of(request: PlacementRequest) -> list[str]:
    uuids = [value for value in request.GET.get("uuids", "").split(",") if value]
    for value in uuids:
        try:
            uuid.UUID(value)
        except ValueError:
            raise errors.Invalid(f"Invalid query string parameters: {value!r} is not a uuid") from None
    return uuids


@handler(returns_json=True)
def rooms_of_providers(request: PlacementRequest) -> HttpResponse:
    """Corral's own, served only to its in-process placement client: the
    inventories, usages and traits of many providers in one read,
    ``?uuids=<uuid>,<uuid>...``, as ``{"rooms": {uuid: {"inventories",
    "usages", "traits"}}}``; unknown providers are left out."""
    authorize(request, "placement:resource_providers:inventories:list")
    authorize(request, "placement:resource_providers:usages")
    authorize(request, "placement:resource_providers:traits:list")
    return json_response(request, {"rooms": allocation_service.rooms_of_providers(_uuids_of(request))})
