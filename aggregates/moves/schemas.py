"""Request schemas of moves (Nova's schemas/migrate_server.py, evacuate.py,
migrations.py and servers.py's resize, confirm_resize and revert_resize),
per microversion.

Not API layer: plain JSON schemas, checked with aggregates.schema_check."""

import copy
from typing import Any

from aggregates.value_schemas import boolean, hostname, non_negative_integer_query, query

_host_or_null = {**hostname, "type": ["string", "null"]}
_block_migration_v225 = {**boolean, "enum": [*boolean["enum"], "auto"]}

_migrate = {
    "type": "object",
    "properties": {
        "migrate": {
            "type": ["object", "null"],
            "properties": {"host": _host_or_null},
            "additionalProperties": False,
        }
    },
    "required": ["migrate"],
    "additionalProperties": False,
}

_migrate_live: dict[str, Any] = {
    "type": "object",
    "properties": {
        "os-migrateLive": {
            "type": "object",
            "properties": {"block_migration": boolean, "disk_over_commit": boolean, "host": _host_or_null},
            "required": ["block_migration", "disk_over_commit", "host"],
            "additionalProperties": False,
        }
    },
    "required": ["os-migrateLive"],
    "additionalProperties": False,
}
_migrate_live_v225 = copy.deepcopy(_migrate_live)
del _migrate_live_v225["properties"]["os-migrateLive"]["properties"]["disk_over_commit"]
_migrate_live_v225["properties"]["os-migrateLive"]["properties"]["block_migration"] = _block_migration_v225
_migrate_live_v225["properties"]["os-migrateLive"]["required"] = ["block_migration", "host"]
_migrate_live_v230 = copy.deepcopy(_migrate_live_v225)
_migrate_live_v230["properties"]["os-migrateLive"]["properties"]["force"] = boolean

_evacuate: dict[str, Any] = {
    "type": "object",
    "properties": {
        "evacuate": {
            "type": "object",
            "properties": {
                "host": hostname,
                "onSharedStorage": boolean,
                "adminPass": {"type": "string"},
            },
            "required": ["onSharedStorage"],
            "additionalProperties": False,
        }
    },
    "required": ["evacuate"],
    "additionalProperties": False,
}
_evacuate_v214 = copy.deepcopy(_evacuate)
del _evacuate_v214["properties"]["evacuate"]["properties"]["onSharedStorage"]
del _evacuate_v214["properties"]["evacuate"]["required"]
_evacuate_v229 = copy.deepcopy(_evacuate_v214)
_evacuate_v229["properties"]["evacuate"]["properties"]["force"] = boolean

RESIZE = {
    "type": "object",
    "properties": {
        "resize": {
            "type": "object",
            "properties": {
                "flavorRef": {"type": ["string", "integer"], "minLength": 1},
                "OS-DCF:diskConfig": {"type": "string", "enum": ["AUTO", "MANUAL"]},
            },
            "required": ["flavorRef"],
            "additionalProperties": False,
        }
    },
    "required": ["resize"],
    "additionalProperties": False,
}

REVERT_RESIZE = {
    "type": "object",
    "properties": {"revertResize": {}},
    "required": ["revertResize"],
    "additionalProperties": False,
}

CONFIRM_RESIZE = {
    "type": "object",
    "properties": {"confirmResize": {}},
    "required": ["confirmResize"],
    "additionalProperties": False,
}


def migrate(version: tuple[int, int]) -> dict[str, Any] | None:
    """The cold migration body: checked only from 2.56 (None: not checked)."""
    return _migrate if version >= (2, 56) else None


def migrate_live(version: tuple[int, int]) -> dict[str, Any]:
    if version >= (2, 68):
        return _migrate_live_v225
    if version >= (2, 30):
        return _migrate_live_v230
    if version >= (2, 25):
        return _migrate_live_v225
    return _migrate_live


def evacuate(version: tuple[int, int]) -> dict[str, Any]:
    if version >= (2, 68):
        return _evacuate_v214
    if version >= (2, 29):
        return _evacuate_v229
    if version >= (2, 14):
        return _evacuate_v214
    return _evacuate


_single = {"type": "string"}
_date_time = {"type": "string", "format": "date-time"}
_migrations_v20 = query(
    {
        "hidden": _single,
        "host": _single,
        "instance_uuid": _single,
        "source_compute": _single,
        "status": _single,
        "migration_type": _single,
        # Corral's own, at every version (the issue asks for them).
        "dest_compute": _single,
        "source_node": _single,
        "dest_node": _single,
        "changes-since": _single,
        "changes-before": _single,
        "limit": _single,
        "marker": _single,
        "project_id": _single,
        "user_id": _single,
    }
)


def migrations_query(version: tuple[int, int]) -> dict[str, Any]:
    """GET /os-migrations query strings: open below 2.59, strict from it."""
    if version < (2, 59):
        return _migrations_v20
    properties = {
        name: _migrations_v20["properties"][name]
        for name in (
            "hidden",
            "host",
            "instance_uuid",
            "source_compute",
            "status",
            "migration_type",
            "dest_compute",
            "source_node",
            "dest_node",
        )
    }
    properties.update({"limit": non_negative_integer_query, "marker": _single, "changes-since": _date_time})
    if version >= (2, 66):
        properties["changes-before"] = _date_time
    if version >= (2, 80):
        properties.update({"user_id": _single, "project_id": _single})
    return query(properties, strict=True)


def server_migrations_query(version: tuple[int, int]) -> dict[str, Any]:
    """GET /servers/{id}/migrations[/{id}]: strict from 2.102."""
    return query({}, strict=version >= (2, 102))
