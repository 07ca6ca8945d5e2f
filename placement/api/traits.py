"""/traits and /resource_providers/{uuid}/traits (1.6+)."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.http import HttpResponse

from placement import errors
from placement.models import ResourceProvider, Trait
from placement.services import provider_reads
from placement.services import provider_traits as provider_trait_service
from placement.services import traits as service

from . import schemas
from .base import (
    PlacementRequest,
    absolute_url,
    authorize,
    empty_response,
    handler,
    json_body,
    json_response,
    latest,
    set_cache_headers,
    validate,
    validate_query,
)

INVALID_NAME = (
    "The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "
    '"CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"'
)


def _name_filter(value: str) -> dict[str, Any]:
    operator, sep, names = value.partition(":")
    if not sep:
        raise errors.Invalid(
            "Badly formatted name parameter. Expected name query string parameter in form: "
            f'?name=[in|startswith]:[name1,name2|prefix]. Got: "{value}"'
        )
    if operator == "in":
        return {"name_in": names.split(",")}
    if operator == "startswith":
        return {"prefix": names}
    return {}


@handler(since=(1, 6), returns_json=True)
def list_traits(request: PlacementRequest) -> HttpResponse:
    authorize(request, "placement:traits:list")
    validate_query(request, schemas.TRAIT_LIST)
    filters = _name_filter(request.GET["name"]) if "name" in request.GET else {}
    if "associated" in request.GET:
        associated = request.GET["associated"].lower()
        if associated not in ("true", "false"):
            raise errors.Invalid('The query parameter "associated" only accepts "true" or "false"')
        filters["associated"] = associated == "true"
    traits = service.list_traits(**filters)
    return json_response(request, {"traits": [t.name for t in traits]}, last_modified=latest(traits))


@handler(since=(1, 6))
def get_trait(request: PlacementRequest, name: str) -> HttpResponse:
    authorize(request, "placement:traits:show")
    trait = service.get_trait(name)
    return set_cache_headers(request, empty_response(), trait.created_at)


@handler(since=(1, 6))
def put_trait(request: PlacementRequest, name: str) -> HttpResponse:
    authorize(request, "placement:traits:update")
    try:
        validate(name, schemas.CUSTOM_TRAIT_NAME, "{error}")
    except errors.Invalid:
        raise errors.Invalid(INVALID_NAME) from None
    trait, created = service.ensure_trait(name)
    response = empty_response(201 if created else 204, location=absolute_url(request, "traits", name))
    return set_cache_headers(request, response, trait.created_at)


@handler(since=(1, 6))
def delete_trait(request: PlacementRequest, name: str) -> HttpResponse:
    authorize(request, "placement:traits:delete")
    service.delete_trait(name)
    return empty_response()


def _provider_traits(request: PlacementRequest, provider: ResourceProvider, traits: Sequence[Trait]) -> HttpResponse:
    return _traits_listed(request, provider.generation, [t.name for t in traits], latest(traits))


def _traits_listed(
    request: PlacementRequest, generation: int, names: list[str], last_modified: datetime | None
) -> HttpResponse:
    data: dict[str, Any] = {"traits": names, "resource_provider_generation": generation}
    return json_response(request, data, last_modified=last_modified)


@handler(since=(1, 6), returns_json=True)
def list_provider_traits(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:traits:list")
    try:
        read, names = provider_reads.traits_of(uuid)
    except errors.NotFound as exc:
        raise errors.NotFound(f"No resource provider with uuid {uuid} found: {exc.detail}") from None
    return _traits_listed(request, read.generation, names, read.last_modified)


@handler(since=(1, 6), takes_json=True)
def set_provider_traits(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:traits:update")
    data = json_body(request, schemas.PROVIDER_TRAITS_PUT)
    provider, traits = provider_trait_service.set_provider_traits(
        uuid, data["resource_provider_generation"], data["traits"]
    )
    return _provider_traits(request, provider, traits)


@handler(since=(1, 6))
def delete_provider_traits(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:traits:delete")
    provider_trait_service.delete_provider_traits(uuid)
    return empty_response()
