"""/resource_classes (1.2+)."""

from typing import Any

from django.http import HttpResponse

from placement.models import ResourceClass
from placement.services import resource_classes as service

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
    service_path,
    validate,
)


def _serialize(resource_class: ResourceClass) -> dict[str, Any]:
    return {
        "name": resource_class.name,
        "links": [{"rel": "self", "href": service_path("resource_classes", resource_class.name)}],
    }


@handler(since=(1, 2), returns_json=True)
def list_resource_classes(request: PlacementRequest) -> HttpResponse:
    authorize(request, "placement:resource_classes:list")
    classes = service.list_resource_classes()
    return json_response(
        request, {"resource_classes": [_serialize(rc) for rc in classes]}, last_modified=latest(classes)
    )


@handler(since=(1, 2), takes_json=True)
def create_resource_class(request: PlacementRequest) -> HttpResponse:
    authorize(request, "placement:resource_classes:create")
    data = json_body(request, schemas.RESOURCE_CLASS)
    resource_class = service.create_resource_class(data["name"])
    return empty_response(201, location=absolute_url(request, "resource_classes", resource_class.name))


@handler(since=(1, 2), returns_json=True)
def get_resource_class(request: PlacementRequest, name: str) -> HttpResponse:
    authorize(request, "placement:resource_classes:show")
    resource_class = service.get_resource_class(name)
    return json_response(request, _serialize(resource_class), last_modified=resource_class.last_modified)


@handler(since=(1, 2))
def update_resource_class(request: PlacementRequest, name: str) -> HttpResponse:
    """1.2-1.6: rename a custom class; 1.7+: make sure the class exists."""
    if request.version < (1, 7):
        return _rename_resource_class(request, name=name)
    authorize(request, "placement:resource_classes:update")
    validate({"name": name}, schemas.RESOURCE_CLASS, "JSON does not validate: {error}")
    _resource_class, created = service.ensure_resource_class(name)
    return empty_response(201 if created else 204, location=absolute_url(request, "resource_classes", name))


@handler(takes_json=True)
def _rename_resource_class(request: PlacementRequest, name: str) -> HttpResponse:
    authorize(request, "placement:resource_classes:update")
    data = json_body(request, schemas.RESOURCE_CLASS)
    resource_class = service.rename_resource_class(name, data["name"])
    return json_response(request, _serialize(resource_class), last_modified=False)


@handler(since=(1, 2))
def delete_resource_class(request: PlacementRequest, name: str) -> HttpResponse:
    authorize(request, "placement:resource_classes:delete")
    service.delete_resource_class(name)
    return empty_response()
