"""/resource_providers/{uuid}/aggregates (1.1+)."""

from typing import Any

from django.http import HttpResponse

from placement.services import aggregates as service
from placement.services import provider_reads
from placement.services import providers as provider_service

from . import schemas
from .base import PlacementRequest, authorize, handler, json_body, json_response

GENERATION_VERSION = (1, 19)


def _aggregates(request: PlacementRequest, generation: int, aggregate_uuids: list[str]) -> HttpResponse:
    data: dict[str, Any] = {"aggregates": aggregate_uuids}
    if request.version >= GENERATION_VERSION:
        data["resource_provider_generation"] = generation
    return json_response(request, data)


@handler(since=(1, 1), returns_json=True)
def get_aggregates(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:aggregates:list")
    return _aggregates(request, *provider_reads.aggregates_of(uuid))


@handler(since=(1, 1), takes_json=True)
def set_aggregates(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:aggregates:update")
    try:
        if request.version >= GENERATION_VERSION:
            data = json_body(request, schemas.AGGREGATES_PUT_1_19)
            aggregates, generation = data["aggregates"], data["resource_provider_generation"]
        else:
            aggregates, generation = json_body(request, schemas.AGGREGATES_PUT_1_1), None
    except Exception:
        # As upstream, an unknown provider is a 404 whatever the body (a
        # known one is looked up once, in the write).
        provider_service.get_provider(uuid)
        raise
    generation, aggregates = service.set_provider_aggregates(uuid, aggregates, generation)
    return _aggregates(request, generation, aggregates)
