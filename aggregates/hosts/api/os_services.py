"""``/os-services``: compute and control-plane services."""

import uuid
from collections.abc import Callable
from typing import Any

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import parse_uuid, query_params
from aggregates.compute_api.validation import path_int, validate
from aggregates.hosts import schemas, serializers
from aggregates.hosts import services as host_services
from aggregates.hosts.services import ServiceChanges
from aggregates.value_schemas import to_bool

# --- the actions of PUT /os-services/{action}, before 2.53 -------------------------
# Each reads the checked body into (changes to save, fields of the reply).

ServiceAction = Callable[[dict[str, Any]], tuple[ServiceChanges, dict[str, Any]]]


def _enable(body: dict[str, Any]) -> tuple[ServiceChanges, dict[str, Any]]:
    return {"disabled": False, "disabled_reason": None}, {"status": "enabled"}


def _disable(body: dict[str, Any]) -> tuple[ServiceChanges, dict[str, Any]]:
    return {"disabled": True, "disabled_reason": None}, {"status": "disabled"}


def _disable_log_reason(body: dict[str, Any]) -> tuple[ServiceChanges, dict[str, Any]]:
    if "disabled_reason" not in body:
        raise ApiError(400, "Missing disabled reason field")
    reason = body["disabled_reason"]
    return {"disabled": True, "disabled_reason": reason}, {"status": "disabled", "disabled_reason": reason}


def _force_down(body: dict[str, Any]) -> tuple[ServiceChanges, dict[str, Any]]:
    if "forced_down" not in body:
        raise ApiError(400, "Missing forced_down field")
    forced_down = to_bool(body["forced_down"])
    return {"forced_down": forced_down}, {"forced_down": forced_down}


SERVICE_ACTIONS: dict[str, ServiceAction] = {
    "enable": _enable,
    "disable": _disable,
    "disable-log-reason": _disable_log_reason,
}
SERVICE_ACTIONS_V2_11: dict[str, ServiceAction] = {**SERVICE_ACTIONS, "force-down": _force_down}


class ServiceListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        params = query_params(request, schemas.service_list_query(request.version))
        enforce(request, "os_compute_api:os-services:list")
        services = host_services.list_services(host=params.get("host"), binary=params.get("binary"))
        return Response(serializers.service_list_body(services, request.version))


class ServiceDetailView(ComputeAPIView):
    def put(self, request: ComputeRequest, service_ref: str) -> Response:
        if request.version >= (2, 53):
            return self._update(request, service_ref)
        return self._action(request, service_ref)

    def _action(self, request: ComputeRequest, action: str) -> Response:
        body = validate(self.body(request), schemas.service_action(request.version))
        caller = enforce(request, "os_compute_api:os-services:update")
        perform = (SERVICE_ACTIONS_V2_11 if request.version >= (2, 11) else SERVICE_ACTIONS).get(action)
        if perform is None:
            raise ApiError(404, "Unknown action")
        changes, reply = perform(body)
        host_services.update_service_by_host(caller, body["host"], body["binary"], changes)
        return Response(serializers.service_action_body(body["host"], body["binary"], reply))

    def _update(self, request: ComputeRequest, service_ref: str) -> Response:
        body = validate(self.body(request), schemas.SERVICE_UPDATE_V2_53)
        service_uuid = parse_uuid(service_ref)
        caller = enforce(request, "os_compute_api:os-services:update")
        forced_down = body.get("forced_down")
        service = host_services.update_service(
            caller,
            service_uuid,
            status=body.get("status"),
            disabled_reason=body.get("disabled_reason"),
            forced_down=None if forced_down is None else to_bool(forced_down),
        )
        return Response(serializers.service_body(service, request.version))

    def delete(self, request: ComputeRequest, service_ref: str) -> Response:
        caller = enforce(request, "os_compute_api:os-services:delete")
        service_id: int | uuid.UUID
        if request.version >= (2, 53):
            service_id = parse_uuid(service_ref)
        else:
            service_id = path_int(service_ref, "Invalid input received: id must be an integer")
        host_services.delete_service(caller, service_id)
        return Response(status=204)
