"""Response bodies of ``/servers``, per microversion (Nova's views/servers.py)."""

import uuid
from collections.abc import Sequence
from datetime import datetime
from hashlib import sha224
from typing import Any
from urllib.parse import urlencode

from aggregates.addressing import services as addressing
from aggregates.compute_api.auth import allowed
from aggregates.compute_api.base import isotime
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.identity.caller import Caller
from aggregates.scheduling.api import POLICY as EXPLAIN_POLICY
from aggregates.server_groups import services as server_groups
from aggregates.servers import services as service
from aggregates.servers import usage
from aggregates.servers.models import InstanceAction, Server, sanitized_hostname, status_of
from config.public_url import public_base

PROGRESS_STATUSES = ("ACTIVE", "BUILD", "REBUILD", "RESIZE", "VERIFY_RESIZE", "MIGRATING")
FAULT_STATUSES = ("ERROR", "DELETED")


def nova_time(value: datetime | None) -> str | None:
    """utils.isotime: seconds and a Z."""
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def host_id(server: Server) -> str:
    if not server.host:
        return ""
    return sha224((server.project_id + server.host).encode("utf-8")).hexdigest()


def instance_name(server: Server) -> str:
    return f"instance-{server.id:08x}"


def hostname_of(server: Server) -> str:
    """The server's hostname: as given, else Nova's sanitized display name."""
    return server.hostname or sanitized_hostname(server.name, server.uuid)


def tags_of(server: Server) -> list[str]:
    """The server's tags, sorted (read from the prefetched rows when there are)."""
    return sorted(row.tag for row in server.tag_rows.all())


def server_links(request: ComputeRequest, server_uuid: uuid.UUID) -> list[dict[str, str]]:
    base = public_base(request)
    return [
        {"rel": "self", "href": f"{base}/compute/v2.1/servers/{server_uuid}"},
        {"rel": "bookmark", "href": f"{base}/compute/servers/{server_uuid}"},
    ]


def decision_link(request: ComputeRequest, server: Server, caller: Caller) -> str | None:
    """The ``Link`` header of a server show naming the stored explanation of
    the server's scheduling (Corral's own os-scheduler-explain), for callers
    that may read it; None otherwise. Nova's body itself carries nothing of
    Corral's."""
    if server.decision_id is None or server.decision is None or not allowed(caller, EXPLAIN_POLICY):
        return None
    href = f"{public_base(request)}/compute/v2.1/os-scheduler-explain/{server.decision.uuid}"
    return f'<{href}>; rel="related"; title="scheduling decision"'


def _image(request: ComputeRequest, server: Server) -> dict[str, Any] | str:
    if not server.image_id:
        return ""
    image: dict[str, Any] = {
        "id": server.image_id,
        "links": [{"rel": "bookmark", "href": f"{public_base(request)}/compute/images/{server.image_id}"}],
    }
    if request.version >= (2, 98):
        image["properties"] = {}
    return image


def _flavor(request: ComputeRequest, server: Server) -> dict[str, Any]:
    snapshot = server.flavor or {}
    if request.version >= (2, 47):
        return {
            "vcpus": snapshot.get("vcpus"),
            "ram": snapshot.get("ram"),
            "disk": snapshot.get("disk"),
            "ephemeral": snapshot.get("ephemeral", 0),
            "swap": snapshot.get("swap", 0),
            "original_name": snapshot.get("original_name"),
            "extra_specs": snapshot.get("extra_specs", {}),
        }
    base = public_base(request)
    return {"id": server.flavorid, "links": [{"rel": "bookmark", "href": f"{base}/compute/flavors/{server.flavorid}"}]}


def _fault(server: Server, is_admin: bool) -> dict[str, Any] | None:
    fault = server.fault
    if not fault:
        return None
    body: dict[str, Any] = {
        "code": fault.get("code", 500),
        "created": fault.get("created"),
        "message": fault.get("message", ""),
    }
    if fault.get("details") and (is_admin or body["code"] != 500):
        body["details"] = fault["details"]
    return body


def _scheduler_hints(server: Server) -> dict[str, list[Any]]:
    hints = server.scheduler_hints or {}
    return {key: value if isinstance(value, list) else [value] for key, value in hints.items()}


def _extended(request: ComputeRequest, server: Server, is_admin: bool, body: dict[str, Any]) -> None:
    """The keys Nova's view adds to a full server (show, lists, an update from 2.75)."""
    body["OS-EXT-AZ:availability_zone"] = server.availability_zone or ""
    body["config_drive"] = server.config_drive
    body["key_name"] = None
    body["OS-SRV-USG:launched_at"] = isotime(server.launched_at)
    body["OS-SRV-USG:terminated_at"] = isotime(server.terminated_at)
    if is_admin:
        body["OS-EXT-SRV-ATTR:host"] = server.host
        body["OS-EXT-SRV-ATTR:instance_name"] = instance_name(server)
        body["OS-EXT-SRV-ATTR:hypervisor_hostname"] = server.node
        if request.version >= (2, 3):
            body.update(
                {
                    "OS-EXT-SRV-ATTR:hostname": hostname_of(server),
                    "OS-EXT-SRV-ATTR:kernel_id": "",
                    "OS-EXT-SRV-ATTR:launch_index": server.launch_index,
                    "OS-EXT-SRV-ATTR:ramdisk_id": "",
                    "OS-EXT-SRV-ATTR:reservation_id": server.reservation_id,
                    "OS-EXT-SRV-ATTR:root_device_name": None,
                    "OS-EXT-SRV-ATTR:user_data": None,
                }
            )
    body["OS-EXT-STS:task_state"] = server.task_state
    body["OS-EXT-STS:vm_state"] = server.vm_state
    body["OS-EXT-STS:power_state"] = server.power_state
    body["os-extended-volumes:volumes_attached"] = []


def server_detail(
    request: ComputeRequest,
    server: Server,
    caller: Caller,
    host_statuses: dict[str, str] | None = None,
    show_server_groups: bool = False,
    full: bool = True,
) -> dict[str, Any]:
    """A server as Nova's view shows it; not ``full`` (an update's answer
    before 2.75): without the zone, config drive, key, usage, extended
    attributes, states, volumes, host status and pinned zone."""
    version = request.version
    is_admin = service.sees_all_servers(caller)
    status = status_of(server)
    extra = server.build_request or {}
    body: dict[str, Any] = {
        "accessIPv4": server.access_ip_v4,
        "accessIPv6": server.access_ip_v6,
        "addresses": addressing.addresses_of(server),
        "created": nova_time(server.created_at),
        "flavor": _flavor(request, server),
        "hostId": host_id(server),
        "id": str(server.uuid),
        "image": _image(request, server),
        "links": server_links(request, server.uuid),
        "metadata": server.metadata or {},
        "name": server.name,
        "status": status,
        "tenant_id": server.project_id or "",
        "user_id": server.user_id or "",
        "updated": nova_time(server.updated_at),
        "OS-DCF:diskConfig": "MANUAL",
    }
    if status in FAULT_STATUSES:
        fault = _fault(server, is_admin)
        if fault:
            body["fault"] = fault
    if status in PROGRESS_STATUSES:
        body["progress"] = 0
    if full:
        _extended(request, server, is_admin, body)
    if version >= (2, 9):
        body["locked"] = server.locked
    if version >= (2, 16) and is_admin and full:
        statuses = host_statuses if host_statuses is not None else service.host_statuses([server])
        body["host_status"] = statuses.get(server.host, "UNKNOWN") if server.host else ""
    if version >= (2, 19):
        body["description"] = server.description
    if version >= (2, 26):
        body["tags"] = tags_of(server)
    if version >= (2, 63):
        body["trusted_image_certificates"] = extra.get("trusted_image_certificates")
    if show_server_groups and version >= (2, 71):
        group = server_groups.groups_of_servers([str(server.uuid)]).get(str(server.uuid))
        body["server_groups"] = [group] if group else []
    if version >= (2, 73):
        body["locked_reason"] = server.locked_reason
    if version >= (2, 90) and not (is_admin and full):
        body["OS-EXT-SRV-ATTR:hostname"] = hostname_of(server)
    if version >= (2, 96) and full:
        body["pinned_availability_zone"] = server.pinned_availability_zone
    if version >= (2, 100):
        body["scheduler_hints"] = _scheduler_hints(server)
    return body


def server_body(request: ComputeRequest, server: Server, caller: Caller) -> dict[str, dict[str, Any]]:
    return {"server": server_detail(request, server, caller, show_server_groups=True)}


def update_body(request: ComputeRequest, server: Server, caller: Caller) -> dict[str, dict[str, Any]]:
    """PUT /servers/{id}'s answer: the full server from 2.75, Nova's short view before."""
    full = request.version >= (2, 75)
    return {"server": server_detail(request, server, caller, show_server_groups=True, full=full)}


def server_brief(request: ComputeRequest, server: Server) -> dict[str, Any]:
    return {"id": str(server.uuid), "name": server.name, "links": server_links(request, server.uuid)}


def server_list_body(
    request: ComputeRequest,
    servers: Sequence[Server],
    caller: Caller,
    detail: bool,
    limit: int | None,
    max_limit: int,
) -> dict[str, Any]:
    """A page of servers, with servers_links next when it is as long as the
    limit asked for (or the maximum)."""
    if detail:
        statuses = service.host_statuses(servers) if service.sees_all_servers(caller) else {}
        items = [server_detail(request, server, caller, statuses) for server in servers]
    else:
        items = [server_brief(request, server) for server in servers]
    body: dict[str, Any] = {"servers": items}
    page = max_limit if limit is None or limit > max_limit else limit
    if servers and page == len(servers):
        params = dict(sorted(request.query_params.items()))
        params["marker"] = str(servers[-1].uuid)
        collection = "servers/detail" if detail else "servers"
        body["servers_links"] = [
            {"rel": "next", "href": f"{public_base(request)}/compute/v2.1/{collection}?{urlencode(params)}"}
        ]
    return body


def create_body(
    request: ComputeRequest,
    created: service.CreatedServers,
    security_groups: list[dict[str, Any]] | None,
    admin_password: str | None,
) -> dict[str, dict[str, Any]]:
    server = created.servers[0]
    body: dict[str, dict[str, Any]] = {
        "server": {
            "id": str(server.uuid),
            "links": server_links(request, server.uuid),
            "OS-DCF:diskConfig": "MANUAL",
            "security_groups": security_groups or [{"name": "default"}],
        }
    }
    if admin_password is not None:
        body["server"]["adminPass"] = admin_password
    return body


def reservation_body(created: service.CreatedServers) -> dict[str, str]:
    return {"reservation_id": created.reservation_id}


# --- instance actions (Nova's instance_actions controller) ----------------------------

ACTION_KEYS = ("action", "instance_uuid", "request_id", "user_id", "project_id", "start_time", "message")


def _action(request: ComputeRequest, action: InstanceAction, server: Server) -> dict[str, Any]:
    body: dict[str, Any] = {
        "action": action.action,
        "instance_uuid": str(server.uuid),
        "request_id": action.request_id,
        "user_id": action.user_id,
        "project_id": action.project_id,
        "start_time": isotime(action.start_time),
        "message": action.message,
    }
    if request.version >= (2, 58):
        body["updated_at"] = isotime(action.updated_at)
    return body


def _generated_host_id(host: str | None, project_id: str) -> str:
    return sha224((project_id + host).encode("utf-8")).hexdigest() if host else ""


def action_list_body(
    request: ComputeRequest, server_uuid: str, actions: Sequence[InstanceAction], limit: int | None, max_limit: int
) -> dict[str, Any]:
    """The list, with a next link from 2.58 when the page is as long as the limit."""
    body: dict[str, Any] = {"instanceActions": [_action(request, item, item.server) for item in actions]}
    page = max_limit if limit is None or limit > max_limit else limit
    if request.version >= (2, 58) and actions and page == len(actions):
        params = dict(sorted(request.query_params.items()))
        params["marker"] = actions[-1].request_id
        href = f"{public_base(request)}/compute/v2.1/servers/{server_uuid}/os-instance-actions?{urlencode(params)}"
        body["links"] = [{"rel": "next", "href": href}]
    return body


def action_body(request: ComputeRequest, action: InstanceAction, caller: Caller) -> dict[str, Any]:
    """One action: its events for admins always (with traceback, host from
    2.62), for others from 2.51 (without them); hostId from 2.62, details
    for admins from 2.84."""
    version = request.version
    server = action.server
    body = _action(request, action, server)
    is_admin = caller.is_admin
    if not (is_admin or version >= (2, 51)):
        return {"instanceAction": body}
    project_id = action.project_id or server.project_id
    events = []
    for row in action.events.all():
        event: dict[str, Any] = {
            "event": row.event,
            "start_time": isotime(row.start_time),
            "finish_time": isotime(row.finish_time),
            "result": row.result,
        }
        if is_admin:
            event["traceback"] = row.traceback
            if version >= (2, 62):
                event["host"] = row.host
        if version >= (2, 62):
            event["hostId"] = _generated_host_id(row.host, project_id)
        if is_admin and version >= (2, 84):
            event["details"] = row.details
        events.append(event)
    body["events"] = events
    return {"instanceAction": body}


# --- usage (Nova's views/usages.py and the usage controllers' bodies) ------------------


def _server_usage(item: usage.ServerUsage) -> dict[str, Any]:
    return {
        "hours": item.hours,
        "flavor": item.flavor,
        "instance_id": str(item.server.uuid),
        "name": item.server.name,
        "tenant_id": item.server.project_id,
        "memory_mb": item.memory_mb,
        "local_gb": item.local_gb,
        "vcpus": item.vcpus,
        "started_at": isotime(item.started_at),
        "ended_at": isotime(item.ended_at),
        "state": item.state,
        "uptime": item.uptime,
    }


def _tenant_usage(tenant: usage.TenantUsage, detailed: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"tenant_id": tenant.tenant_id}
    if detailed:
        body["server_usages"] = [_server_usage(item) for item in tenant.servers]
    body |= {
        "total_local_gb_usage": tenant.total_local_gb_usage,
        "total_vcpus_usage": tenant.total_vcpus_usage,
        "total_memory_mb_usage": tenant.total_memory_mb_usage,
        "total_hours": tenant.total_hours,
        "start": isotime(tenant.start),
        "stop": isotime(tenant.stop),
    }
    return body


def _usage_links(request: ComputeRequest, found: usage.Usage, collection: str, max_limit: int) -> list[dict[str, str]]:
    """Nova's next link: when the page is as long as the limit asked for (or the maximum)."""
    try:
        page = min(int(request.query_params.get("limit", max_limit)), max_limit)
    except ValueError:
        page = max_limit
    if not page or page != len(found.servers):
        return []
    params = dict(sorted(request.query_params.items()))
    params["marker"] = str(found.servers[-1].server.uuid)
    return [{"rel": "next", "href": f"{public_base(request)}/compute/v2.1/{collection}?{urlencode(params)}"}]


def tenant_usages_body(request: ComputeRequest, found: usage.Usage, detailed: bool, max_limit: int) -> dict[str, Any]:
    body: dict[str, Any] = {"tenant_usages": [_tenant_usage(tenant, detailed) for tenant in found.tenants]}
    if request.version >= (2, 40):
        links = _usage_links(request, found, "os-simple-tenant-usage", max_limit)
        if links:
            body["tenant_usages_links"] = links
    return body


def tenant_usage_body(request: ComputeRequest, found: usage.Usage, tenant_id: str, max_limit: int) -> dict[str, Any]:
    body: dict[str, Any] = {"tenant_usage": _tenant_usage(found.tenants[0], True) if found.tenants else {}}
    if request.version >= (2, 40):
        links = _usage_links(request, found, f"os-simple-tenant-usage/{tenant_id}", max_limit)
        if links:
            body["tenant_usage_links"] = links
    return body


def audit_log_body(log: usage.AuditLog) -> dict[str, Any]:
    """Nova's report when no host has run the audit in the period."""
    hosts = len(log.hosts)
    done = "ALL" if hosts == 0 else f"0 of {hosts}"
    return {
        "period_beginning": str(log.period_beginning),
        "period_ending": str(log.period_ending),
        "num_hosts": hosts,
        "num_hosts_done": 0,
        "num_hosts_running": 0,
        "num_hosts_not_run": hosts,
        "hosts_not_run": list(log.hosts),
        "total_instances": 0,
        "total_errors": 0,
        "overall_status": f"{done} hosts done. 0 errors.",
        "log": {},
    }
