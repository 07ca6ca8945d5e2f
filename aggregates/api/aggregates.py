"""``/os-aggregates``: host aggregates."""
from rest_framework.response import Response

from aggregates import services

from . import serializers, validation
from .auth import enforce
from .base import ComputeAPIView
from .errors import ApiError

CREATE_SCHEMA = {
    "type": "object",
    "properties": {
        "aggregate": {
            "type": "object",
            "properties": {"name": validation.name, "availability_zone": validation.az_name_or_none},
            "required": ["name"],
            "additionalProperties": False,
        }
    },
    "required": ["aggregate"],
    "additionalProperties": False,
}

UPDATE_SCHEMA = {
    "type": "object",
    "properties": {
        "aggregate": {
            "type": "object",
            "properties": {"name": validation.name_with_spaces, "availability_zone": validation.az_name_or_none},
            "additionalProperties": False,
            "anyOf": [{"required": ["name"]}, {"required": ["availability_zone"]}],
        }
    },
    "required": ["aggregate"],
    "additionalProperties": False,
}

HOST_ACTION_SCHEMA = {
    "type": "object",
    "properties": {"host": validation.hostname},
    "required": ["host"],
    "additionalProperties": False,
}

SET_METADATA_SCHEMA = {
    "type": "object",
    "properties": {
        "metadata": {
            "type": "object",
            "patternProperties": {
                r"^[a-zA-Z0-9-_:. ]{1,255}$": {"type": ["string", "null"], "maxLength": 255}
            },
            "additionalProperties": False,
        }
    },
    "required": ["metadata"],
    "additionalProperties": False,
}

ACTIONS = {
    "add_host": ("os_compute_api:os-aggregates:add_host", HOST_ACTION_SCHEMA),
    "remove_host": ("os_compute_api:os-aggregates:remove_host", HOST_ACTION_SCHEMA),
    "set_metadata": ("os_compute_api:os-aggregates:set_metadata", SET_METADATA_SCHEMA),
}


def _aggregate_id(value):
    return validation.path_int(value, f"Invalid aggregate id: {value}. The id must be an integer.")


def _strict_query(request):
    validation.validate_query(request.query_params, (), request.version >= (2, 102))


class AggregateListView(ComputeAPIView):
    def get(self, request):
        _strict_query(request)
        enforce(request, "os_compute_api:os-aggregates:index")
        return Response(
            {"aggregates": [serializers.aggregate(a, request.version) for a in services.list_aggregates()]}
        )

    def post(self, request):
        body = validation.validate(self.body(request), CREATE_SCHEMA)["aggregate"]
        caller = enforce(request, "os_compute_api:os-aggregates:create")
        agg = services.create_aggregate(caller, body["name"], body.get("availability_zone"))
        return Response({"aggregate": serializers.aggregate(agg, request.version, full=False)})


class AggregateDetailView(ComputeAPIView):
    def get(self, request, aggregate_id):
        _strict_query(request)
        enforce(request, "os_compute_api:os-aggregates:show")
        agg = services.get_aggregate(_aggregate_id(aggregate_id))
        return Response({"aggregate": serializers.aggregate(agg, request.version)})

    def put(self, request, aggregate_id):
        body = validation.validate(self.body(request), UPDATE_SCHEMA)["aggregate"]
        caller = enforce(request, "os_compute_api:os-aggregates:update")
        agg = services.update_aggregate(
            caller,
            _aggregate_id(aggregate_id),
            name=body.get("name"),
            availability_zone=body.get("availability_zone"),
            set_zone="availability_zone" in body,
        )
        return Response({"aggregate": serializers.aggregate(agg, request.version)})

    def delete(self, request, aggregate_id):
        caller = enforce(request, "os_compute_api:os-aggregates:delete")
        services.delete_aggregate(caller, _aggregate_id(aggregate_id))
        return Response(status=200)


class AggregateActionView(ComputeAPIView):
    def post(self, request, aggregate_id):
        body = self.body(request)
        if not isinstance(body, dict) or len(body) != 1:
            raise ApiError(400, "Malformed request body: an action body has exactly one key, the action name.")
        (action, arguments), = body.items()
        if action not in ACTIONS:
            raise ApiError(400, f"There is no such action: {action}")
        policy, schema = ACTIONS[action]
        arguments = validation.validate(arguments, schema)
        caller = enforce(request, policy)
        aggregate_id = _aggregate_id(aggregate_id)
        if action == "add_host":
            agg = services.add_host(caller, aggregate_id, arguments["host"])
        elif action == "remove_host":
            agg = services.remove_host(caller, aggregate_id, arguments["host"])
        else:
            metadata = arguments["metadata"]
            if "availability_zone" in metadata and metadata["availability_zone"] is not None:
                # Corral checks zone names given here like everywhere else.
                validation.validate({"availability_zone": metadata["availability_zone"]},
                                    {"type": "object", "properties": {"availability_zone": validation.az_name}})
            agg = services.set_metadata(caller, aggregate_id, metadata)
        return Response({"aggregate": serializers.aggregate(agg, request.version)})
