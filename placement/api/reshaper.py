"""POST /reshaper (1.30+)."""

from typing import Any

from django.http import HttpResponse

from placement import errors
from placement.services import allocations as allocation_service
from placement.services import reshaper as service

from . import schemas
from .allocations import consumer_request
from .base import PlacementRequest, authorize, empty_response, handler, json_body
from .inventories import inventories_of


def _schema(version: tuple[int, int]) -> dict[str, Any]:
    if version >= (1, 38):
        return schemas.RESHAPER_1_38
    if version >= (1, 34):
        return schemas.RESHAPER_1_34
    return schemas.RESHAPER_1_30


@handler(since=(1, 30), takes_json=True)
def reshape(request: PlacementRequest) -> HttpResponse:
    authorize(request, "placement:reshaper:reshape")
    data = json_body(request, _schema(request.version))
    inventories = {
        uuid: (
            body["resource_provider_generation"],
            inventories_of(body["inventories"]),
        )
        for uuid, body in data["inventories"].items()
    }
    consumers = [consumer_request(request, uuid, body) for uuid, body in data["allocations"].items()]
    try:
        service.reshape(inventories, consumers)
    except errors.NotFound as exc:
        raise errors.Invalid(f"malformed reshaper data: {exc.detail}") from None
    except allocation_service.AllocationProblem as problem:
        if problem.kind == "inventory":
            raise errors.Conflict(f"Unable to allocate inventory: {problem.message}") from None
        if problem.kind == "class":
            raise errors.Invalid(f"malformed reshaper data: {problem.message}") from None
        raise errors.Invalid(problem.message) from None
    return empty_response()
