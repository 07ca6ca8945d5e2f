"""Request schemas of ``/flavors``, its ``os-extra_specs`` and its
``os-flavor-access`` actions: bodies and query strings, by the microversion
that introduced each shape.

Not API layer: the console checks its flavor form with ``flavor_properties``,
so both refuse the same input with the same message."""

from typing import Any

from aggregates.flavors import extra_specs
from aggregates.flavors import services as service
from aggregates.value_schemas import boolean, name, query


def _size(minimum: int) -> dict[str, Any]:
    return {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": minimum, "maximum": service.MAX_INT}


FLAVOR_DESCRIPTION = {"type": ["string", "null"], "minLength": 0, "maxLength": service.MAX_DESCRIPTION_LENGTH}
RXTX_FACTOR = {
    "type": ["number", "string"],
    "pattern": r"^[0-9]+(\.[0-9]+)?$",
    "minimum": 0,
    "exclusiveMinimum": True,
    "maximum": service.MAX_RXTX_FACTOR,
}

# --- flavors ---------------------------------------------------------------------


def flavor_properties(version: tuple[int, int]) -> dict[str, Any]:
    """The fields of a new flavor: rxtx_factor until 2.101, description from 2.55."""
    properties = {
        "name": name,
        "id": {
            "type": ["string", "number", "null"],
            "minLength": 1,
            "maxLength": 255,
            "pattern": service.FLAVOR_ID_PATTERN,
        },
        "ram": _size(1),
        "vcpus": _size(1),
        "disk": _size(0),
        "OS-FLV-EXT-DATA:ephemeral": _size(0),
        "swap": _size(0),
        "os-flavor-access:is_public": boolean,
    }
    if version < (2, 102):
        properties["rxtx_factor"] = RXTX_FACTOR
    if version >= (2, 55):
        properties["description"] = FLAVOR_DESCRIPTION
    return properties


def flavor_create(version: tuple[int, int]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "flavor": {
                "type": "object",
                "properties": flavor_properties(version),
                "required": ["name", "ram", "vcpus", "disk"],
                "additionalProperties": False,
            }
        },
        "required": ["flavor"],
        "additionalProperties": False,
    }


# PUT /flavors/{id}, from 2.55.
FLAVOR_UPDATE_V2_55 = {
    "type": "object",
    "properties": {
        "flavor": {
            "type": "object",
            "properties": {"description": FLAVOR_DESCRIPTION},
            "required": ["description"],
            "additionalProperties": False,
        }
    },
    "required": ["flavor"],
    "additionalProperties": False,
}

# --- extra specs -------------------------------------------------------------------

EXTRA_SPECS = {
    "type": "object",
    "patternProperties": {
        extra_specs.KEY_PATTERN: {"type": ["string", "number"], "maxLength": extra_specs.VALUE_MAX_LENGTH}
    },
    "additionalProperties": False,
}
EXTRA_SPECS_SET = {
    "type": "object",
    "properties": {"extra_specs": EXTRA_SPECS},
    "required": ["extra_specs"],
    "additionalProperties": False,
}
EXTRA_SPEC_UPDATE = {**EXTRA_SPECS, "minProperties": 1, "maxProperties": 1}

# --- access: the argument of addTenantAccess and removeTenantAccess -----------------

TENANT_ACTION = {
    "type": "object",
    "properties": {"tenant": {"type": "string", "minLength": 1, "maxLength": 255}},
    "required": ["tenant"],
    "additionalProperties": False,
}

# --- query strings ---------------------------------------------------------------------

# The list filters; their values are read by the list view, with Nova's own messages.
_LIST_FILTERS = ("limit", "marker", "is_public", "minRam", "minDisk", "sort_key", "sort_dir")
FLAVOR_LIST_QUERY = query({param: {"type": "string"} for param in _LIST_FILTERS})
FLAVOR_LIST_QUERY_V2_75 = query(FLAVOR_LIST_QUERY["properties"], strict=True)
FLAVOR_LIST_QUERY_V2_102 = query({**FLAVOR_LIST_QUERY["properties"], "name": {"type": "string"}}, strict=True)

NO_QUERY = query()
NO_QUERY_V2_102 = query(strict=True)


def flavor_list_query(version: tuple[int, int]) -> dict[str, Any]:
    """Strict from 2.75; the name filter from 2.102."""
    if version >= (2, 102):
        return FLAVOR_LIST_QUERY_V2_102
    if version >= (2, 75):
        return FLAVOR_LIST_QUERY_V2_75
    return FLAVOR_LIST_QUERY


def flavor_query(version: tuple[int, int]) -> dict[str, Any]:
    """The other flavor routes read no query parameter; from 2.102 they refuse any."""
    return NO_QUERY_V2_102 if version >= (2, 102) else NO_QUERY
