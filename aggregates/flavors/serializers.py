"""Response bodies of ``/flavors``, its extra specs and its access lists, per microversion."""

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlencode

from aggregates.compute_api.auth import allowed, caller_of
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.flavors import services as service
from aggregates.flavors.models import Flavor
from config.public_url import public_base


def flavor_links(request: ComputeRequest, flavor: Flavor) -> list[dict[str, str]]:
    flavorid = quote(flavor.flavorid, safe="")
    base = public_base(request)
    return [
        {"rel": "self", "href": f"{base}/compute/v2.1/flavors/{flavorid}"},
        {"rel": "bookmark", "href": f"{base}/compute/flavors/{flavorid}"},
    ]


def flavor_brief(request: ComputeRequest, flavor: Flavor) -> dict[str, Any]:
    body: dict[str, Any] = {"id": flavor.flavorid, "name": flavor.name, "links": flavor_links(request, flavor)}
    if request.version >= (2, 55):
        body["description"] = flavor.description
    return body


def flavor_detail(request: ComputeRequest, flavor: Flavor) -> dict[str, Any]:
    """Every field; extra_specs from 2.61, to callers allowed to read them."""
    version = request.version
    body: dict[str, Any] = {
        "id": flavor.flavorid,
        "name": flavor.name,
        "ram": flavor.memory_mb,
        "disk": flavor.root_gb,
        "swap": flavor.swap if version >= (2, 75) else (flavor.swap or ""),
        "OS-FLV-EXT-DATA:ephemeral": flavor.ephemeral_gb,
        "vcpus": flavor.vcpus,
        "os-flavor-access:is_public": flavor.is_public,
        "links": flavor_links(request, flavor),
    }
    if version < (2, 102):
        body["OS-FLV-DISABLED:disabled"] = flavor.disabled
        body["rxtx_factor"] = flavor.rxtx_factor or ""
    if version >= (2, 55):
        body["description"] = flavor.description
    if version >= (2, 61) and allowed(caller_of(request), "os_compute_api:os-flavor-extra-specs:index"):
        body["extra_specs"] = service.extra_specs_of(flavor)
    return body


def flavor_body(request: ComputeRequest, flavor: Flavor) -> dict[str, Any]:
    return {"flavor": flavor_detail(request, flavor)}


def flavor_list_body(
    request: ComputeRequest, flavors: Sequence[Flavor], detail: bool, limit: int | None
) -> dict[str, Any]:
    """A page of flavors, brief or detailed, with a ``next`` link when the
    page is as long as the ``limit`` asked for."""
    render = flavor_detail if detail else flavor_brief
    body: dict[str, Any] = {"flavors": [render(request, flavor) for flavor in flavors]}
    if flavors and limit == len(flavors):
        query = dict(sorted(request.query_params.items()))
        query["marker"] = flavors[-1].flavorid
        collection = "flavors/detail" if detail else "flavors"
        body["flavors_links"] = [
            {"rel": "next", "href": f"{public_base(request)}/compute/v2.1/{collection}?{urlencode(query)}"}
        ]
    return body


def flavor_access_body(flavor: Flavor) -> dict[str, list[dict[str, str]]]:
    return {
        "flavor_access": [
            {"flavor_id": flavor.flavorid, "tenant_id": project_id} for project_id in service.projects_of(flavor)
        ]
    }


def extra_specs_body(specs: dict[str, str]) -> dict[str, dict[str, str]]:
    return {"extra_specs": specs}


def extra_spec_body(key: str, value: str) -> dict[str, str]:

    return {key: value}
