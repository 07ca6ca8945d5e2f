"""``/os-address-pools`` (Corral's own, admin only): the address pools, with
their usage (a server's addresses are shown by ``servers.api``)."""

from rest_framework.response import Response

from aggregates.addressing import schemas, serializers
from aggregates.addressing import services as service
from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.validation import validate

POLICY = "corral:os-address-pools"


def _one(pool_ref: str) -> Response:
    pool = service.get_pool(pool_ref)
    return Response({"address_pool": serializers.pool_body(service.usage([pool])[0])})


class AddressPoolListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        enforce(request, POLICY)
        return Response({"address_pools": [serializers.pool_body(item) for item in service.usage()]})

    def post(self, request: ComputeRequest) -> Response:
        body = validate(self.body(request), schemas.POOL_CREATE)["address_pool"]
        caller = enforce(request, POLICY)
        pool = service.create_pool(
            caller,
            name=body["name"],
            cidr=body["cidr"],
            gateway=body.get("gateway") or "",
            kind=body.get("kind", "internal"),
            scope=body.get("scope", "global"),
            zone=body.get("zone"),
            aggregate=None if body.get("aggregate") is None else str(body["aggregate"]),
        )
        response = _one(str(pool.uuid))
        response.status_code = 201
        return response


class AddressPoolView(ComputeAPIView):
    def get(self, request: ComputeRequest, pool_id: str) -> Response:
        enforce(request, POLICY)
        return _one(pool_id)

    def put(self, request: ComputeRequest, pool_id: str) -> Response:
        body = validate(self.body(request), schemas.POOL_UPDATE)["address_pool"]
        caller = enforce(request, POLICY)
        changes = {key: ("" if value is None else str(value)) for key, value in body.items()}
        pool = service.update_pool(caller, pool_id, changes)
        return _one(str(pool.uuid))

    def delete(self, request: ComputeRequest, pool_id: str) -> Response:
        service.delete_pool(enforce(request, POLICY), pool_id)
        return Response(status=204)
