"""Request bodies and query strings of the maintenance routes (Corral's own)
and of Nova's legacy ``PUT /os-hosts/{host}`` (its schemas/hosts.py)."""

MAINTENANCE = {
    "type": "object",
    "properties": {
        "maintenance": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["start", "stop"]},
                "reason": {"type": ["string", "null"], "maxLength": 255},
                "strategy": {"type": "string", "enum": ["live", "cold"]},
                "prefer_aggregate_peers": {"type": "boolean"},
                "rebalance": {"type": "boolean"},
                "dry_run": {"type": "boolean"},
            },
            "required": ["action"],
            "additionalProperties": False,
        },
    },
    "required": ["maintenance"],
    "additionalProperties": False,
}

_ENABLE_DISABLE = {"type": "string", "enum": ["enable", "disable", "Enable", "Disable", "ENABLE", "DISABLE"]}

# Nova's hosts.update (up to 2.42).
HOST_UPDATE = {
    "type": "object",
    "properties": {"status": _ENABLE_DISABLE, "maintenance_mode": _ENABLE_DISABLE},
    "anyOf": [{"required": ["status"]}, {"required": ["maintenance_mode"]}],
    "additionalProperties": False,
}

JOB_QUERY = {
    "type": "object",
    "properties": {
        "host": {"type": "string", "minLength": 1, "maxLength": 255},
        "status": {"enum": ["queued", "running", "completed", "completed_with_errors", "failed"]},
        "limit": {"type": "string", "pattern": "^[0-9]{1,6}$"},
    },
    "additionalProperties": False,
}

HEADROOM_QUERY = {
    "type": "object",
    "properties": {
        "aggregate": {"type": "string", "pattern": "^[0-9]{1,18}$"},
        "availability_zone": {"type": "string", "minLength": 1, "maxLength": 255},
        "hosts": {"type": "string", "pattern": "^[0-9]{1,6}$"},
    },
    "additionalProperties": False,
}
