"""GET /allocation_candidates (1.10+)."""
from collections import defaultdict

from placement import errors
from placement.candidates import find_candidates

from . import queryparams, schemas
from .base import authorize, handler, json_response, validate_query

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


def _schema(version):
    return next((schema for minimum, schema in SCHEMAS if version >= minimum), schemas.CANDIDATES_1_10)


def _allocation_request(request, candidate, providers):
    by_provider = defaultdict(dict)
    for rp_id, class_name, amount in candidate.resources:
        by_provider[providers[rp_id].uuid][class_name] = amount
    if request.version < (1, 12):
        return {
            "allocations": [
                {"resource_provider": {"uuid": uuid}, "resources": resources}
                for uuid, resources in by_provider.items()
            ]
        }
    data = {"allocations": {uuid: {"resources": resources} for uuid, resources in by_provider.items()}}
    if request.version >= (1, 34):
        data["mappings"] = {suffix: sorted(uuids) for suffix, uuids in candidate.mappings}
    return data


def _provider_summaries(request, providers, requested_classes):
    by_id = providers
    summaries = {}
    for provider in providers.values():
        summary = {
            "resources": {
                name: {"capacity": capacity, "used": used}
                for name, (capacity, used, _max_unit) in provider.resources.items()
                if request.version >= (1, 27) or name in requested_classes
            }
        }
        if request.version >= (1, 17):
            summary["traits"] = sorted(provider.traits)
        if request.version >= (1, 29):
            summary["parent_provider_uuid"] = by_id[provider.parent_id].uuid if provider.parent_id else None
            summary["root_provider_uuid"] = by_id[provider.root_id].uuid if provider.root_id in by_id else None
        summaries[provider.uuid] = summary
    return summaries


@handler(since=(1, 10), returns_json=True)
def list_allocation_candidates(request):
    authorize(request, "placement:allocation_candidates:list")
    validate_query(request, _schema(request.version))
    wide = queryparams.request_wide_params(request)
    groups = queryparams.request_groups(request, wide)
    if not wide.group_policy and len([g for g in groups.values() if g.use_same_provider]) > 1:
        raise errors.Invalid(
            'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.'
        )
    found = find_candidates(groups, wide, nested_aware=request.version >= (1, 29))
    requested_classes = {name for group in groups.values() for name in group.resources}
    data = {
        "allocation_requests": [_allocation_request(request, c, found.providers) for c in found.allocation_requests],
        "provider_summaries": _provider_summaries(request, found.providers, requested_classes),
    }
    return json_response(request, data)
