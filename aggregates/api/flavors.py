"""``/flavors``: flavors, their extra specs (``os-extra_specs``) and their
project access lists (``os-flavor-access``)."""
from urllib.parse import quote, urlencode

from django.urls import path
from rest_framework.response import Response

from aggregates import extra_specs
from aggregates.services import flavors as service

from . import validation
from .auth import allowed, caller_of, enforce
from .base import ComputeAPIView, public_base
from .errors import ApiError

# --- request schemas ---------------------------------------------------------


def _size(minimum):
    return {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": minimum, "maximum": service.MAX_INT}


FLAVOR_DESCRIPTION = {"type": ["string", "null"], "minLength": 0, "maxLength": service.MAX_DESCRIPTION_LENGTH}
RXTX_FACTOR = {"type": ["number", "string"], "pattern": r"^[0-9]+(\.[0-9]+)?$", "minimum": 0,
               "exclusiveMinimum": True, "maximum": service.MAX_RXTX_FACTOR}


def create_schema(version):
    properties = {
        "name": validation.name,
        "id": {"type": ["string", "number", "null"], "minLength": 1, "maxLength": 255,
               "pattern": service.FLAVOR_ID_PATTERN},
        "ram": _size(1),
        "vcpus": _size(1),
        "disk": _size(0),
        "OS-FLV-EXT-DATA:ephemeral": _size(0),
        "swap": _size(0),
        "os-flavor-access:is_public": validation.boolean,
    }
    if version < (2, 102):
        properties["rxtx_factor"] = RXTX_FACTOR
    if version >= (2, 55):
        properties["description"] = FLAVOR_DESCRIPTION
    return {
        "type": "object",
        "properties": {
            "flavor": {
                "type": "object",
                "properties": properties,
                "required": ["name", "ram", "vcpus", "disk"],
                "additionalProperties": False,
            }
        },
        "required": ["flavor"],
        "additionalProperties": False,
    }


UPDATE_SCHEMA = {
    "type": "object",
    "properties": {
        "flavor": {
            "type": "object",
            "properties": {"description": FLAVOR_DESCRIPTION},
            "required": ["description"],
            "additionalProperties": False,
        }
    },
    "required": ["flavor"],
    "additionalProperties": False,
}

EXTRA_SPECS = {
    "type": "object",
    "patternProperties": {
        extra_specs.KEY_PATTERN: {"type": ["string", "number"], "maxLength": extra_specs.VALUE_MAX_LENGTH}
    },
    "additionalProperties": False,
}
SET_EXTRA_SPECS_SCHEMA = {
    "type": "object",
    "properties": {"extra_specs": EXTRA_SPECS},
    "required": ["extra_specs"],
    "additionalProperties": False,
}
UPDATE_EXTRA_SPEC_SCHEMA = {**EXTRA_SPECS, "minProperties": 1, "maxProperties": 1}

TENANT_SCHEMA = {
    "type": "object",
    "properties": {"tenant": {"type": "string", "minLength": 1, "maxLength": 255}},
    "required": ["tenant"],
    "additionalProperties": False,
}
ACCESS_ACTIONS = {
    "addTenantAccess": "os_compute_api:os-flavor-access:add_tenant_access",
    "removeTenantAccess": "os_compute_api:os-flavor-access:remove_tenant_access",
}

LIST_QUERY = ("limit", "marker", "is_public", "minRam", "minDisk", "sort_key", "sort_dir")

# --- wire shapes -------------------------------------------------------------


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


def flavor_access(flavor):
    return {"flavor_access": [{"flavor_id": flavor.flavorid, "tenant_id": project_id}
                              for project_id in service.projects_of(flavor)]}


# --- query parameters ----------------------------------------------------------


def _strict_query(request, allowed_params=(), since=(2, 102)):
    validation.validate_query(request.query_params, allowed_params, request.version >= since)


def _is_public_filter(value):
    """Nova's is_public: absent -> public only, 'none' -> all, else a strict boolean."""
    if value is None:
        return True
    if value.lower() == "none":
        return None
    is_public = extra_specs.strict_boolean(value)
    if is_public is not None:
        return is_public
    raise ApiError(400, f"Invalid is_public filter [{value}]. Use true, false or none (all flavors).")


def _int_filter(params, name):
    value = params.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise ApiError(400, f"Invalid {name} filter [{value}]")


def _limit(params):
    value = params.get("limit")
    if value is None:
        return None
    try:
        limit = int(value)
    except ValueError:
        raise ApiError(400, "limit param must be an integer")
    if limit < 0:
        raise ApiError(400, "limit param must be positive")
    return limit


def _next_links(request, flavors, collection):
    """A ``next`` link when the page is as long as the limit asked for."""
    params = request.query_params
    if not flavors or _limit(params) != len(flavors):
        return []
    query = dict(sorted(params.items()))
    query["marker"] = flavors[-1].flavorid
    return [{"rel": "next", "href": f"{public_base(request)}/compute/v2.1/{collection}?{urlencode(query)}"}]


def _flavor_list(request, detail):
    allowed_params = LIST_QUERY + (("name",) if request.version >= (2, 102) else ())
    _strict_query(request, allowed_params, since=(2, 75))
    caller = caller_of(request)
    params = request.query_params
    flavors = service.list_flavors(
        caller,
        is_public=_is_public_filter(params.get("is_public")) if service.sees_all_flavors(caller) else True,
        min_ram=_int_filter(params, "minRam"),
        min_disk=_int_filter(params, "minDisk"),
        name_pattern=params.get("name") if request.version >= (2, 102) else None,
        sort_key=params.get("sort_key") or "flavorid",
        sort_dir=params.get("sort_dir") or "asc",
        limit=_limit(params),
        marker=params.get("marker"),
    )
    render = flavor_detail if detail else flavor_brief
    body = {"flavors": [render(request, flavor) for flavor in flavors]}
    links = _next_links(request, flavors, "flavors/detail" if detail else "flavors")
    if links:
        body["flavors_links"] = links
    return Response(body)


# --- views -------------------------------------------------------------------


class FlavorListView(ComputeAPIView):
    def get(self, request):
        return _flavor_list(request, detail=False)

    def post(self, request):
        body = validation.validate(self.body(request), create_schema(request.version))["flavor"]
        caller = enforce(request, "os_compute_api:os-flavor-manage:create")
        flavor = service.create_flavor(
            caller,
            name=body["name"],
            ram=body["ram"],
            vcpus=body["vcpus"],
            disk=body["disk"],
            flavorid=body.get("id"),
            ephemeral=body.get("OS-FLV-EXT-DATA:ephemeral", 0),
            swap=body.get("swap", 0),
            rxtx_factor=body.get("rxtx_factor", 1.0),
            is_public=validation.to_bool(body.get("os-flavor-access:is_public", True)),
            description=body.get("description"),
        )
        return Response({"flavor": flavor_detail(request, flavor)})


class FlavorDetailListView(ComputeAPIView):
    def get(self, request):
        return _flavor_list(request, detail=True)


class FlavorView(ComputeAPIView):
    def get(self, request, flavor_id):
        _strict_query(request)
        flavor = service.get_flavor(caller_of(request), flavor_id)
        return Response({"flavor": flavor_detail(request, flavor)})

    def put(self, request, flavor_id):
        if request.version < (2, 55):
            raise ApiError(404, "The resource could not be found.")
        description = validation.validate(self.body(request), UPDATE_SCHEMA)["flavor"]["description"]
        caller = enforce(request, "os_compute_api:os-flavor-manage:update")
        flavor = service.update_description(caller, flavor_id, description)
        return Response({"flavor": flavor_detail(request, flavor)})

    def delete(self, request, flavor_id):
        caller = enforce(request, "os_compute_api:os-flavor-manage:delete")
        service.delete_flavor(caller, flavor_id)
        return Response(status=202)


class FlavorActionView(ComputeAPIView):
    def post(self, request, flavor_id):
        body = self.body(request)
        if not isinstance(body, dict) or len(body) != 1:
            raise ApiError(400, "Malformed request body: an action body has exactly one key, the action name.")
        (action, arguments), = body.items()
        if action not in ACCESS_ACTIONS:
            raise ApiError(400, f"There is no such action: {action}")
        project_id = validation.validate(arguments, TENANT_SCHEMA)["tenant"]
        caller = enforce(request, ACCESS_ACTIONS[action])
        if action == "addTenantAccess":
            flavor = service.add_tenant_access(caller, flavor_id, project_id,
                                               refuse_public=request.version >= (2, 7))
        else:
            flavor = service.remove_tenant_access(caller, flavor_id, project_id)
        return Response(flavor_access(flavor))


class FlavorAccessView(ComputeAPIView):
    def get(self, request, flavor_id):
        caller = enforce(request, "os_compute_api:os-flavor-access")
        return Response(flavor_access(service.private_flavor(caller, flavor_id)))


class ExtraSpecListView(ComputeAPIView):
    def get(self, request, flavor_id):
        _strict_query(request)
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:index")
        return Response({"extra_specs": service.extra_specs_of(service.get_flavor(caller, flavor_id))})

    def post(self, request, flavor_id):
        body = validation.validate(self.body(request), SET_EXTRA_SPECS_SCHEMA)
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:create")
        service.set_extra_specs(caller, flavor_id, body["extra_specs"], validate=request.version >= (2, 86))
        return Response(body)


class ExtraSpecView(ComputeAPIView):
    def get(self, request, flavor_id, key):
        _strict_query(request)
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:show")
        return Response({key: service.get_extra_spec(caller, flavor_id, key)})

    def put(self, request, flavor_id, key):
        body = validation.validate(self.body(request), UPDATE_EXTRA_SPEC_SCHEMA)
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:update")
        if key not in body:
            raise ApiError(400, f"Request body and URI mismatch: the body must set the key of the URL, {key}.")
        service.set_extra_specs(caller, flavor_id, body, validate=request.version >= (2, 86))
        return Response(body)

    def delete(self, request, flavor_id, key):
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:delete")
        service.delete_extra_spec(caller, flavor_id, key)
        return Response(status=200)


urlpatterns = [
    path("flavors", FlavorListView.as_view()),
    path("flavors/detail", FlavorDetailListView.as_view()),
    path("flavors/<str:flavor_id>", FlavorView.as_view()),
    path("flavors/<str:flavor_id>/action", FlavorActionView.as_view()),
    path("flavors/<str:flavor_id>/os-flavor-access", FlavorAccessView.as_view()),
    path("flavors/<str:flavor_id>/os-extra_specs", ExtraSpecListView.as_view()),
    path("flavors/<str:flavor_id>/os-extra_specs/<str:key>", ExtraSpecView.as_view()),
]
