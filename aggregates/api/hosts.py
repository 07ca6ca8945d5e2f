"""The host side of the compute API: ``/os-availability-zone``,
``/os-services``, ``/os-hypervisors`` and Corral's own
``/os-host-registrations``, where host agents register their compute node."""
import json
import uuid

from django.conf import settings
from django.urls import path
from jsonschema import Draft4Validator
from rest_framework.response import Response

from aggregates.services import hosts as host_services
from aggregates.services import zones as zone_services

from . import validation
from .auth import enforce
from .base import ComputeAPIView, isotime, public_base
from .errors import ApiError

MAX_INT = 2147483647
MAX_LIMIT = 1000  # Nova's [api] max_limit

# --- query parameters --------------------------------------------------------

non_negative_integer_query = {"type": "string", "pattern": "^[0-9]*$", "minLength": 1}
boolean_query = {"type": "string", "enum": [v for v in validation.boolean["enum"] if isinstance(v, str)]}


def query_params(request, schemas, strict):
    """The query parameters named in ``schemas`` (the last value of each),
    checked against their schema; with ``strict`` any other name is a 400."""
    validation.validate_query(request.query_params, schemas, strict)
    values = {}
    for name, schema in schemas.items():
        if name not in request.query_params:
            continue
        value = request.query_params.getlist(name)[-1]
        error = next(Draft4Validator(schema, format_checker=validation.format_checker).iter_errors(value), None)
        if error is not None:
            raise ApiError(400, f"Invalid input for query parameters {name}. Value: {value}. {error.message}")
        values[name] = value
    return values


def parse_uuid(value):
    try:
        return uuid.UUID(value)
    except ValueError:
        raise ApiError(400, f"Invalid uuid {value}")


# --- /os-availability-zone ---------------------------------------------------


def _strict_zone_query(request):
    validation.validate_query(request.query_params, (), request.version >= (2, 102))


def _zone_hosts(zone):
    if zone.hosts is None:
        return None
    return {
        host: {
            service.binary: {"available": service.is_up, "active": True, "updated_at": isotime(service.updated_at)}
            for service in services
        }
        for host, services in zone.hosts.items()
    }


class AvailabilityZoneListView(ComputeAPIView):
    def get(self, request):
        _strict_zone_query(request)
        enforce(request, "os_compute_api:os-availability-zone:list")
        zones = [z for z in zone_services.list_availability_zones()
                 if z.name != settings.INTERNAL_SERVICE_AVAILABILITY_ZONE]
        return Response({"availabilityZoneInfo": [
            {"zoneName": z.name, "zoneState": {"available": z.available}, "hosts": None} for z in zones
        ]})


class AvailabilityZoneDetailView(ComputeAPIView):
    def get(self, request):
        _strict_zone_query(request)
        enforce(request, "os_compute_api:os-availability-zone:detail")
        return Response({"availabilityZoneInfo": [
            {"zoneName": z.name, "zoneState": {"available": z.available}, "hosts": _zone_hosts(z)}
            for z in zone_services.list_availability_zones()
        ]})


# --- /os-services ------------------------------------------------------------

SERVICE_ACTION_PROPERTIES = {
    "host": validation.hostname,
    "binary": {"type": "string", "minLength": 1, "maxLength": 255},
    "disabled_reason": {"type": "string", "minLength": 1, "maxLength": 255},
}
SERVICE_ACTION_SCHEMA = {
    "type": "object",
    "properties": SERVICE_ACTION_PROPERTIES,
    "required": ["host", "binary"],
    "additionalProperties": False,
}
SERVICE_ACTION_SCHEMA_V211 = {
    **SERVICE_ACTION_SCHEMA,
    "properties": {**SERVICE_ACTION_PROPERTIES, "forced_down": validation.boolean},
}
SERVICE_UPDATE_SCHEMA_V253 = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["enabled", "disabled"]},
        "disabled_reason": {"type": "string", "minLength": 1, "maxLength": 255},
        "forced_down": validation.boolean,
    },
    "additionalProperties": False,
}


def service_view(service, version):
    item = {
        "binary": service.binary,
        "host": service.host,
        "id": str(service.uuid) if version >= (2, 53) else service.id,
        "zone": service.availability_zone,
        "status": "disabled" if service.disabled else "enabled",
        "state": "up" if service.is_up else "down",
        "updated_at": isotime(service.updated_at),
        "disabled_reason": service.disabled_reason,
    }
    if version >= (2, 11):
        item["forced_down"] = service.forced_down
    return item


def _enable(body):
    return {"disabled": False, "disabled_reason": None}, {"status": "enabled"}


def _disable(body):
    return {"disabled": True, "disabled_reason": None}, {"status": "disabled"}


def _disable_log_reason(body):
    if "disabled_reason" not in body:
        raise ApiError(400, "Missing disabled reason field")
    reason = body["disabled_reason"]
    return {"disabled": True, "disabled_reason": reason}, {"status": "disabled", "disabled_reason": reason}


def _force_down(body):
    if "forced_down" not in body:
        raise ApiError(400, "Missing forced_down field")
    forced_down = validation.to_bool(body["forced_down"])
    return {"forced_down": forced_down}, {"forced_down": forced_down}


# Before 2.53 the path names an action: (changes to save, fields of the reply).
SERVICE_ACTIONS = {"enable": _enable, "disable": _disable, "disable-log-reason": _disable_log_reason}
SERVICE_ACTIONS_V211 = {**SERVICE_ACTIONS, "force-down": _force_down}


class ServiceListView(ComputeAPIView):
    def get(self, request):
        params = query_params(request, {"host": {"type": "string"}, "binary": {"type": "string"}},
                              strict=request.version >= (2, 75))
        enforce(request, "os_compute_api:os-services:list")
        services = host_services.list_services(host=params.get("host"), binary=params.get("binary"))
        return Response({"services": [service_view(s, request.version) for s in services]})


class ServiceDetailView(ComputeAPIView):
    def put(self, request, service_ref):
        if request.version >= (2, 53):
            return self._update(request, service_ref)
        return self._action(request, service_ref)

    def _action(self, request, action):
        v211 = request.version >= (2, 11)
        body = validation.validate(self.body(request), SERVICE_ACTION_SCHEMA_V211 if v211 else SERVICE_ACTION_SCHEMA)
        caller = enforce(request, "os_compute_api:os-services:update")
        perform = (SERVICE_ACTIONS_V211 if v211 else SERVICE_ACTIONS).get(action)
        if perform is None:
            raise ApiError(404, "Unknown action")
        changes, reply = perform(body)
        host_services.update_service_by_host(caller, body["host"], body["binary"], changes)
        return Response({"service": {"host": body["host"], "binary": body["binary"], **reply}})

    def _update(self, request, service_ref):
        body = validation.validate(self.body(request), SERVICE_UPDATE_SCHEMA_V253)
        service_uuid = parse_uuid(service_ref)
        caller = enforce(request, "os_compute_api:os-services:update")
        forced_down = body.get("forced_down")
        service = host_services.update_service(
            caller, service_uuid, status=body.get("status"), disabled_reason=body.get("disabled_reason"),
            forced_down=None if forced_down is None else validation.to_bool(forced_down),
        )
        return Response({"service": service_view(service, request.version)})

    def delete(self, request, service_ref):
        caller = enforce(request, "os_compute_api:os-services:delete")
        if request.version >= (2, 53):
            service_ref = parse_uuid(service_ref)
        else:
            service_ref = validation.path_int(service_ref, "Invalid input received: id must be an integer")
        host_services.delete_service(caller, service_ref)
        return Response(status=204)


# --- /os-hypervisors ---------------------------------------------------------

USAGE_FIELDS = ("vcpus", "memory_mb", "local_gb", "vcpus_used", "memory_mb_used", "local_gb_used")


def hypervisor_view(node, version, detail=False, with_servers=False):
    service = node.service
    uuid_ids = version >= (2, 53)
    item = {
        "id": str(node.uuid) if uuid_ids else node.id,
        "hypervisor_hostname": node.hypervisor_hostname,
        "state": "up" if service.is_up else "down",
        "status": "disabled" if service.disabled else "enabled",
    }
    if detail:
        if version < (2, 88):
            item.update({name: getattr(node, name) for name in USAGE_FIELDS})
            item.update({
                "free_ram_mb": node.memory_mb - node.memory_mb_used,
                "free_disk_gb": node.local_gb - node.local_gb_used,
                "current_workload": node.current_workload,
                "running_vms": node.running_vms,
                "disk_available_least": node.disk_available_least,
                "cpu_info": (node.cpu_info or {}) if version >= (2, 28) else json.dumps(node.cpu_info or {}),
            })
        item.update({
            "hypervisor_type": node.hypervisor_type,
            "hypervisor_version": node.hypervisor_version,
            "host_ip": node.host_ip,
            "service": {"id": str(service.uuid) if uuid_ids else service.id, "host": node.host,
                        "disabled_reason": service.disabled_reason},
        })
        if version >= (2, 88):
            item["uptime"] = host_services.uptime_of(node)
    # Corral tracks no servers: Nova shows the key only when the list is
    # not empty, or, from 2.75, whenever with_servers was asked for.
    if with_servers and version >= (2, 75):
        item["servers"] = []
    return item


def hypervisor_ref(request, value):
    """The node id of a path: before 2.53 an integer (else 404), from 2.53 a uuid (else 400)."""
    if request.version >= (2, 53):
        return parse_uuid(value)
    try:
        return validation.path_int(value)
    except ApiError:
        raise ApiError(404, f"Hypervisor with ID '{value}' could not be found.")


HYPERVISOR_LIST_QUERY = {"limit": non_negative_integer_query, "marker": {"type": "string"}}
HYPERVISOR_LIST_QUERY_V253 = {**HYPERVISOR_LIST_QUERY, "hypervisor_hostname_pattern": validation.hostname,
                              "with_servers": boolean_query}


def _next_link(request, items, detail):
    """Nova's hypervisors_links: a next link when a page is full."""
    limit = request.query_params.get("limit")
    if not limit or int(limit) != len(items):
        return None
    params = request.query_params.copy()
    params["marker"] = str(items[-1]["id"])
    collection = "os-hypervisors/detail" if detail else "os-hypervisors"
    return [{"rel": "next", "href": f"{public_base(request)}/compute/v2.1/{collection}?{params.urlencode()}"}]


class HypervisorListView(ComputeAPIView):
    detail = False

    def get(self, request):
        version = request.version
        paging = version >= (2, 33)
        if version >= (2, 53):
            params = query_params(request, HYPERVISOR_LIST_QUERY_V253, strict=True)
        else:
            params = query_params(request, HYPERVISOR_LIST_QUERY if paging else {}, strict=False)
        enforce(request, "os_compute_api:os-hypervisors:list-detail" if self.detail
                else "os_compute_api:os-hypervisors:list")
        pattern = params.get("hypervisor_hostname_pattern")
        if pattern is not None:
            if "limit" in params or "marker" in params:
                raise ApiError(400, "Paging over hypervisors with the hypervisor_hostname_pattern query "
                                    "parameter is not supported.")
            nodes = host_services.search_compute_nodes(pattern)
        else:
            # From 2.33 a page holds at most MAX_LIMIT nodes; limit=0 means the maximum.
            limit = min(int(params.get("limit", 0)) or MAX_LIMIT, MAX_LIMIT) if paging else None
            nodes = host_services.list_compute_nodes(limit=limit, marker=params.get("marker"))
        with_servers = validation.to_bool(params.get("with_servers", False))
        items = [hypervisor_view(node, version, self.detail, with_servers) for node in nodes]
        body = {"hypervisors": items}
        links = _next_link(request, items, self.detail) if paging and pattern is None else None
        if links:
            body["hypervisors_links"] = links
        return Response(body)


class HypervisorDetailListView(HypervisorListView):
    detail = True


class HypervisorView(ComputeAPIView):
    def get(self, request, node_ref):
        v253 = request.version >= (2, 53)
        params = query_params(request, {"with_servers": boolean_query} if v253 else {}, strict=v253)
        enforce(request, "os_compute_api:os-hypervisors:show")
        node = host_services.get_compute_node(hypervisor_ref(request, node_ref))
        with_servers = validation.to_bool(params.get("with_servers", False))
        return Response({"hypervisor": hypervisor_view(node, request.version, True, with_servers)})


class HypervisorUptimeView(ComputeAPIView):
    max_version = (2, 87)

    def get(self, request, node_ref):
        enforce(request, "os_compute_api:os-hypervisors:uptime")
        node, uptime = host_services.compute_node_uptime(hypervisor_ref(request, node_ref))
        return Response({"hypervisor": {**hypervisor_view(node, request.version), "uptime": uptime}})


class HypervisorStatisticsView(ComputeAPIView):
    max_version = (2, 87)

    def get(self, request):
        enforce(request, "os_compute_api:os-hypervisors:statistics")
        return Response({"hypervisor_statistics": host_services.compute_node_statistics()})


class HypervisorSearchView(ComputeAPIView):
    """``/{pattern}/search`` and ``/{pattern}/servers``, replaced at 2.53 by query parameters."""

    max_version = (2, 52)
    policy = "os_compute_api:os-hypervisors:search"

    def get(self, request, pattern):
        enforce(request, self.policy)
        nodes = host_services.search_compute_nodes(pattern)
        return Response({"hypervisors": [hypervisor_view(node, request.version) for node in nodes]})


class HypervisorServersView(HypervisorSearchView):
    policy = "os_compute_api:os-hypervisors:servers"


# --- /os-host-registrations (Corral) ----------------------------------------


def _count(minimum=0):
    return {"type": "integer", "minimum": minimum, "maximum": MAX_INT}


# Placement's bounds of an inventory's allocation ratio.
ALLOCATION_RATIO = {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 3.40282e38}


REGISTRATION_SCHEMA = {
    "type": "object",
    "properties": {
        "registration": {
            "type": "object",
            "properties": {
                "host": validation.hostname,
                "hypervisor_hostname": validation.hostname,
                "vcpus": _count(),
                "memory_mb": _count(),
                "local_gb": _count(),
                "hypervisor_type": validation.name,
                "hypervisor_version": _count(),
                "host_ip": {"type": "string", "oneOf": [{"format": "ipv4"}, {"format": "ipv6"}]},
                "running_vms": _count(),
                "cpu_info": {"type": "object"},
                "uptime": {"type": "string", "minLength": 1, "maxLength": 255},
                # Per-host placement inventory settings (default: the settings of the same names).
                "cpu_allocation_ratio": ALLOCATION_RATIO,
                "ram_allocation_ratio": ALLOCATION_RATIO,
                "disk_allocation_ratio": ALLOCATION_RATIO,
                "reserved_host_cpus": _count(),
                "reserved_host_memory_mb": _count(),
                "reserved_host_disk_mb": _count(),
            },
            "required": ["host", "vcpus", "memory_mb", "local_gb"],
            "additionalProperties": False,
        }
    },
    "required": ["registration"],
    "additionalProperties": False,
}


class HostRegistrationView(ComputeAPIView):
    def post(self, request):
        registration = validation.validate(self.body(request), REGISTRATION_SCHEMA)["registration"]
        caller = enforce(request, "os_compute_api:os-host-registrations:create")
        details = {key: value for key, value in registration.items() if key not in ("host", "hypervisor_hostname")}
        node, created = host_services.register_host(
            caller, registration["host"], registration.get("hypervisor_hostname"), **details)
        return Response({"registration": {
            "host": node.host,
            "hypervisor_hostname": node.hypervisor_hostname,
            "service_uuid": str(node.service.uuid),
            "compute_node_uuid": str(node.uuid),
            "created": created,
        }}, status=201 if created else 200)


urlpatterns = [
    path("os-availability-zone", AvailabilityZoneListView.as_view()),
    path("os-availability-zone/detail", AvailabilityZoneDetailView.as_view()),
    path("os-services", ServiceListView.as_view()),
    path("os-services/<str:service_ref>", ServiceDetailView.as_view()),
    path("os-hypervisors", HypervisorListView.as_view()),
    path("os-hypervisors/detail", HypervisorDetailListView.as_view()),
    path("os-hypervisors/statistics", HypervisorStatisticsView.as_view()),
    path("os-hypervisors/<str:node_ref>", HypervisorView.as_view()),
    path("os-hypervisors/<str:node_ref>/uptime", HypervisorUptimeView.as_view()),
    path("os-hypervisors/<str:pattern>/search", HypervisorSearchView.as_view()),
    path("os-hypervisors/<str:pattern>/servers", HypervisorServersView.as_view()),
    path("os-host-registrations", HostRegistrationView.as_view()),
]
