"""Request schemas of ``/os-aggregates``: bodies and query strings, by the
microversion that introduced each shape."""

from typing import Any

from aggregates.value_schemas import az_name, az_name_or_none, hostname, name, name_with_spaces, query

AGGREGATE_CREATE = {
    "type": "object",
    "properties": {
        "aggregate": {
            "type": "object",
            "properties": {"name": name, "availability_zone": az_name_or_none},
            "required": ["name"],
            "additionalProperties": False,
        }
    },
    "required": ["aggregate"],
    "additionalProperties": False,
}

AGGREGATE_UPDATE = {
    "type": "object",
    "properties": {
        "aggregate": {
            "type": "object",
            "properties": {"name": name_with_spaces, "availability_zone": az_name_or_none},
            "additionalProperties": False,
            "anyOf": [{"required": ["name"]}, {"required": ["availability_zone"]}],
        }
    },
    "required": ["aggregate"],
    "additionalProperties": False,
}

# --- POST /os-aggregates/{id}/action: the argument of each action ---------------

HOST_ACTION = {
    "type": "object",
    "properties": {"host": hostname},
    "required": ["host"],
    "additionalProperties": False,
}

SET_METADATA = {
    "type": "object",
    "properties": {
        "metadata": {
            "type": "object",
            "patternProperties": {r"^[a-zA-Z0-9-_:. ]{1,255}$": {"type": ["string", "null"], "maxLength": 255}},
            "additionalProperties": False,
        }
    },
    "required": ["metadata"],
    "additionalProperties": False,
}
# Corral checks a zone name set as metadata like everywhere else.
METADATA_AVAILABILITY_ZONE = {"type": "object", "properties": {"availability_zone": az_name}}

ACTIONS = {"add_host": HOST_ACTION, "remove_host": HOST_ACTION, "set_metadata": SET_METADATA}

# --- query strings ---------------------------------------------------------------

NO_QUERY = query()
NO_QUERY_V2_102 = query(strict=True)


def aggregate_query(version: tuple[int, int]) -> dict[str, Any]:
    """Aggregate routes read no query parameter; from 2.102 they refuse any."""
    return NO_QUERY_V2_102 if version >= (2, 102) else NO_QUERY
