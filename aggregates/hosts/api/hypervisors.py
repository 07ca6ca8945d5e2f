"""``/os-hypervisors``: compute nodes as Nova shows them."""

import uuid
from collections.abc import Iterable, Sequence

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import APIVersion, ComputeRequest
from aggregates.compute_api.query import MAX_LIMIT, parse_uuid, query_params
from aggregates.compute_api.validation import path_int
from aggregates.hosts import schemas, serializers
from aggregates.hosts import services as host_services
from aggregates.hosts.models import ComputeNode, Service
from aggregates.placement_client import PlacementError, client
from aggregates.servers import services as server_services
from aggregates.servers.models import Server, instances_by_node
from aggregates.value_schemas import to_bool


def hypervisor_ref(request: ComputeRequest, value: str) -> int | uuid.UUID:
    """The node id of a path: before 2.53 an integer (else 404), from 2.53 a uuid (else 400)."""
    if request.version >= (2, 53):
        return parse_uuid(value)
    try:
        return path_int(value)
    except ApiError:
        raise ApiError(404, f"Hypervisor with ID '{value}' could not be found.")


def usages_now(nodes: Sequence[ComputeNode], version: APIVersion) -> dict[int, dict[str, int]]:
    """Node id -> its usage now, up to 2.87: vcpus_used, memory_mb_used and
    local_gb_used from the placement usages of the node's provider, and
    running_vms the instances on it (``instances_by_node``). A node placement cannot answer for keeps
    its stored values (absent here)."""
    if version >= (2, 88) or not nodes:
        return {}
    counts = instances_by_node(nodes)
    try:
        by_provider = client().usages_of_providers(node.uuid for node in nodes)
    except PlacementError:
        return {}
    usages: dict[int, dict[str, int]] = {}
    for node in nodes:
        used = by_provider.get(str(node.uuid))
        if used is None:
            continue
        usages[node.id] = {
            "vcpus_used": used.get("VCPU", 0),
            "memory_mb_used": used.get("MEMORY_MB", 0),
            "local_gb_used": used.get("DISK_GB", 0),
            "running_vms": counts.get(str(node.uuid), 0),
        }
    return usages


def servers_of(nodes: Iterable[ComputeNode], with_servers: bool) -> dict[str, list[Server]]:
    """Host -> its servers, when asked for (``with_servers``), else {}."""
    return server_services.servers_on_hosts({node.host for node in nodes}) if with_servers else {}


class HypervisorListView(ComputeAPIView):
    detail = False

    def get(self, request: ComputeRequest) -> Response:
        paging = request.version >= (2, 33)
        params = query_params(request, schemas.hypervisor_list_query(request.version))
        enforce(
            request,
            "os_compute_api:os-hypervisors:list-detail" if self.detail else "os_compute_api:os-hypervisors:list",
        )
        pattern = params.get("hypervisor_hostname_pattern")
        if pattern is not None:
            if "limit" in params or "marker" in params:
                raise ApiError(
                    400,
                    "Paging over hypervisors with the hypervisor_hostname_pattern query parameter is not supported.",
                )
            nodes = host_services.search_compute_nodes(pattern)
        else:
            # From 2.33 a page holds at most MAX_LIMIT nodes; limit=0 means the maximum.
            limit = min(int(params.get("limit", 0)) or MAX_LIMIT, MAX_LIMIT) if paging else None
            nodes = host_services.list_compute_nodes(limit=limit, marker=params.get("marker"))
        with_servers = to_bool(params.get("with_servers", False))
        return Response(
            serializers.hypervisor_list_body(
                request,
                nodes,
                self.detail,
                with_servers,
                paged=paging and pattern is None,
                usages=usages_now(nodes, request.version) if self.detail else None,
                servers=servers_of(nodes, with_servers),
            )
        )


class HypervisorDetailListView(HypervisorListView):
    detail = True


class HypervisorView(ComputeAPIView):
    def get(self, request: ComputeRequest, node_ref: str) -> Response:
        params = query_params(request, schemas.hypervisor_show_query(request.version))
        enforce(request, "os_compute_api:os-hypervisors:show")
        node = host_services.get_compute_node(hypervisor_ref(request, node_ref))
        with_servers = to_bool(params.get("with_servers", False))
        usage = usages_now([node], request.version).get(node.id)
        servers = servers_of([node], with_servers).get(node.host)
        return Response(serializers.hypervisor_body(node, request.version, with_servers, usage, servers))


class HypervisorUptimeView(ComputeAPIView):
    max_version = (2, 87)

    def get(self, request: ComputeRequest, node_ref: str) -> Response:
        enforce(request, "os_compute_api:os-hypervisors:uptime")
        node, uptime = host_services.compute_node_uptime(hypervisor_ref(request, node_ref))
        return Response(serializers.hypervisor_uptime_body(node, uptime, request.version))


class HypervisorStatisticsView(ComputeAPIView):
    max_version = (2, 87)

    def get(self, request: ComputeRequest) -> Response:
        enforce(request, "os_compute_api:os-hypervisors:statistics")
        statistics = host_services.compute_node_statistics()
        # The sums with each node's usage now, where placement could tell it.
        nodes = [
            node
            for node in host_services.list_compute_nodes()
            if node.service.binary == Service.COMPUTE and not node.service.disabled
        ]
        usages = usages_now(nodes, request.version)
        for node in nodes:
            for name, value in usages.get(node.id, {}).items():
                statistics[name] += value - getattr(node, name)
        statistics["free_ram_mb"] = statistics["memory_mb"] - statistics["memory_mb_used"]
        statistics["free_disk_gb"] = statistics["local_gb"] - statistics["local_gb_used"]
        return Response(serializers.hypervisor_statistics_body(statistics))


class HypervisorSearchView(ComputeAPIView):
    """``/{pattern}/search`` and ``/{pattern}/servers``, replaced at 2.53 by query parameters."""

    max_version = (2, 52)
    policy = "os_compute_api:os-hypervisors:search"
    with_servers = False

    def get(self, request: ComputeRequest, pattern: str) -> Response:
        enforce(request, self.policy)
        nodes = host_services.search_compute_nodes(pattern)
        servers = servers_of(nodes, self.with_servers)
        return Response(serializers.hypervisor_list_body(request, nodes, servers=servers))


class HypervisorServersView(HypervisorSearchView):
    """Each matching node with the servers of its host (the key only when there are some)."""

    policy = "os_compute_api:os-hypervisors:servers"
    with_servers = True
