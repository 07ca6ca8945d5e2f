"""Response bodies of the host domain's routes (``/os-services``,
``/os-hypervisors``, ``/os-host-registrations``), per microversion."""

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from aggregates.compute_api.base import isotime
from aggregates.compute_api.microversions import APIVersion, ComputeRequest
from aggregates.hosts import services as host_services
from aggregates.hosts.models import ComputeNode
from aggregates.servers.models import Server
from aggregates.servers.serializers import instance_name
from config.public_url import public_base

if TYPE_CHECKING:
    from aggregates.zones.services import ZonedService

# --- /os-services -------------------------------------------------------------------


def service(svc: "ZonedService", version: APIVersion) -> dict[str, Any]:
    """A service as Nova shows it: uuid ids from 2.53, forced_down from 2.11."""
    item: dict[str, Any] = {
        "binary": svc.binary,
        "host": svc.host,
        "id": str(svc.uuid) if version >= (2, 53) else svc.id,
        "zone": svc.availability_zone,
        "status": "disabled" if svc.disabled else "enabled",
        "state": "up" if svc.is_up else "down",
        "updated_at": isotime(svc.updated_at),
        "disabled_reason": svc.disabled_reason,
    }
    if version >= (2, 11):
        item["forced_down"] = svc.forced_down
    return item


def service_list_body(services: Iterable["ZonedService"], version: APIVersion) -> dict[str, list[dict[str, Any]]]:
    return {"services": [service(s, version) for s in services]}


def service_body(svc: "ZonedService", version: APIVersion) -> dict[str, dict[str, Any]]:
    return {"service": service(svc, version)}


def service_action_body(host: str, binary: str, fields: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The reply to a pre-2.53 action: the service named, and the fields the action set."""
    return {"service": {"host": host, "binary": binary, **fields}}


# --- /os-hypervisors ------------------------------------------------------------------

USAGE_FIELDS = ("vcpus", "memory_mb", "local_gb", "vcpus_used", "memory_mb_used", "local_gb_used")


def hypervisor(
    node: ComputeNode,
    version: APIVersion,
    detail: bool = False,
    with_servers: bool = False,
    usage: Mapping[str, int] | None = None,
    servers: Sequence[Server] | None = None,
) -> dict[str, Any]:
    """A compute node as Nova shows it: uuid ids from 2.53, cpu_info an object
    from 2.28, usage fields until 2.87 and uptime from 2.88. ``usage``
    (vcpus_used, memory_mb_used, local_gb_used, running_vms) overrides the
    stored values: what placement and the servers say now. ``servers``: the
    servers on the node's host, listed when there are some."""
    svc = node.service
    uuid_ids = version >= (2, 53)
    item: dict[str, Any] = {
        "id": str(node.uuid) if uuid_ids else node.id,
        "hypervisor_hostname": node.hypervisor_hostname,
        "state": "up" if svc.is_up else "down",
        "status": "disabled" if svc.disabled else "enabled",
    }
    if detail:
        if version < (2, 88):
            now = {name: getattr(node, name) for name in (*USAGE_FIELDS, "running_vms")}
            now.update(usage or {})
            item.update({name: now[name] for name in USAGE_FIELDS})
            item.update(
                {
                    "free_ram_mb": now["memory_mb"] - now["memory_mb_used"],
                    "free_disk_gb": now["local_gb"] - now["local_gb_used"],
                    "current_workload": node.current_workload,
                    "running_vms": now["running_vms"],
                    "disk_available_least": node.disk_available_least,
                    "cpu_info": (node.cpu_info or {}) if version >= (2, 28) else json.dumps(node.cpu_info or {}),
                }
            )
        item.update(
            {
                "hypervisor_type": node.hypervisor_type,
                "hypervisor_version": node.hypervisor_version,
                "host_ip": node.host_ip,
                "service": {
                    "id": str(svc.uuid) if uuid_ids else svc.id,
                    "host": node.host,
                    "disabled_reason": svc.disabled_reason,
                },
            }
        )
        if version >= (2, 88):
            item["uptime"] = host_services.uptime_of(node)
    # Nova shows the key when the list is not empty, or, from 2.75,
    # whenever with_servers was asked for.
    if servers:
        item["servers"] = [{"name": instance_name(server), "uuid": str(server.uuid)} for server in servers]
    elif with_servers and version >= (2, 75):
        item["servers"] = []
    return item


def hypervisor_list_body(
    request: ComputeRequest,
    nodes: Iterable[ComputeNode],
    detail: bool = False,
    with_servers: bool = False,
    paged: bool = False,
    usages: Mapping[int, Mapping[str, int]] | None = None,
    servers: Mapping[str, Sequence[Server]] | None = None,
) -> dict[str, Any]:
    """The nodes; when ``paged`` and the page is full (as long as the limit
    asked for), Nova's hypervisors_links with a next link. ``usages``: node
    id -> usage now; ``servers``: host -> its servers."""
    usages, servers = usages or {}, servers or {}
    items = [
        hypervisor(node, request.version, detail, with_servers, usages.get(node.id), servers.get(node.host))
        for node in nodes
    ]
    body: dict[str, Any] = {"hypervisors": items}
    links = _next_link(request, items, detail) if paged else None
    if links:
        body["hypervisors_links"] = links
    return body


def _next_link(
    request: ComputeRequest, items: Sequence[Mapping[str, Any]], detail: bool
) -> list[dict[str, str]] | None:
    limit = request.query_params.get("limit")
    if not limit or int(limit) != len(items):
        return None
    params = request.query_params.copy()
    params["marker"] = str(items[-1]["id"])
    collection = "os-hypervisors/detail" if detail else "os-hypervisors"
    return [{"rel": "next", "href": f"{public_base(request)}/compute/v2.1/{collection}?{params.urlencode()}"}]


def hypervisor_body(
    node: ComputeNode,
    version: APIVersion,
    with_servers: bool = False,
    usage: Mapping[str, int] | None = None,
    servers: Sequence[Server] | None = None,
) -> dict[str, dict[str, Any]]:
    return {"hypervisor": hypervisor(node, version, True, with_servers, usage, servers)}


def hypervisor_uptime_body(node: ComputeNode, uptime: str, version: APIVersion) -> dict[str, dict[str, Any]]:
    return {"hypervisor": {**hypervisor(node, version), "uptime": uptime}}


def hypervisor_statistics_body(statistics: Mapping[str, int]) -> dict[str, Mapping[str, int]]:
    return {"hypervisor_statistics": statistics}


# --- /os-host-registrations (Corral) -------------------------------------------------------


def registration_body(node: ComputeNode, created: bool) -> dict[str, dict[str, Any]]:
    return {
        "registration": {
            "host": node.host,
            "hypervisor_hostname": node.hypervisor_hostname,
            "service_uuid": str(node.service.uuid),
            "compute_node_uuid": str(node.uuid),
            "created": created,
        }
    }
