"""Response bodies of ``/flavors``, its extra specs and its access lists, per microversion."""

from urllib.parse import quote, urlencode

from aggregates.compute_api.auth import allowed, caller_of
from aggregates.flavors import services as service
from config.public_url import public_base


def flavor_links(request, flavor):
    flavorid = quote(flavor.flavorid, safe="")
    base = public_base(request)
    return [
        {"rel": "self", "href": f"{base}/compute/v2.1/flavors/{flavorid}"},
        {"rel": "bookmark", "href": f"{base}/compute/flavors/{flavorid}"},
    ]


def flavor_brief(request, flavor):
    body = {"id": flavor.flavorid, "name": flavor.name, "links": flavor_links(request, flavor)}
    if request.version >= (2, 55):
        body["description"] = flavor.description
    return body


def flavor_detail(request, flavor):
    """Every field; extra_specs from 2.61, to callers allowed to read them."""
    version = request.version
    body = {
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


def flavor_body(request, flavor):
    return {"flavor": flavor_detail(request, flavor)}


def flavor_list_body(request, flavors, detail, limit):
    """A page of flavors, brief or detailed, with a ``next`` link when the
    page is as long as the ``limit`` asked for."""
    render = flavor_detail if detail else flavor_brief
    body = {"flavors": [render(request, flavor) for flavor in flavors]}
    if flavors and limit == len(flavors):
        query = dict(sorted(request.query_params.items()))
        query["marker"] = flavors[-1].flavorid
        collection = "flavors/detail" if detail else "flavors"
        body["flavors_links"] = [
            {"rel": "next", "href": f"{public_base(request)}/compute/v2.1/{collection}?{urlencode(query)}"}
        ]
    return body


def flavor_access_body(flavor):
    return {
        "flavor_access": [
            {"flavor_id": flavor.flavorid, "tenant_id": project_id} for project_id in service.projects_of(flavor)
        ]
    }


def extra_specs_body(specs):
    return {"extra_specs": specs}


def extra_spec_body(key, value):
    return {key: value}
