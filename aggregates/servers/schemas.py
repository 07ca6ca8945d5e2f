"""Request schemas of ``/servers``: the create body per microversion (Nova's
``create``, ``create_v219`` ... ``create_v294`` in schemas/servers.py) and the
list query strings (strict from 2.75).

Not API layer: plain JSON schemas, checked with aggregates.schema_check."""

import copy
from typing import Any

from aggregates import value_schemas
from aggregates.value_schemas import MAX_INT, boolean, name, non_negative_integer_query, query

MAX_TAG_LENGTH = 60
MAX_TAG_COUNT = 50

_uuid = {"type": "string", "format": "uuid"}
# Nova's positive_integer; Corral also bounds it to a 32-bit column (as the sizes of flavors).
_positive_integer = {
    "type": ["integer", "string"],
    "pattern": "^[0-9]*$",
    "minimum": 1,
    "maximum": MAX_INT,
    "minLength": 1,
}
_ip_address = {"type": "string", "oneOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
_tag = {"type": "string", "pattern": "^[^,/]*$", "minLength": 1, "maxLength": MAX_TAG_LENGTH}
TAG = _tag
_fqdn = {"type": "string", "pattern": "^[a-zA-Z0-9-._]*$", "minLength": 1, "maxLength": 255}
_hostname = {"type": "string", "pattern": "^[a-zA-Z0-9]+[a-zA-Z0-9-]*[a-zA-Z0-9]+$", "minLength": 2, "maxLength": 63}
_description = {"type": ["string", "null"], "minLength": 0, "maxLength": 255}
_metadata = value_schemas.metadata

_legacy_bdm: dict[str, Any] = {
    "type": "object",
    "properties": {
        "virtual_name": {"type": "string", "maxLength": 255},
        "volume_id": _uuid,
        "snapshot_id": _uuid,
        "volume_size": {"type": ["integer", "string"], "pattern": "^[0-9]+$", "minimum": 1, "maximum": 0x7FFFFFFF},
        "device_name": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[a-zA-Z0-9._/-]*$"},
        "delete_on_termination": boolean,
        "no_device": {},
        "connection_info": {"type": "string", "maxLength": 16777215},
    },
    "additionalProperties": False,
}

_bdm_v2 = copy.deepcopy(_legacy_bdm)
_bdm_v2["properties"].update(
    {
        "source_type": {"type": "string", "enum": ["volume", "image", "snapshot", "blank"]},
        "uuid": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[a-zA-Z0-9._-]*$"},
        "image_id": _uuid,
        "destination_type": {"type": "string", "enum": ["local", "volume"]},
        "guest_format": {"type": "string", "maxLength": 255},
        "device_type": {"type": "string", "maxLength": 255},
        "disk_bus": {"type": "string", "maxLength": 255},
        "boot_index": {
            "type": ["integer", "string", "null"],
            "pattern": "^-?[0-9]+$",
            "minimum": -MAX_INT,
            "maximum": MAX_INT,
        },
    }
)

SCHEDULER_HINTS = {
    "type": "object",
    "properties": {
        "group": {"oneOf": [{"type": "array", "items": _uuid}, _uuid]},
        "different_host": {"oneOf": [_uuid, {"type": "array", "items": _uuid}]},
        "same_host": {"type": ["string", "array"], "items": _uuid},
        "query": {"type": ["string", "object"]},
        "target_cell": name,
        "different_cell": {"type": ["string", "array"], "items": {"type": "string"}},
        "build_near_host_ip": _ip_address,
        "cidr": {"type": "string", "pattern": "^/[0-9a-f.:]+$"},
    },
    "additionalProperties": True,
}


def _networks_list(with_uuid_format: bool, with_tag: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "fixed_ip": _ip_address,
        "port": {"type": ["string", "null"], "format": "uuid"},
        "uuid": _uuid if with_uuid_format else {"type": "string"},
    }
    if with_tag:
        properties["tag"] = _tag
    return {"type": "array", "items": {"type": "object", "properties": properties, "additionalProperties": False}}


def server_properties(version: tuple[int, int]) -> dict[str, Any]:
    """The keys of the ``server`` object of a create body at ``version``."""
    properties: dict[str, Any] = {
        "name": name,
        "imageRef": {"oneOf": [_uuid, {"type": "string", "maxLength": 0}]},
        "flavorRef": {"type": ["string", "integer"], "minLength": 1},
        "adminPass": {"type": "string"},
        "metadata": _metadata,
        "networks": _networks_list(with_uuid_format=False, with_tag=False),
        "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
        "accessIPv4": {"type": "string", "format": "ipv4"},
        "accessIPv6": {"type": "string", "format": "ipv6"},
        "personality": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "contents": {"type": "string", "format": "base64"}},
                "additionalProperties": False,
            },
        },
        # Nova's parameter_types.name: the az, az:host, az::node and az:host:node forms.
        "availability_zone": name,
        "block_device_mapping": {"type": "array", "items": _legacy_bdm},
        "block_device_mapping_v2": {"type": "array", "items": copy.deepcopy(_bdm_v2)},
        "config_drive": boolean,
        "key_name": name,
        "min_count": _positive_integer,
        "max_count": _positive_integer,
        "return_reservation_id": boolean,
        "security_groups": {
            "type": "array",
            "items": {"type": "object", "properties": {"name": name}, "additionalProperties": False},
        },
        "user_data": {"type": "string", "format": "base64", "maxLength": 65535},
    }
    bdm_item = properties["block_device_mapping_v2"]["items"]["properties"]
    if version >= (2, 19):
        properties["description"] = _description
    if version == (2, 32):
        properties["networks"] = _networks_list(with_uuid_format=False, with_tag=True)
        bdm_item["tag"] = _tag
    elif (2, 33) <= version < (2, 37):
        properties["networks"] = _networks_list(with_uuid_format=False, with_tag=True)
    if version >= (2, 37):
        with_tag = version >= (2, 42)
        properties["networks"] = {
            "oneOf": [
                _networks_list(with_uuid_format=True, with_tag=with_tag),
                {"type": "string", "enum": ["none", "auto"]},
            ]
        }
    if version >= (2, 42):
        bdm_item["tag"] = _tag
    if version >= (2, 52):
        properties["tags"] = {"type": "array", "items": _tag, "maxItems": MAX_TAG_COUNT}
    if version >= (2, 57):
        properties.pop("personality")
    if version >= (2, 63):
        properties["trusted_image_certificates"] = {
            "type": ["array", "null"],
            "minItems": 1,
            "maxItems": 50,
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1},
        }
    if version >= (2, 67):
        bdm_item["volume_type"] = {"type": ["string", "null"], "minLength": 0, "maxLength": 255}
    if version >= (2, 74):
        properties["host"] = _fqdn
        properties["hypervisor_hostname"] = _fqdn
    if version >= (2, 94):
        properties["hostname"] = _fqdn
    elif version >= (2, 90):
        properties["hostname"] = _hostname
    return properties


def server_create(version: tuple[int, int]) -> dict[str, Any]:
    """The POST /servers body: ``networks`` required from 2.37."""
    required = ["name", "flavorRef"]
    if version >= (2, 37):
        required.append("networks")
    return {
        "type": "object",
        "properties": {
            "server": {
                "type": "object",
                "properties": server_properties(version),
                "required": required,
                "additionalProperties": False,
            },
            "os:scheduler_hints": SCHEDULER_HINTS,
            "OS-SCH-HNT:scheduler_hints": SCHEDULER_HINTS,
        },
        "required": ["server"],
        "additionalProperties": False,
    }


# --- query strings ---------------------------------------------------------------

_string = {"type": "string"}

# Nova's index_query (every value a string; the regex ones a regular expression).
_LIST_PARAMS = (
    "user_id",
    "project_id",
    "tenant_id",
    "launch_index",
    "image_ref",
    "image",
    "kernel_id",
    "ramdisk_id",
    "hostname",
    "key_name",
    "power_state",
    "vm_state",
    "task_state",
    "host",
    "node",
    "flavor",
    "reservation_id",
    "launched_at",
    "terminated_at",
    "availability_zone",
    "name",
    "display_name",
    "description",
    "display_description",
    "locked_by",
    "uuid",
    "root_device_name",
    "config_drive",
    "access_ip_v4",
    "access_ip_v6",
    "auto_disk_config",
    "progress",
    "sort_key",
    "sort_dir",
    "all_tenants",
    "soft_deleted",
    "deleted",
    "status",
    "changes-since",
    "ip",
    "ip6",
    "created_at",
    # joined tables: accepted by the schema, refused by the handler
    "block_device_mapping",
    "services",
    "metadata",
    "system_metadata",
    "info_cache",
    "security_groups",
    "pci_devices",
    # paging
    "limit",
    "marker",
)
JOINED_TABLE_PARAMS = (
    "block_device_mapping",
    "services",
    "metadata",
    "system_metadata",
    "info_cache",
    "security_groups",
    "pci_devices",
)
_LIMIT = {"type": "string", "pattern": "^[0-9]*$", "minLength": 1}


def server_list_query(version: tuple[int, int]) -> dict[str, Any]:
    """Tags filters from 2.26, changes-before from 2.66, locked from 2.73;
    strict (unknown parameters refused) from 2.75."""
    names = list(_LIST_PARAMS)
    if version >= (2, 26):
        names += ["tags", "tags-any", "not-tags", "not-tags-any"]
    if version >= (2, 66):
        names.append("changes-before")
    if version >= (2, 73):
        names.append("locked")
    properties: dict[str, dict[str, Any]] = {param: _string for param in names}

    properties["limit"] = _LIMIT
    return query(properties, strict=version >= (2, 75))


def server_show_query(version: tuple[int, int]) -> dict[str, Any]:
    """GET /servers/{id} reads no parameter; from 2.102 it refuses any."""
    return query(strict=version >= (2, 102))


# --- metadata (Nova's schemas/server_metadata.py) ------------------------------------

METADATA = value_schemas.METADATA_BODY
METADATA_ITEM = value_schemas.METADATA_ITEM_BODY


# --- update (Nova's update, update_v219 ... update_v2104) ----------------------------


def server_update(version: tuple[int, int]) -> dict[str, Any]:
    """The PUT /servers/{id} body: description from 2.19, hostname from 2.90
    (an FQDN from 2.94), pinned_availability_zone from 2.104."""
    properties: dict[str, Any] = {
        "name": name,
        "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
        "accessIPv4": {"type": "string", "format": "ipv4"},
        "accessIPv6": {"type": "string", "format": "ipv6"},
    }
    if version >= (2, 19):
        properties["description"] = _description
    if version >= (2, 94):
        properties["hostname"] = _fqdn
    elif version >= (2, 90):
        properties["hostname"] = _hostname
    if version >= (2, 104):
        properties["pinned_availability_zone"] = {
            "oneOf": [{"type": "string", "minLength": 1, "maxLength": 255}, {"type": "null"}]
        }
    return {
        "type": "object",
        "properties": {"server": {"type": "object", "properties": properties, "additionalProperties": False}},
        "required": ["server"],
        "additionalProperties": False,
    }


# --- tags (Nova's schemas/server_tags.py) ----------------------------------------------

TAGS = {
    "type": "object",
    "properties": {"tags": {"type": "array", "items": _tag, "maxItems": MAX_TAG_COUNT}},
    "required": ["tags"],
    "additionalProperties": False,
}
# PUT /servers/{id}/tags/{tag} takes no body (or null).
TAG_BODY = {"type": "null"}


# --- instance actions (Nova's schemas/instance_actions.py) ------------------------------


def instance_actions_query(version: tuple[int, int]) -> dict[str, Any]:
    """GET /servers/{id}/os-instance-actions: open below 2.58; from 2.58
    limit, marker and changes-since only, changes-before from 2.66."""
    if version < (2, 58):
        return query()
    properties: dict[str, Any] = {
        "limit": non_negative_integer_query,
        "marker": _string,
        "changes-since": {"type": "string", "format": "date-time"},
    }
    if version >= (2, 66):
        properties["changes-before"] = {"type": "string", "format": "date-time"}
    return query(properties, strict=True)


# --- admin and deferred-delete actions (Nova's admin_actions, deferred_delete) ----------

RESET_STATE = {
    "type": "object",
    "properties": {
        "os-resetState": {
            "type": "object",
            "properties": {"state": {"type": "string", "enum": ["active", "error"]}},
            "required": ["state"],
            "additionalProperties": False,
        }
    },
    "required": ["os-resetState"],
    "additionalProperties": False,
}
RESTORE = {"type": "object", "properties": {"restore": {}}, "required": ["restore"], "additionalProperties": False}
# --- locks and power actions (Nova's schemas/lock_server.py and servers.py) ------------


def _action_without_arguments(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {}}, "required": [name], "additionalProperties": False}


LOCK = _action_without_arguments("lock")
LOCK_V273 = {
    "type": "object",
    "properties": {
        "lock": {
            "type": ["object", "null"],
            "properties": {"locked_reason": {"type": "string", "minLength": 1, "maxLength": 255}},
            "additionalProperties": False,
        }
    },
    "required": ["lock"],
    "additionalProperties": False,
}
UNLOCK = _action_without_arguments("unlock")
START = _action_without_arguments("os-start")
STOP = _action_without_arguments("os-stop")
REBOOT = {
    "type": "object",
    "properties": {
        "reboot": {
            "type": "object",
            "properties": {"type": {"type": "string", "enum": ["HARD", "Hard", "hard", "SOFT", "Soft", "soft"]}},
            "required": ["type"],
            "additionalProperties": False,
        }
    },
    "required": ["reboot"],
    "additionalProperties": False,
}


def lock_schema(version: tuple[int, int]) -> dict[str, Any]:
    """The lock body: any value to 2.72; null or {"locked_reason"} from 2.73."""
    return LOCK_V273 if version >= (2, 73) else LOCK


FORCE_DELETE = {
    "type": "object",
    "properties": {"forceDelete": {}},
    "required": ["forceDelete"],
    "additionalProperties": False,
}


# --- usage (Nova's schemas/simple_tenant_usage.py, instance_usage_audit_log.py) ----------


def tenant_usage_query(version: tuple[int, int], show: bool = False) -> dict[str, Any]:
    """GET /os-simple-tenant-usage (start, end, detailed) and /{tenant_id}
    (start, end): paging from 2.40, any other parameter refused from 2.75."""
    properties: dict[str, Any] = {"start": _string, "end": _string}
    if not show:
        properties["detailed"] = _string
    if version >= (2, 40):
        properties |= {"limit": non_negative_integer_query, "marker": _string}
    return query(properties, strict=version >= (2, 75))


def audit_log_query(version: tuple[int, int]) -> dict[str, Any]:
    """GET /os-instance_usage_audit_log[/{before}] reads no parameter; from 2.102 it refuses any."""
    return query(strict=version >= (2, 102))
