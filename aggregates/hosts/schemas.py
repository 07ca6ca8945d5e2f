"""Request schemas of the host domain's routes (``/os-services``,
``/os-hypervisors``, ``/os-host-registrations``): bodies and query strings,
by the microversion that introduced each shape.

Not API layer: ``manage.py register_host`` checks its arguments with
``REGISTRATION``, as the API checks a host agent's body."""

from typing import Any

from aggregates.value_schemas import (
    MAX_INT,
    boolean,
    boolean_query,
    hostname,
    name,
    non_negative_integer_query,
    query,
)

# --- /os-services -------------------------------------------------------------------

DISABLED_REASON = {"type": "string", "minLength": 1, "maxLength": 255}

# Before 2.53: PUT /os-services/{action} names the service by host and binary.
_SERVICE_ACTION_PROPERTIES = {
    "host": hostname,
    "binary": {"type": "string", "minLength": 1, "maxLength": 255},
    "disabled_reason": DISABLED_REASON,
}
SERVICE_ACTION = {
    "type": "object",
    "properties": _SERVICE_ACTION_PROPERTIES,
    "required": ["host", "binary"],
    "additionalProperties": False,
}
SERVICE_ACTION_V2_11 = {
    **SERVICE_ACTION,
    "properties": {**_SERVICE_ACTION_PROPERTIES, "forced_down": boolean},
}
# From 2.53: PUT /os-services/{uuid}.
SERVICE_UPDATE_V2_53 = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["enabled", "disabled"]},
        "disabled_reason": DISABLED_REASON,
        "forced_down": boolean,
    },
    "additionalProperties": False,
}


def service_action(version: tuple[int, int]) -> dict[str, Any]:
    """forced_down from 2.11."""
    return SERVICE_ACTION_V2_11 if version >= (2, 11) else SERVICE_ACTION


SERVICE_LIST_QUERY = query({"host": {"type": "string"}, "binary": {"type": "string"}})
SERVICE_LIST_QUERY_V2_75 = query(SERVICE_LIST_QUERY["properties"], strict=True)


def service_list_query(version: tuple[int, int]) -> dict[str, Any]:
    """Strict from 2.75."""
    return SERVICE_LIST_QUERY_V2_75 if version >= (2, 75) else SERVICE_LIST_QUERY


# --- /os-hypervisors ------------------------------------------------------------------

HYPERVISOR_LIST_QUERY = query()
HYPERVISOR_LIST_QUERY_V2_33 = query({"limit": non_negative_integer_query, "marker": {"type": "string"}})
HYPERVISOR_LIST_QUERY_V2_53 = query(
    {
        **HYPERVISOR_LIST_QUERY_V2_33["properties"],
        "hypervisor_hostname_pattern": hostname,
        "with_servers": boolean_query,
    },
    strict=True,
)


def hypervisor_list_query(version: tuple[int, int]) -> dict[str, Any]:
    """Paging from 2.33; strict, with the hostname pattern and with_servers, from 2.53."""
    if version >= (2, 53):
        return HYPERVISOR_LIST_QUERY_V2_53
    if version >= (2, 33):
        return HYPERVISOR_LIST_QUERY_V2_33
    return HYPERVISOR_LIST_QUERY


HYPERVISOR_SHOW_QUERY = query()
HYPERVISOR_SHOW_QUERY_V2_53 = query({"with_servers": boolean_query}, strict=True)


def hypervisor_show_query(version: tuple[int, int]) -> dict[str, Any]:
    """Strict, with with_servers, from 2.53."""
    return HYPERVISOR_SHOW_QUERY_V2_53 if version >= (2, 53) else HYPERVISOR_SHOW_QUERY


# --- /os-host-registrations (Corral) -------------------------------------------------------


def _count(minimum: int = 0) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum, "maximum": MAX_INT}


# Placement's bounds of an inventory's allocation ratio.
ALLOCATION_RATIO = {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 3.40282e38}

REGISTRATION = {
    "type": "object",
    "properties": {
        "registration": {
            "type": "object",
            "properties": {
                "host": hostname,
                "hypervisor_hostname": hostname,
                "vcpus": _count(),
                "memory_mb": _count(),
                "local_gb": _count(),
                "hypervisor_type": name,
                "hypervisor_version": _count(),
                "host_ip": {"type": "string", "oneOf": [{"format": "ipv4"}, {"format": "ipv6"}]},
                "running_vms": _count(),
                "cpu_info": {"type": "object"},
                "uptime": {"type": "string", "minLength": 1, "maxLength": 255},
                # The host agent's base URL (image pre-caching requests go there).
                "agent_url": {"type": "string", "pattern": "^https?://[^\\s/?#]+(/[^\\s]*)?$", "maxLength": 255},
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
