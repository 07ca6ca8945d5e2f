"""``GET /os-capacity`` (Corral's own, answered at every microversion): how
many more servers of each flavor fit, per zone and per aggregate."""

from rest_framework.response import Response

from aggregates.capacity import schemas, serializers, services
from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import query_params


class CapacityView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        query = query_params(request, schemas.CAPACITY_QUERY)
        caller = enforce(request, services.POLICY)
        report = services.capacity(
            caller,
            flavors=request.query_params.getlist("flavor"),
            project_id=query.get("project"),
            lose_hosts=int(query.get("lose_hosts", 0)),
        )
        return Response(serializers.capacity_body(report))
