"""GET /allocation_candidates (1.10+)."""

import gc
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from django.http import HttpResponse

from placement import errors
from placement.candidates import AllocationRequest, Candidates, Provider, find_candidates

from . import queryparams, schemas
from .base import PlacementRequest, authorize, handler, json_response, validate_query

SCHEMAS = [
    ((1, 36), schemas.CANDIDATES_1_36),
    ((1, 35), schemas.CANDIDATES_1_35),
    ((1, 33), schemas.CANDIDATES_1_33),
    ((1, 31), schemas.CANDIDATES_1_31),
    ((1, 25), schemas.CANDIDATES_1_25),
    ((1, 21), schemas.CANDIDATES_1_21),
    ((1, 17), schemas.CANDIDATES_1_17),
    ((1, 16), schemas.CANDIDATES_1_16),
]


def _schema(version: tuple[int, int]) -> dict[str, Any]:
    return next((schema for minimum, schema in SCHEMAS if version >= minimum), schemas.CANDIDATES_1_10)


def _allocation_requests(
    version: tuple[int, int], candidates: list[AllocationRequest], providers: Mapping[int, Provider]
) -> list[dict[str, Any]]:
    uuid_of = {provider_id: provider.uuid for provider_id, provider in providers.items()}
    with_mappings = version >= (1, 34)
    if version < (1, 12):
        return [_listed_allocation_request(candidate, uuid_of) for candidate in candidates]
    found: list[dict[str, Any]] = []
    append = found.append
    # Each candidate's dicts are built as they are sent, without a dict per
    # provider to copy from (an unlimited query builds some 10,000).
    for candidate in candidates:
        allocations: dict[str, dict[str, dict[str, int]]] = {}
        for rp_id, class_name, amount in candidate.resources:
            uuid = uuid_of[rp_id]
            entry = allocations.get(uuid)
            if entry is None:
                allocations[uuid] = {"resources": {class_name: amount}}
            else:
                entry["resources"][class_name] = amount
        if not with_mappings:
            append({"allocations": allocations})
            continue
        mappings = {}
        for suffix, uuids in candidate.mappings:
            mappings[suffix] = sorted(uuids) if len(uuids) > 1 else list(uuids)
        append({"allocations": allocations, "mappings": mappings})
    return found


def _listed_allocation_request(candidate: AllocationRequest, uuid_of: Mapping[int, str]) -> dict[str, Any]:
    """A candidate as microversions before 1.12 list it: its allocations as a
    list of {resource_provider: {uuid}, resources}."""
    by_provider: dict[str, dict[str, int]] = {}
    for rp_id, class_name, amount in candidate.resources:
        by_provider.setdefault(uuid_of[rp_id], {})[class_name] = amount
    return {
        "allocations": [
            {"resource_provider": {"uuid": uuid}, "resources": resources} for uuid, resources in by_provider.items()
        ]
    }


def _provider_summaries(
    version: tuple[int, int], found: Candidates, requested_classes: set[str]
) -> dict[str, dict[str, Any]]:
    every_class = version >= (1, 27)
    with_traits = version >= (1, 17)
    with_tree = version >= (1, 29)
    summaries: dict[str, dict[str, Any]] = {}
    providers, class_ids, trait_ids = found.providers, found.class_ids, found.trait_ids
    # Providers share a few sets of classes and of traits: each set's
    # database order is worked out once (keyed by the names as they come).
    class_order: dict[tuple[str, ...], list[str]] = {}
    trait_order: dict[tuple[str, ...], list[str]] = {}
    for provider in providers.values():
        resources = provider.resources
        names = tuple(resources)
        order = class_order.get(names)
        if order is None:
            order = class_order[names] = [
                name
                for name in sorted(names, key=lambda name: class_ids.get(name, 0))
                if every_class or name in requested_classes
            ]
        amounts = {}
        for name in order:
            capacity, used, _max_unit = resources[name]
            amounts[name] = {"capacity": capacity, "used": used}
        uuid = provider.uuid
        if not with_traits:
            summaries[uuid] = {"resources": amounts}
            continue
        traits = tuple(provider.traits)
        ordered = trait_order.get(traits)
        if ordered is None:
            ordered = trait_order[traits] = sorted(traits, key=lambda name: trait_ids.get(name, 0))
        if not with_tree:
            summaries[uuid] = {"resources": amounts, "traits": ordered}
            continue
        parent_id = provider.parent_id
        parent_uuid: str | None
        root_uuid: str | None
        if parent_id is None:  # a root: its own root
            parent_uuid, root_uuid = None, uuid
        else:
            root = providers.get(provider.root_id)
            parent_uuid, root_uuid = providers[parent_id].uuid, (root.uuid if root is not None else None)
        summaries[uuid] = {
            "resources": amounts,
            "traits": ordered,
            "parent_provider_uuid": parent_uuid,
            "root_provider_uuid": root_uuid,
        }
    return summaries


def pause_collection() -> Callable[[], None]:
    """Turn cyclic garbage collection off; the callable returned turns it
    back on if it was on. A large search makes hundreds of thousands of
    objects that all live until the response is written; the collector's
    passes over them meanwhile find nothing to free."""
    was_enabled = gc.isenabled()
    gc.disable()
    return gc.enable if was_enabled else lambda: None


def release_after_sending(response: HttpResponse, objects: object, resume: Callable[[], None]) -> None:
    """Free ``objects`` (a search and the body's data: up to a million
    objects for an unlimited query over 10,000 providers, a tenth of its
    time to free) and resume collection once ``response`` has been sent:
    when the server closes it after its last byte (WSGI servers and Django's
    test client call close()), or when it is dropped unclosed (the in-process
    client); the caller has its answer before the freeing starts."""
    held = [objects]

    def release() -> None:
        if held:  # once: a closed response is dropped too
            held.clear()
            resume()

    # What HttpResponse.close() runs (Django keeps its file closers there).
    response._resource_closers.append(release)  # type: ignore[attr-defined]
    weakref.finalize(response, release)


@handler(since=(1, 10), returns_json=True)
def list_allocation_candidates(request: PlacementRequest) -> HttpResponse:
    authorize(request, "placement:allocation_candidates:list")
    validate_query(request, _schema(request.version))
    wide = queryparams.request_wide_params(request)
    groups = queryparams.request_groups(request, wide)
    if not wide.group_policy and len([g for g in groups.values() if g.use_same_provider]) > 1:
        raise errors.Invalid(
            'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.'
        )
    resume = pause_collection()
    try:
        response, objects = _candidates_response(request, groups, wide)
    except BaseException:
        resume()
        raise
    release_after_sending(response, objects, resume)
    return response


def _candidates_response(
    request: PlacementRequest, groups: Mapping[str, queryparams.RequestGroup], wide: queryparams.RequestWideParams
) -> tuple[HttpResponse, object]:
    """The response, and the objects it was made of (for the caller to free)."""
    found = find_candidates(groups, wide, nested_aware=request.version >= (1, 29))
    requested_classes = {name for group in groups.values() for name in group.resources}
    version = request.version
    data = {
        "allocation_requests": _allocation_requests(version, found.allocation_requests, found.providers),
        "provider_summaries": _provider_summaries(version, found, requested_classes),
    }
    return json_response(request, data), (found, data)
