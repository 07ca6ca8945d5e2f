"""Request schemas of ``/os-server-groups``, by the microversion that
introduced each shape (Nova's schemas/server_groups.py)."""

import copy
from typing import Any

from aggregates.value_schemas import name, non_negative_integer_query, query

# Nova's parameter_types.positive_integer.
positive_integer = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 1, "minLength": 1}

CREATE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server_group": {
            "type": "object",
            "properties": {
                "name": name,
                "policies": {
                    "type": "array",
                    # Nova's prefixItems of one item with at most one item: every item is checked.
                    "items": {"type": "string", "enum": ["anti-affinity", "affinity"]},
                    "uniqueItems": True,
                    "minItems": 1,
                    "maxItems": 1,
                },
            },
            "required": ["name", "policies"],
            "additionalProperties": False,
        }
    },
    "required": ["server_group"],
    "additionalProperties": False,
}

CREATE_V215 = copy.deepcopy(CREATE)
CREATE_V215["properties"]["server_group"]["properties"]["policies"]["items"]["enum"].extend(
    ["soft-anti-affinity", "soft-affinity"]
)

CREATE_V264 = copy.deepcopy(CREATE_V215)
_group = CREATE_V264["properties"]["server_group"]
del _group["properties"]["policies"]
_group["required"] = ["name", "policy"]
_group["properties"]["policy"] = {
    "type": "string",
    "enum": ["anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity"],
}
_group["properties"]["rules"] = {
    "type": "object",
    "properties": {"max_server_per_host": positive_integer},
    "additionalProperties": False,
}


def create(version: tuple[int, int]) -> dict[str, Any]:
    if version >= (2, 64):
        return CREATE_V264
    return CREATE_V215 if version >= (2, 15) else CREATE


_INDEX = {
    "all_projects": {"type": "string"},
    "limit": non_negative_integer_query,
    "offset": non_negative_integer_query,
}


def index_query(version: tuple[int, int]) -> dict[str, Any]:
    """The list's parameters; from 2.75 no other is accepted."""
    return query(_INDEX, strict=version >= (2, 75))


def show_query(version: tuple[int, int]) -> dict[str, Any]:
    """The show reads no parameter; from 2.102 it refuses any."""
    return query(strict=version >= (2, 102))
