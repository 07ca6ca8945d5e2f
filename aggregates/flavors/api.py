"""``/flavors``: flavors, their extra specs (``os-extra_specs``) and their
project access lists (``os-flavor-access``)."""

from collections.abc import Mapping

from rest_framework.response import Response

from aggregates.compute_api.auth import caller_of, enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import query_params
from aggregates.compute_api.validation import validate
from aggregates.flavors import extra_specs, schemas, serializers
from aggregates.flavors import services as service
from aggregates.value_schemas import to_bool

ACCESS_ACTION_POLICIES = {
    "addTenantAccess": "os_compute_api:os-flavor-access:add_tenant_access",
    "removeTenantAccess": "os_compute_api:os-flavor-access:remove_tenant_access",
}

# --- the list filters, read with Nova's messages ---------------------------------


def _is_public_filter(value: str | None) -> bool | None:
    """Nova's is_public: absent -> public only, 'none' -> all, else a strict boolean."""
    if value is None:
        return True
    if value.lower() == "none":
        return None
    is_public = extra_specs.strict_boolean(value)
    if is_public is not None:
        return is_public
    raise ApiError(400, f"Invalid is_public filter [{value}]. Use true, false or none (all flavors).")


def _int_filter(params: Mapping[str, str], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise ApiError(400, f"Invalid {name} filter [{value}]")


def _limit(params: Mapping[str, str]) -> int | None:
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


def _flavor_list(request: ComputeRequest, detail: bool) -> Response:

    params = query_params(request, schemas.flavor_list_query(request.version))
    caller = caller_of(request)
    is_public = _is_public_filter(params.get("is_public")) if service.sees_all_flavors(caller) else True
    min_ram, min_disk = _int_filter(params, "minRam"), _int_filter(params, "minDisk")
    limit = _limit(params)
    flavors = service.list_flavors(
        caller,
        is_public=is_public,
        min_ram=min_ram,
        min_disk=min_disk,
        name_pattern=params.get("name"),  # in the query schema from 2.102
        sort_key=params.get("sort_key") or "flavorid",
        sort_dir=params.get("sort_dir") or "asc",
        limit=limit,
        marker=params.get("marker"),
    )
    return Response(serializers.flavor_list_body(request, flavors, detail, limit))


# --- views -------------------------------------------------------------------


class FlavorListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        return _flavor_list(request, detail=False)

    def post(self, request: ComputeRequest) -> Response:
        body = validate(self.body(request), schemas.flavor_create(request.version))["flavor"]
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
            is_public=to_bool(body.get("os-flavor-access:is_public", True)),
            description=body.get("description"),
        )
        return Response(serializers.flavor_body(request, flavor))


class FlavorDetailListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        return _flavor_list(request, detail=True)


class FlavorView(ComputeAPIView):
    def get(self, request: ComputeRequest, flavor_id: str) -> Response:
        query_params(request, schemas.flavor_query(request.version))
        flavor = service.get_flavor(caller_of(request), flavor_id)
        return Response(serializers.flavor_body(request, flavor))

    def put(self, request: ComputeRequest, flavor_id: str) -> Response:
        if request.version < (2, 55):
            raise ApiError(404, "The resource could not be found.")
        description = validate(self.body(request), schemas.FLAVOR_UPDATE_V2_55)["flavor"]["description"]
        caller = enforce(request, "os_compute_api:os-flavor-manage:update")
        flavor = service.update_description(caller, flavor_id, description)
        return Response(serializers.flavor_body(request, flavor))

    def delete(self, request: ComputeRequest, flavor_id: str) -> Response:
        caller = enforce(request, "os_compute_api:os-flavor-manage:delete")
        service.delete_flavor(caller, flavor_id)
        return Response(status=202)


class FlavorActionView(ComputeAPIView):
    def post(self, request: ComputeRequest, flavor_id: str) -> Response:
        body = self.body(request)
        if not isinstance(body, dict) or len(body) != 1:
            raise ApiError(400, "Malformed request body: an action body has exactly one key, the action name.")
        ((action, arguments),) = body.items()
        if action not in ACCESS_ACTION_POLICIES:
            raise ApiError(400, f"There is no such action: {action}")
        project_id = validate(arguments, schemas.TENANT_ACTION)["tenant"]
        caller = enforce(request, ACCESS_ACTION_POLICIES[action])
        if action == "addTenantAccess":
            flavor = service.add_tenant_access(caller, flavor_id, project_id, refuse_public=request.version >= (2, 7))
        else:
            flavor = service.remove_tenant_access(caller, flavor_id, project_id)
        return Response(serializers.flavor_access_body(flavor))


class FlavorAccessView(ComputeAPIView):
    def get(self, request: ComputeRequest, flavor_id: str) -> Response:
        caller = enforce(request, "os_compute_api:os-flavor-access")
        return Response(serializers.flavor_access_body(service.private_flavor(caller, flavor_id)))


class ExtraSpecListView(ComputeAPIView):
    def get(self, request: ComputeRequest, flavor_id: str) -> Response:
        query_params(request, schemas.flavor_query(request.version))
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:index")
        flavor = service.get_flavor(caller, flavor_id)
        return Response(serializers.extra_specs_body(service.extra_specs_of(flavor)))

    def post(self, request: ComputeRequest, flavor_id: str) -> Response:
        specs = validate(self.body(request), schemas.EXTRA_SPECS_SET)["extra_specs"]
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:create")
        service.set_extra_specs(caller, flavor_id, specs, validate=request.version >= (2, 86))
        return Response(serializers.extra_specs_body(specs))


class ExtraSpecView(ComputeAPIView):
    def get(self, request: ComputeRequest, flavor_id: str, key: str) -> Response:
        query_params(request, schemas.flavor_query(request.version))
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:show")
        return Response(serializers.extra_spec_body(key, service.get_extra_spec(caller, flavor_id, key)))

    def put(self, request: ComputeRequest, flavor_id: str, key: str) -> Response:
        specs = validate(self.body(request), schemas.EXTRA_SPEC_UPDATE)
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:update")
        if key not in specs:
            raise ApiError(400, f"Request body and URI mismatch: the body must set the key of the URL, {key}.")
        service.set_extra_specs(caller, flavor_id, specs, validate=request.version >= (2, 86))
        return Response(serializers.extra_spec_body(key, specs[key]))

    def delete(self, request: ComputeRequest, flavor_id: str, key: str) -> Response:
        caller = enforce(request, "os_compute_api:os-flavor-extra-specs:delete")
        service.delete_extra_spec(caller, flavor_id, key)
        return Response(status=200)
