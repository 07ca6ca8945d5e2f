"""JSON schemas of values that every domain, the compute API and the console
check alike (Nova's parameter types): names, zone names, host names,
metadata keys, booleans, counts, query-string values. Checked with
aggregates.schema_check, whose formats they name."""

from collections.abc import Mapping
from typing import Any

MAX_INT = 2147483647  # the largest integer a count may hold (a 32-bit column)

name = {"type": "string", "minLength": 1, "maxLength": 255, "format": "name"}
name_with_spaces = {"type": "string", "minLength": 1, "maxLength": 255, "format": "name_with_leading_trailing_spaces"}
az_name = {"type": "string", "minLength": 1, "maxLength": 255, "format": "az_name"}
az_name_or_none = {"oneOf": [az_name, {"type": "null"}]}
hostname = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[a-zA-Z0-9-._]*$"}
metadata_key = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[a-zA-Z0-9-_:. ]{1,255}$"}
# Nova's metadata (parameter_types.metadata) and the bodies of its metadata
# routes, a server's and (in the image proxy) an image's: all items, or one.
metadata: dict[str, Any] = {
    "type": "object",
    "patternProperties": {"^[a-zA-Z0-9-_:. ]{1,255}$": {"type": "string", "maxLength": 255}},
    "additionalProperties": False,
}
METADATA_BODY = {
    "type": "object",
    "properties": {"metadata": metadata},
    "required": ["metadata"],
    "additionalProperties": False,
}
METADATA_ITEM_BODY = {
    "type": "object",
    "properties": {"meta": {**metadata, "minProperties": 1, "maxProperties": 1}},
    "required": ["meta"],
    "additionalProperties": False,
}
boolean: dict[str, Any] = {
    "type": ["boolean", "string"],
    "enum": [
        True,
        "True",
        "TRUE",
        "true",
        "1",
        "ON",
        "On",
        "on",
        "YES",
        "Yes",
        "yes",
        "y",
        "t",
        False,
        "False",
        "FALSE",
        "false",
        "0",
        "OFF",
        "Off",
        "off",
        "NO",
        "No",
        "no",
        "n",
        "f",
    ],
}
TRUE_STRINGS = {"true", "1", "on", "yes", "y", "t"}


def to_bool(value: object) -> bool:
    """The truth of a value that ``boolean`` accepted."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in TRUE_STRINGS


# --- query strings -------------------------------------------------------------

non_negative_integer_query = {"type": "string", "pattern": "^[0-9]*$", "minLength": 1}
boolean_query = {"type": "string", "enum": [v for v in boolean["enum"] if isinstance(v, str)]}


def query(properties: Mapping[str, Any] | None = None, strict: bool = False) -> dict[str, Any]:
    """The schema of a query string, as Nova writes them: each parameter's
    value (its last one) checked against its property; with ``strict``
    (``additionalProperties: false``) any other parameter is refused."""
    return {"type": "object", "properties": dict(properties or {}), "additionalProperties": not strict}
