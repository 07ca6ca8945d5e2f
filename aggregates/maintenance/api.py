"""Corral's host maintenance and capacity headroom routes, answered at every
microversion (``/os-hosts/{host}/maintenance``, ``/os-maintenance-jobs``,
``/os-capacity-headroom``), and Nova's legacy ``/os-hosts/{host}`` (its GET is the hosts domain's)
(up to 2.42, 404 from 2.43 as in Nova)."""

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import APIVersion, ComputeRequest
from aggregates.compute_api.query import MAX_LIMIT, query_params
from aggregates.compute_api.validation import validate
from aggregates.hosts.api import os_hosts
from aggregates.maintenance import headroom, planning, schemas, serializers, services
from aggregates.maintenance.models import MaintenanceJob
from config.public_url import public_base

MAINTENANCE_POLICY = "corral:os-hosts:maintenance"
JOBS_POLICY = "corral:os-maintenance-jobs"
HEADROOM_POLICY = "corral:os-capacity-headroom"
HOSTS_UPDATE_POLICY = "os_compute_api:os-hosts:update"


def _job_response(request: ComputeRequest, job: MaintenanceJob) -> Response:
    location = f"{public_base(request)}/compute/v2.1/os-maintenance-jobs/{job.uuid}"
    return Response(serializers.job_body(job), status=202, headers={"Location": location})


class HostMaintenanceView(ComputeAPIView):
    def post(self, request: ComputeRequest, host: str) -> Response:
        caller = enforce(request, MAINTENANCE_POLICY)
        services.compute_service(host)  # an unknown host is 404 before anything else
        body = validate(self.body(request), schemas.MAINTENANCE)["maintenance"]
        options = {
            "reason": body.get("reason"),
            "strategy": body.get("strategy", "live"),
            "prefer_aggregate_peers": body.get("prefer_aggregate_peers", True),
            "rebalance": body.get("rebalance", False),
            "dry_run": body.get("dry_run", False),
        }
        result = services.maintain(caller, host, body["action"], **options)
        if isinstance(result, planning.Plan):
            return Response(serializers.plan_body(result))
        return _job_response(request, result)


class HostView(ComputeAPIView):
    """Nova's os-hosts show (the hosts domain's) and update: ``status``
    enables or disables the compute service; ``maintenance_mode`` starts or
    stops the host's maintenance."""

    max_version = APIVersion(2, 42)

    def get(self, request: ComputeRequest, host: str) -> Response:
        return os_hosts.show(request, host)

    def put(self, request: ComputeRequest, host: str) -> Response:
        body = validate(self.body(request), schemas.HOST_UPDATE)
        caller = enforce(request, HOSTS_UPDATE_POLICY)
        services.compute_service(host)
        result: dict[str, str] = {"host": host}
        if "status" in body:
            result["status"] = services.set_host_enabled(caller, host, body["status"].lower() == "enable")
        if "maintenance_mode" in body:
            enable = body["maintenance_mode"].lower() == "enable"
            services.set_maintenance_mode(caller, host, enable)
            result["maintenance_mode"] = "on_maintenance" if enable else "off_maintenance"
        return Response(result)


class MaintenanceJobListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        query = query_params(request, schemas.JOB_QUERY)
        enforce(request, JOBS_POLICY)
        rows = services.jobs_with_items()
        if "host" in query:
            rows = rows.filter(host=query["host"])
        if "status" in query:
            rows = rows.filter(status=query["status"])
        limit = min(int(query.get("limit", 100)), MAX_LIMIT)
        return Response(serializers.job_list_body(rows[:limit]))


class MaintenanceJobView(ComputeAPIView):
    def get(self, request: ComputeRequest, job_id: str) -> Response:
        enforce(request, JOBS_POLICY)
        return Response(serializers.job_body(services.get_job(job_id)))


class CapacityHeadroomView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        query = query_params(request, schemas.HEADROOM_QUERY)
        enforce(request, HEADROOM_POLICY)
        result = headroom.capacity_headroom(
            aggregate_id=int(query["aggregate"]) if "aggregate" in query else None,
            availability_zone=query.get("availability_zone"),
            hosts=int(query.get("hosts", 1)),
        )
        return Response(serializers.headroom_body(result))
