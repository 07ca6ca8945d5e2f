"""``/os-quota-sets``, ``/os-quota-class-sets`` and ``/limits``."""

from rest_framework.response import Response

from aggregates.compute_api.auth import caller_of, enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import query_params
from aggregates.compute_api.validation import validate
from aggregates.quotas import schemas, serializers, services
from aggregates.value_schemas import to_bool


def _user_id(request: ComputeRequest) -> str | None:
    """Nova reads the first user_id of the query string."""
    query_params(request, schemas.quota_set_query(request.version))
    values = request.query_params.getlist("user_id")
    return values[0] if values else None


class QuotaSetView(ComputeAPIView):
    def get(self, request: ComputeRequest, project_id: str) -> Response:
        user_id = _user_id(request)
        values = services.show(caller_of(request), project_id, user_id)
        return Response(serializers.quota_set_body(request.version, values, project_id))

    def put(self, request: ComputeRequest, project_id: str) -> Response:
        body = validate(self.body(request), schemas.quota_set_update(request.version))
        user_id = _user_id(request)
        values = body["quota_set"]
        force = to_bool(values.get("force", False))
        found = services.update(caller_of(request), project_id, values, user_id=user_id, force=force)
        return Response(serializers.quota_set_body(request.version, found))

    def delete(self, request: ComputeRequest, project_id: str) -> Response:
        user_id = _user_id(request)
        services.delete(caller_of(request), project_id, user_id)
        return Response(status=202)


class QuotaSetDetailView(ComputeAPIView):
    def get(self, request: ComputeRequest, project_id: str) -> Response:
        user_id = _user_id(request)
        values = services.show_detail(caller_of(request), project_id, user_id)
        return Response(serializers.quota_set_body(request.version, values, project_id))


class QuotaSetDefaultsView(ComputeAPIView):
    def get(self, request: ComputeRequest, project_id: str) -> Response:
        query_params(request, schemas.DEFAULTS_QUERY)
        caller = enforce(request, "os_compute_api:os-quota-sets:defaults")
        values = services.show_defaults(caller, project_id)
        return Response(serializers.quota_set_body(request.version, values, project_id))


class QuotaClassSetView(ComputeAPIView):
    def get(self, request: ComputeRequest, class_name: str) -> Response:
        query_params(request, schemas.quota_class_query(request.version))
        values = services.show_class(caller_of(request), class_name)
        return Response(serializers.quota_class_body(request.version, values, class_name))

    def put(self, request: ComputeRequest, class_name: str) -> Response:
        body = validate(self.body(request), schemas.quota_class_update(request.version))
        values = services.update_class(caller_of(request), class_name, body["quota_class_set"])
        return Response(serializers.quota_class_body(request.version, values, None))


class LimitsView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        query_params(request, schemas.limits_query(request.version))
        caller = enforce(request, "os_compute_api:limits")
        tenant_id = request.query_params.get("tenant_id") if "tenant_id" in request.query_params else None
        quotas = services.limits_of(caller, tenant_id)
        return Response(serializers.limits_body(request.version, quotas))
