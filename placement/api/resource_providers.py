"""/resource_providers and /resource_providers/{uuid}."""

import uuid as uuidlib
from typing import Any

from django.http import HttpResponse

from placement import errors
from placement.models import ResourceProvider
from placement.services import providers as service

from . import queryparams, schemas
from .base import (
    PlacementRequest,
    absolute_url,
    authorize,
    empty_response,
    handler,
    json_body,
    json_response,
    latest,
    service_path,
    validate_query,
)


def serialize_provider(request: PlacementRequest, provider: ResourceProvider) -> dict[str, Any]:
    url = service_path("resource_providers", provider.uuid)
    relations = ["inventories", "usages"]
    if request.version >= (1, 1):
        relations.append("aggregates")
    if request.version >= (1, 6):
        relations.append("traits")
    if request.version >= (1, 11):
        relations.append("allocations")
    data: dict[str, Any] = {
        "uuid": provider.uuid,
        "name": provider.name,
        "generation": provider.generation,
        "links": [{"rel": "self", "href": url}] + [{"rel": rel, "href": f"{url}/{rel}"} for rel in relations],
    }
    if request.version >= (1, 14):
        data["parent_provider_uuid"] = provider.parent.uuid if provider.parent is not None else None
        data["root_provider_uuid"] = provider.root.uuid if provider.root is not None else provider.uuid
    return data


def _list_schema(version: tuple[int, int]) -> dict[str, Any]:
    for minimum, schema in (
        ((1, 18), schemas.PROVIDER_LIST_1_18),
        ((1, 14), schemas.PROVIDER_LIST_1_14),
        ((1, 4), schemas.PROVIDER_LIST_1_4),
        ((1, 3), schemas.PROVIDER_LIST_1_3),
    ):
        if version >= minimum:
            return schema
    return schemas.PROVIDER_LIST_1_0


@handler(returns_json=True)
def list_resource_providers(request: PlacementRequest) -> HttpResponse:
    authorize(request, "placement:resource_providers:list")
    validate_query(request, _list_schema(request.version))
    filters: dict[str, Any] = {name: request.GET[name] for name in ("name", "uuid", "in_tree") if name in request.GET}
    if "member_of" in request.GET:
        filters["member_of"], filters["forbidden_aggregates"] = queryparams.member_of(request)
    if "required" in request.GET:
        filters["required_traits"], filters["forbidden_traits"] = queryparams.required_traits(request)
    if "resources" in request.GET:
        filters["resources"] = queryparams.resources(request.GET["resources"])
    try:
        providers = service.list_providers(**filters)
    except errors.NotFound as exc:
        if exc.detail.startswith("No such trait"):
            raise errors.Invalid(f'Invalid trait(s) in "required" parameter: {exc.detail}') from None
        raise errors.Invalid(f"Invalid resource class in resources parameter: {exc.detail}") from None
    return json_response(
        request,
        {"resource_providers": [serialize_provider(request, p) for p in providers]},
        last_modified=latest(providers),
    )


@handler(takes_json=True)
def create_resource_provider(request: PlacementRequest) -> HttpResponse:
    authorize(request, "placement:resource_providers:create")
    schema = schemas.PROVIDER_POST_1_14 if request.version >= (1, 14) else schemas.PROVIDER_POST
    data = json_body(request, schema)
    uuid = str(uuidlib.UUID(data["uuid"])) if data.get("uuid") else str(uuidlib.uuid4())
    provider = service.create_provider(data["name"], uuid, data.get("parent_provider_uuid"))
    location = absolute_url(request, "resource_providers", provider.uuid)
    if request.version >= (1, 20):
        response = json_response(request, serialize_provider(request, provider), last_modified=provider.last_modified)
        response["Location"] = location
        return response
    return empty_response(201, location=location)


@handler(returns_json=True)
def get_resource_provider(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:show")
    provider = service.get_provider(uuid)
    return json_response(request, serialize_provider(request, provider), last_modified=provider.last_modified)


@handler(takes_json=True)
def update_resource_provider(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:update")
    service.get_provider(uuid)
    schema = schemas.PROVIDER_PUT_1_14 if request.version >= (1, 14) else schemas.PROVIDER_PUT
    data = json_body(request, schema)
    provider = service.update_provider(
        uuid,
        name=data.get("name", service.UNSET),
        parent_uuid=data.get("parent_provider_uuid", service.UNSET),
        allow_reparenting=request.version >= (1, 37),
    )
    return json_response(request, serialize_provider(request, provider), last_modified=provider.last_modified)


@handler()
def delete_resource_provider(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:delete")
    service.delete_provider(uuid)
    return empty_response()
