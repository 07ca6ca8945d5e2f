"""``/os-availability-zone`` and its detail."""

from django.conf import settings
from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import query_params
from aggregates.zones import schemas, serializers
from aggregates.zones import services as zone_services


class AvailabilityZoneListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        query_params(request, schemas.zone_query(request.version))
        enforce(request, "os_compute_api:os-availability-zone:list")
        zones = [
            z for z in zone_services.list_availability_zones() if z.name != settings.INTERNAL_SERVICE_AVAILABILITY_ZONE
        ]
        return Response(serializers.zone_list_body(zones))


class AvailabilityZoneDetailView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        query_params(request, schemas.zone_query(request.version))
        enforce(request, "os_compute_api:os-availability-zone:detail")
        return Response(serializers.zone_list_body(zone_services.list_availability_zones(), detail=True))
