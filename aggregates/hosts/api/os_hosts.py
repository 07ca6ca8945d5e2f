"""Nova's legacy ``/os-hosts`` list and show (up to 2.42, 404 from 2.43 as
in Nova); the update (``PUT /os-hosts/{host}``) is the maintenance domain's."""

from typing import Any

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import APIVersion, ComputeRequest
from aggregates.compute_api.query import query_params
from aggregates.hosts import services as host_services
from aggregates.hosts.api.hypervisors import usages_now
from aggregates.hosts.services import HostUsage

# Nova keeps unknown query parameters here (additional properties allowed).
LIST_QUERY = {"type": "object", "properties": {"zone": {"type": "string"}}}


def _row(host: str, usage: HostUsage) -> dict[str, Any]:
    return {
        "resource": {
            "host": host,
            "project": usage.project,
            "cpu": usage.cpu,
            "memory_mb": usage.memory_mb,
            "disk_gb": usage.disk_gb,
        }
    }


class HostListView(ComputeAPIView):
    max_version = APIVersion(2, 42)

    def get(self, request: ComputeRequest) -> Response:
        query = query_params(request, LIST_QUERY)
        enforce(request, "os_compute_api:os-hosts:list")
        services = host_services.list_legacy_hosts(query.get("zone") or None)
        hosts = [
            {"host_name": s.host, "service": host_services.service_topic(s), "zone": s.availability_zone}
            for s in services
        ]
        return Response({"hosts": hosts})


def show(request: ComputeRequest, host: str) -> Response:
    """``GET /os-hosts/{host}``: the host's total, used now, used at most
    (its servers' flavors) and per project usage rows."""
    enforce(request, "os_compute_api:os-hosts:show")
    found = host_services.host_resources(host)
    node = found.node
    now = usages_now([node], request.version).get(node.id, {})
    total = HostUsage("(total)", node.vcpus, node.memory_mb, node.local_gb)
    used_now = HostUsage(
        "(used_now)",
        now.get("vcpus_used", node.vcpus_used),
        now.get("memory_mb_used", node.memory_mb_used),
        now.get("local_gb_used", node.local_gb_used),
    )
    rows = [total, used_now, found.used_max, *found.by_project]
    return Response({"host": [_row(host, row) for row in rows]})
