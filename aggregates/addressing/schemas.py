"""Request bodies of ``/os-address-pools`` (Corral's own), shared with the console's forms."""

from typing import Any

from aggregates.value_schemas import az_name, name

_kind = {"type": "string", "enum": ["internal", "external"]}
_scope = {"type": "string", "enum": ["global", "zone", "aggregate"]}
_text = {"type": "string", "minLength": 1, "maxLength": 64}
_gateway = {"type": ["string", "null"], "maxLength": 45}
_aggregate = {"type": ["string", "integer", "null"], "minLength": 1, "maxLength": 255}


def _pool_body(required: list[str]) -> dict[str, Any]:
    pool: dict[str, Any] = {
        "type": "object",
        "properties": {
            "name": name,
            "cidr": _text,
            "gateway": _gateway,
            "kind": _kind,
            "scope": _scope,
            "zone": {"oneOf": [az_name, {"type": "null"}]},
            "aggregate": _aggregate,
        },
        "additionalProperties": False,
    }
    if required:
        pool["required"] = required
    else:
        pool["minProperties"] = 1
    return {
        "type": "object",
        "properties": {"address_pool": pool},
        "required": ["address_pool"],
        "additionalProperties": False,
    }


POOL_CREATE = _pool_body(["name", "cidr"])
POOL_UPDATE = _pool_body([])
