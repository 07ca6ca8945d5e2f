"""/allocations/{consumer_uuid}, POST /allocations (1.13+) and
/resource_providers/{uuid}/allocations."""

import uuid as uuidlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.http import HttpResponse

from placement import errors
from placement.services import allocations as service
from placement.services import provider_reads

from . import schemas
from .base import PlacementRequest, authorize, empty_response, handler, is_uuid_like, json_body, json_response, latest


def _put_schema(version: tuple[int, int]) -> dict[str, Any]:
    for minimum, schema in (
        ((1, 38), schemas.ALLOCATIONS_PUT_1_38),
        ((1, 34), schemas.ALLOCATIONS_PUT_1_34),
        ((1, 28), schemas.ALLOCATIONS_PUT_1_28),
        ((1, 12), schemas.ALLOCATIONS_PUT_1_12),
        ((1, 8), schemas.ALLOCATIONS_PUT_1_8),
    ):
        if version >= minimum:
            return schema
    return schemas.ALLOCATIONS_PUT_1_0


def _post_schema(version: tuple[int, int]) -> dict[str, Any]:
    for minimum, schema in (
        ((1, 38), schemas.ALLOCATIONS_POST_1_38),
        ((1, 34), schemas.ALLOCATIONS_POST_1_34),
        ((1, 28), schemas.ALLOCATIONS_POST_1_28),
    ):
        if version >= minimum:
            return schema
    return schemas.ALLOCATIONS_POST_1_13


def consumer_request(request: PlacementRequest, consumer_uuid: str, data: dict[str, Any]) -> service.ConsumerRequest:
    """A service ConsumerRequest from one consumer's body (any microversion)."""
    allocations = data["allocations"]
    if isinstance(allocations, list):  # before 1.12
        allocations = {a["resource_provider"]["uuid"]: {"resources": a["resources"]} for a in allocations}
    return service.ConsumerRequest(
        uuid=consumer_uuid,
        allocations={rp_uuid: dict(a["resources"]) for rp_uuid, a in allocations.items()},
        project_id=data.get("project_id"),
        user_id=data.get("user_id"),
        generation=data.get("consumer_generation") if request.version >= (1, 28) else service.UNSET,
        consumer_type=data.get("consumer_type") if request.version >= (1, 38) else None,
    )


def write_allocations(requests: Sequence[service.ConsumerRequest], failure_prefix: str) -> None:
    """Run the service and map its refusals to upstream's answers."""
    try:
        service.replace_allocations(requests)
    except service.AllocationProblem as problem:
        if problem.kind == "provider":
            raise errors.Invalid(problem.message) from None
        if problem.kind == "class":
            raise errors.Invalid(f"{failure_prefix}{problem.message}") from None
        raise errors.Conflict(f"Unable to allocate inventory: {problem.message}") from None


@handler(returns_json=True)
def list_for_consumer(request: PlacementRequest, consumer_uuid: str) -> HttpResponse:
    authorize(request, "placement:allocations:list")
    consumer, allocations = service.consumer_allocations(consumer_uuid)
    by_provider: defaultdict[str, dict[str, Any]] = defaultdict(lambda: {"resources": {}})
    for allocation in allocations:
        entry = by_provider[allocation.resource_provider.uuid]
        entry["resources"][allocation.resource_class.name] = allocation.used
        entry["generation"] = allocation.resource_provider.generation
    data: dict[str, Any] = {"allocations": dict(by_provider)}
    if consumer is not None and request.version >= (1, 12):
        data["project_id"] = consumer.project.external_id
        data["user_id"] = consumer.user.external_id
        if request.version >= (1, 28):
            data["consumer_generation"] = consumer.generation
        if request.version >= (1, 38):
            data["consumer_type"] = (
                consumer.consumer_type.name if consumer.consumer_type is not None else service.UNKNOWN_CONSUMER_TYPE
            )
    return json_response(request, data, last_modified=latest(allocations))


@handler(returns_json=True)
def list_for_provider(request: PlacementRequest, uuid: str) -> HttpResponse:
    authorize(request, "placement:resource_providers:allocations:list")
    try:
        read = provider_reads.allocations_of(uuid)
    except errors.NotFound as exc:
        raise errors.NotFound(f"Resource provider '{uuid}' not found: {exc.detail}") from None
    with_generations = request.version >= (1, 28)
    by_consumer: defaultdict[str, dict[str, Any]] = defaultdict(lambda: {"resources": {}})
    for consumer, consumer_generation, class_name, used in read.rows:
        entry = by_consumer[consumer]
        entry["resources"][class_name] = used
        if with_generations:
            entry["consumer_generation"] = consumer_generation
    data = {"allocations": dict(by_consumer), "resource_provider_generation": read.generation}
    return json_response(request, data, last_modified=read.last_modified)


@handler(takes_json=True)
def set_for_consumer(request: PlacementRequest, consumer_uuid: str) -> HttpResponse:
    authorize(request, "placement:allocations:update")
    if not is_uuid_like(consumer_uuid):
        raise errors.Invalid(f"Malformed consumer_uuid: {consumer_uuid}")
    consumer_uuid = str(uuidlib.UUID(consumer_uuid))
    data = json_body(request, _put_schema(request.version))
    write_allocations(
        [consumer_request(request, consumer_uuid, data)],
        f"Unable to allocate inventory for consumer {consumer_uuid}: ",
    )
    return empty_response()


@handler(since=(1, 13), takes_json=True)
def set_allocations(request: PlacementRequest) -> HttpResponse:
    authorize(request, "placement:allocations:manage")
    data = json_body(request, _post_schema(request.version))
    write_allocations(
        [consumer_request(request, consumer_uuid, body) for consumer_uuid, body in data.items()],
        "Unable to allocate inventory ",
    )
    return empty_response()


@handler()
def delete_for_consumer(request: PlacementRequest, consumer_uuid: str) -> HttpResponse:
    authorize(request, "placement:allocations:delete")
    service.delete_consumer_allocations(consumer_uuid)
    return empty_response()
