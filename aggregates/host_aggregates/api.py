"""``/os-aggregates``: host aggregates."""

from typing import Any

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import query_params
from aggregates.compute_api.validation import path_int, validate
from aggregates.host_aggregates import schemas, serializers, services

ACTION_POLICIES = {
    "add_host": "os_compute_api:os-aggregates:add_host",
    "remove_host": "os_compute_api:os-aggregates:remove_host",
    "set_metadata": "os_compute_api:os-aggregates:set_metadata",
}


def _aggregate_id(value: str) -> int:
    return path_int(value, f"Invalid aggregate id: {value}. The id must be an integer.")


class AggregateListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        query_params(request, schemas.aggregate_query(request.version))
        enforce(request, "os_compute_api:os-aggregates:index")
        return Response(serializers.aggregate_list_body(services.list_aggregates(), request.version))

    def post(self, request: ComputeRequest) -> Response:
        body = validate(self.body(request), schemas.AGGREGATE_CREATE)["aggregate"]
        caller = enforce(request, "os_compute_api:os-aggregates:create")
        agg = services.create_aggregate(caller, body["name"], body.get("availability_zone"))
        return Response(serializers.aggregate_body(agg, request.version, full=False))


class AggregateDetailView(ComputeAPIView):
    def get(self, request: ComputeRequest, aggregate_id: str) -> Response:
        query_params(request, schemas.aggregate_query(request.version))
        enforce(request, "os_compute_api:os-aggregates:show")
        agg = services.get_aggregate(_aggregate_id(aggregate_id))
        return Response(serializers.aggregate_body(agg, request.version))

    def put(self, request: ComputeRequest, aggregate_id: str) -> Response:
        body = validate(self.body(request), schemas.AGGREGATE_UPDATE)["aggregate"]
        caller = enforce(request, "os_compute_api:os-aggregates:update")
        agg = services.update_aggregate(
            caller,
            _aggregate_id(aggregate_id),
            name=body.get("name"),
            availability_zone=body.get("availability_zone"),
            set_zone="availability_zone" in body,
        )
        return Response(serializers.aggregate_body(agg, request.version))

    def delete(self, request: ComputeRequest, aggregate_id: str) -> Response:
        caller = enforce(request, "os_compute_api:os-aggregates:delete")
        services.delete_aggregate(caller, _aggregate_id(aggregate_id))
        return Response(status=200)


class AggregateActionView(ComputeAPIView):
    def post(self, request: ComputeRequest, aggregate_id: str) -> Response:
        action, arguments = self._action(request)
        caller = enforce(request, ACTION_POLICIES[action])
        pk = _aggregate_id(aggregate_id)
        if action == "add_host":
            agg = services.add_host(caller, pk, arguments["host"])
        elif action == "remove_host":
            agg = services.remove_host(caller, pk, arguments["host"])
        else:
            metadata = arguments["metadata"]
            if metadata.get("availability_zone") is not None:
                validate({"availability_zone": metadata["availability_zone"]}, schemas.METADATA_AVAILABILITY_ZONE)
            agg = services.set_metadata(caller, pk, metadata)
        return Response(serializers.aggregate_body(agg, request.version))

    def _action(self, request: ComputeRequest) -> tuple[str, dict[str, Any]]:
        """The action named by the body and its checked argument."""
        body = self.body(request)
        if not isinstance(body, dict) or len(body) != 1:
            raise ApiError(400, "Malformed request body: an action body has exactly one key, the action name.")
        ((action, arguments),) = body.items()
        if action not in schemas.ACTIONS:
            raise ApiError(400, f"There is no such action: {action}")
        arguments = validate(arguments, schemas.ACTIONS[action])
        return action, arguments
