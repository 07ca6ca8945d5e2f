"""JSON schemas for request bodies and query strings, by resource and by the
microversion that introduced each shape (upstream Placement's contracts)."""

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from placement.models import MAX_INT

UUID_PATTERN = "^[0-9a-fA-F-]{36}$"
RC_PATTERN = "^[A-Z0-9_]+$"
CUSTOM_PATTERN = "^CUSTOM_[A-Z0-9_]+$"
CONSUMER_TYPE_PATTERN = RC_PATTERN
CONSUMER_TYPE_QUERY_PATTERN = f"{RC_PATTERN}|^all|^unknown$"
GROUP_SUFFIX = r"[1-9][0-9]*"
GROUP_SUFFIX_1_33 = r"[a-zA-Z0-9_-]{1,64}"
SQL_FLOAT_MAX = 3.40282e38

UUID = {"type": "string", "format": "uuid"}


def extended(
    schema: dict[str, Any],
    properties: Mapping[str, Any] | None = None,
    required: Iterable[str] = (),
    drop: Iterable[str] = (),
) -> dict[str, Any]:
    """A copy of ``schema`` with more (or fewer) properties."""
    result = copy.deepcopy(schema)
    for name in drop:
        result["properties"].pop(name, None)
        if name in result.get("required", []):
            result["required"].remove(name)
    result["properties"].update(copy.deepcopy(properties or {}))
    if required:
        result["required"] = result.get("required", []) + list(required)
    return result


# --- resource providers --------------------------------------------------------

PROVIDER_POST = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 200}, "uuid": UUID},
    "required": ["name"],
    "additionalProperties": False,
}
PROVIDER_PUT = extended(PROVIDER_POST, drop=["uuid"])
_PARENT = {"parent_provider_uuid": {"anyOf": [UUID, {"type": "null"}]}}
PROVIDER_POST_1_14 = extended(PROVIDER_POST, _PARENT)
PROVIDER_PUT_1_14 = extended(PROVIDER_POST_1_14, drop=["uuid"])

PROVIDER_LIST_1_0 = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "uuid": UUID},
    "additionalProperties": False,
}
PROVIDER_LIST_1_3 = extended(PROVIDER_LIST_1_0, {"member_of": {"type": "string"}})
PROVIDER_LIST_1_4 = extended(PROVIDER_LIST_1_3, {"resources": {"type": "string"}})
PROVIDER_LIST_1_14 = extended(PROVIDER_LIST_1_4, {"in_tree": UUID})
PROVIDER_LIST_1_18 = extended(PROVIDER_LIST_1_14, {"required": {"type": "string"}})

# --- inventories ----------------------------------------------------------------


def _bounded(minimum: int) -> dict[str, Any]:
    return {"type": "integer", "maximum": MAX_INT, "minimum": minimum}


INVENTORY = {
    "type": "object",
    "properties": {
        "resource_provider_generation": {"type": "integer"},
        "total": _bounded(1),
        "reserved": _bounded(0),
        "min_unit": _bounded(1),
        "max_unit": _bounded(1),
        "step_size": _bounded(1),
        "allocation_ratio": {"type": "number", "maximum": SQL_FLOAT_MAX},
    },
    "required": ["total", "resource_provider_generation"],
    "additionalProperties": False,
}
# As upstream: resource_provider_generation is allowed (optional) on POST.
INVENTORY_POST = extended(INVENTORY, {"resource_class": {"type": "string", "pattern": RC_PATTERN}})
INVENTORY_POST["required"] = ["total", "resource_class"]
INVENTORY_IN_SET = copy.deepcopy(INVENTORY)
INVENTORY_IN_SET["required"] = ["total"]
INVENTORIES_PUT = {
    "type": "object",
    "properties": {
        "resource_provider_generation": {"type": "integer"},
        # Upstream checks only the keys matching RC_PATTERN, so any other key
        # reaches its handler unchecked (a 500 when its value is no object).
        # Here every record is checked; a well-formed record under an unknown
        # name still gets upstream's "Unknown resource class" 400.
        "inventories": {
            "type": "object",
            "patternProperties": {RC_PATTERN: INVENTORY_IN_SET},
            "additionalProperties": INVENTORY_IN_SET,
        },
    },
    "required": ["resource_provider_generation", "inventories"],
    "additionalProperties": False,
}

# --- resource classes -------------------------------------------------------------

RESOURCE_CLASS = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": CUSTOM_PATTERN, "maxLength": 255}},
    "required": ["name"],
    "additionalProperties": False,
}

# --- traits -------------------------------------------------------------------------

TRAIT_NAME = {"type": "string", "minLength": 1, "maxLength": 255}
CUSTOM_TRAIT_NAME = dict(TRAIT_NAME, pattern=CUSTOM_PATTERN)
PROVIDER_TRAITS_PUT = {
    "type": "object",
    "properties": {
        "traits": {"type": "array", "items": TRAIT_NAME},
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["traits", "resource_provider_generation"],
    "additionalProperties": False,
}
TRAIT_LIST = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "associated": {"type": "string"}},
    "additionalProperties": False,
}

# --- aggregates ------------------------------------------------------------------

_AGGREGATE_LIST = {"type": "array", "items": UUID, "uniqueItems": True}
AGGREGATES_PUT_1_1 = _AGGREGATE_LIST
AGGREGATES_PUT_1_19 = {
    "type": "object",
    "properties": {"aggregates": _AGGREGATE_LIST, "resource_provider_generation": {"type": "integer"}},
    "required": ["aggregates", "resource_provider_generation"],
    "additionalProperties": False,
}

# --- allocations -------------------------------------------------------------------

_AMOUNTS = {
    "type": "object",
    "minProperties": 1,
    # An amount above MAX_INT could never fit an inventory (max_unit is at
    # most MAX_INT, the column's range): refused as out of range, as any
    # other integer field above its column's range is.
    "patternProperties": {RC_PATTERN: _bounded(1)},
    "additionalProperties": False,
}
_OWNER = {"type": "string", "minLength": 1, "maxLength": 255}

ALLOCATIONS_PUT_1_0 = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "resource_provider": {
                        "type": "object",
                        "properties": {"uuid": UUID},
                        "additionalProperties": False,
                        "required": ["uuid"],
                    },
                    "resources": _AMOUNTS,
                },
                "required": ["resource_provider", "resources"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["allocations"],
    "additionalProperties": False,
}
ALLOCATIONS_PUT_1_8 = extended(
    ALLOCATIONS_PUT_1_0, {"project_id": _OWNER, "user_id": _OWNER}, ["project_id", "user_id"]
)
ALLOCATIONS_PUT_1_12: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "object",
            "minProperties": 1,
            "patternProperties": {
                UUID_PATTERN: {
                    "type": "object",
                    "properties": {"generation": {"type": "integer"}, "resources": _AMOUNTS},
                    "required": ["resources"],
                    "additionalProperties": False,
                }
            },
            "additionalProperties": False,
        },
        "project_id": _OWNER,
        "user_id": _OWNER,
    },
    "additionalProperties": False,
    "required": ["allocations", "project_id", "user_id"],
}
_MAY_BE_EMPTY = copy.deepcopy(ALLOCATIONS_PUT_1_12)
_MAY_BE_EMPTY["properties"]["allocations"]["minProperties"] = 0
_CONSUMER_GENERATION = {"consumer_generation": {"type": ["integer", "null"], "additionalProperties": False}}
_MAPPINGS = {
    "mappings": {
        "type": "object",
        "minProperties": 1,
        "patternProperties": {GROUP_SUFFIX_1_33: {"type": "array", "minItems": 1, "items": UUID}},
    }
}
_CONSUMER_TYPE = {
    "consumer_type": {"type": "string", "pattern": CONSUMER_TYPE_PATTERN, "minLength": 1, "maxLength": 255}
}
ALLOCATIONS_PUT_1_28 = extended(_MAY_BE_EMPTY, _CONSUMER_GENERATION, ["consumer_generation"])
ALLOCATIONS_PUT_1_34 = extended(ALLOCATIONS_PUT_1_28, _MAPPINGS)
ALLOCATIONS_PUT_1_38 = extended(ALLOCATIONS_PUT_1_34, _CONSUMER_TYPE, ["consumer_type"])


def _by_consumer(consumer_schema: Mapping[str, Any], min_properties: int = 1) -> dict[str, Any]:
    return {
        "type": "object",
        "minProperties": min_properties,
        "additionalProperties": False,
        "patternProperties": {UUID_PATTERN: consumer_schema},
    }


ALLOCATIONS_POST_1_13 = _by_consumer(_MAY_BE_EMPTY)
ALLOCATIONS_POST_1_28 = _by_consumer(ALLOCATIONS_PUT_1_28)
ALLOCATIONS_POST_1_34 = _by_consumer(ALLOCATIONS_PUT_1_34)
ALLOCATIONS_POST_1_38 = _by_consumer(ALLOCATIONS_PUT_1_38)

# --- usages -------------------------------------------------------------------------

USAGES_1_9 = {
    "type": "object",
    "properties": {"project_id": _OWNER, "user_id": _OWNER},
    "required": ["project_id"],
    "additionalProperties": False,
}
USAGES_1_38 = extended(
    USAGES_1_9,
    {"consumer_type": {"type": "string", "pattern": CONSUMER_TYPE_QUERY_PATTERN, "minLength": 1, "maxLength": 255}},
)

# --- allocation candidates ----------------------------------------------------------

CANDIDATES_1_10 = {
    "type": "object",
    "properties": {"resources": {"type": "string"}},
    "required": ["resources"],
    "additionalProperties": False,
}
CANDIDATES_1_16 = extended(
    CANDIDATES_1_10,
    {"limit": {"type": ["integer", "string"], "pattern": "^[1-9][0-9]*$", "minimum": 1, "minLength": 1}},
)
CANDIDATES_1_17 = extended(CANDIDATES_1_16, {"required": {"type": ["string"]}})
CANDIDATES_1_21 = extended(CANDIDATES_1_17, {"member_of": {"type": ["string"]}})


def _grouped(suffix: str, keys: Iterable[str]) -> dict[str, dict[str, str]]:
    return {f"^{key}({suffix})?$": {"type": "string"} for key in keys}


CANDIDATES_1_25 = extended(
    CANDIDATES_1_21,
    {"group_policy": {"type": "string", "enum": ["none", "isolate"]}},
    drop=["resources", "required", "member_of"],
)
CANDIDATES_1_25.pop("required")
CANDIDATES_1_25["patternProperties"] = _grouped(GROUP_SUFFIX, ("resources", "required", "member_of"))
CANDIDATES_1_31 = copy.deepcopy(CANDIDATES_1_25)
CANDIDATES_1_31["patternProperties"] = _grouped(GROUP_SUFFIX, ("resources", "required", "member_of", "in_tree"))
CANDIDATES_1_33 = copy.deepcopy(CANDIDATES_1_31)
CANDIDATES_1_33["patternProperties"] = _grouped(GROUP_SUFFIX_1_33, ("resources", "required", "member_of", "in_tree"))
CANDIDATES_1_35 = extended(CANDIDATES_1_33, {"root_required": {"type": ["string"]}})
CANDIDATES_1_36 = extended(CANDIDATES_1_35, {"same_subtree": {"type": ["string"]}})

# --- reshaper -------------------------------------------------------------------------


def _reshaper(allocations_schema: dict[str, Any]) -> dict[str, Any]:

    allocations = copy.deepcopy(allocations_schema)
    allocations["minProperties"] = 0
    return {
        "type": "object",
        "properties": {
            "inventories": {
                "type": "object",
                "patternProperties": {UUID_PATTERN: INVENTORIES_PUT},
                "minProperties": 1,
                "additionalProperties": False,
            },
            "allocations": allocations,
        },
        "required": ["inventories", "allocations"],
        "additionalProperties": False,
    }


RESHAPER_1_30 = _reshaper(ALLOCATIONS_POST_1_28)
RESHAPER_1_34 = _reshaper(ALLOCATIONS_POST_1_34)
RESHAPER_1_38 = _reshaper(ALLOCATIONS_POST_1_38)
