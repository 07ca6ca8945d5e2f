"""Response bodies of the host domain's routes (``/os-services``,
``/os-hypervisors``, ``/os-host-registrations``), per microversion."""

import json

from aggregates.compute_api.base import isotime, public_base
from aggregates.hosts import services as host_services

# --- /os-services -------------------------------------------------------------------


def service(svc, version):
    """A service as Nova shows it: uuid ids from 2.53, forced_down from 2.11."""
    item = {
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


def service_list_body(services, version):
    return {"services": [service(s, version) for s in services]}


def service_body(svc, version):
    return {"service": service(svc, version)}


def service_action_body(host, binary, fields):
    """The reply to a pre-2.53 action: the service named, and the fields the action set."""
    return {"service": {"host": host, "binary": binary, **fields}}


# --- /os-hypervisors ------------------------------------------------------------------

USAGE_FIELDS = ("vcpus", "memory_mb", "local_gb", "vcpus_used", "memory_mb_used", "local_gb_used")


def hypervisor(node, version, detail=False, with_servers=False):
    """A compute node as Nova shows it: uuid ids from 2.53, cpu_info an object
    from 2.28, usage fields until 2.87 and uptime from 2.88."""
    svc = node.service
    uuid_ids = version >= (2, 53)
    item = {
        "id": str(node.uuid) if uuid_ids else node.id,
        "hypervisor_hostname": node.hypervisor_hostname,
        "state": "up" if svc.is_up else "down",
        "status": "disabled" if svc.disabled else "enabled",
    }
    if detail:
        if version < (2, 88):
            item.update({name: getattr(node, name) for name in USAGE_FIELDS})
            item.update(
                {
                    "free_ram_mb": node.memory_mb - node.memory_mb_used,
                    "free_disk_gb": node.local_gb - node.local_gb_used,
                    "current_workload": node.current_workload,
                    "running_vms": node.running_vms,
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
    # Corral tracks no servers: Nova shows the key only when the list is
    # not empty, or, from 2.75, whenever with_servers was asked for.
    if with_servers and version >= (2, 75):
        item["servers"] = []
    return item


def hypervisor_list_body(request, nodes, detail=False, with_servers=False, paged=False):
    """The nodes; when ``paged`` and the page is full (as long as the limit
    asked for), Nova's hypervisors_links with a next link."""
    items = [hypervisor(node, request.version, detail, with_servers) for node in nodes]
    body = {"hypervisors": items}
    links = _next_link(request, items, detail) if paged else None
    if links:
        body["hypervisors_links"] = links
    return body


def _next_link(request, items, detail):
    limit = request.query_params.get("limit")
    if not limit or int(limit) != len(items):
        return None
    params = request.query_params.copy()
    params["marker"] = str(items[-1]["id"])
    collection = "os-hypervisors/detail" if detail else "os-hypervisors"
    return [{"rel": "next", "href": f"{public_base(request)}/compute/v2.1/{collection}?{params.urlencode()}"}]


def hypervisor_body(node, version, with_servers=False):
    return {"hypervisor": hypervisor(node, version, detail=True, with_servers=with_servers)}


def hypervisor_uptime_body(node, uptime, version):
    return {"hypervisor": {**hypervisor(node, version), "uptime": uptime}}


def hypervisor_statistics_body(statistics):
    return {"hypervisor_statistics": statistics}


# --- /os-host-registrations (Corral) -------------------------------------------------------


def registration_body(node, created):
    return {
        "registration": {
            "host": node.host,
            "hypervisor_hostname": node.hypervisor_hostname,
            "service_uuid": str(node.service.uuid),
            "compute_node_uuid": str(node.uuid),
            "created": created,
        }
    }
