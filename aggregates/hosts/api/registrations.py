"""Corral's own ``/os-host-registrations``, where host agents register their compute node."""

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.validation import validate
from aggregates.hosts import schemas, serializers
from aggregates.hosts import services as host_services


class HostRegistrationView(ComputeAPIView):
    def post(self, request: ComputeRequest) -> Response:
        registration = validate(self.body(request), schemas.REGISTRATION)["registration"]
        caller = enforce(request, "os_compute_api:os-host-registrations:create")
        details = {key: value for key, value in registration.items() if key not in ("host", "hypervisor_hostname")}
        node, created = host_services.register_host(
            caller, registration["host"], registration.get("hypervisor_hostname"), **details
        )
        return Response(serializers.registration_body(node, created), status=201 if created else 200)
