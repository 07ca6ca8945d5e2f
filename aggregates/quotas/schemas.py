"""Request schemas of os-quota-sets, os-quota-class-sets and /limits, per
microversion (Nova's schemas/quota_sets.py, quota_classes.py, limits.py).
The console's quota form checks its values against ``limit_value``."""

from typing import Any

from aggregates.value_schemas import MAX_INT, boolean, query

# A limit: an integer (or its digits), -1 for unlimited.
limit_value: dict[str, Any] = {
    "type": ["integer", "string"],
    "pattern": "^-?[0-9]+$",
    "minimum": -1,
    "maximum": MAX_INT,
}

ALL = (
    "instances",
    "cores",
    "ram",
    "floating_ips",
    "fixed_ips",
    "metadata_items",
    "key_pairs",
    "security_groups",
    "security_group_rules",
    "injected_files",
    "injected_file_content_bytes",
    "injected_file_path_bytes",
    "server_groups",
    "server_group_members",
)
# Left out of bodies and answers from 2.36 (quota sets, limits) or 2.50
# (quota classes), and from 2.57.
NETWORK = ("fixed_ips", "floating_ips", "security_group_rules", "security_groups")
PERSONALITY = ("injected_files", "injected_file_content_bytes", "injected_file_path_bytes")
# Quota classes before 2.50 neither take nor show these.
SERVER_GROUPS = ("server_groups", "server_group_members")


def hidden_quota_set_keys(version: tuple[int, int]) -> tuple[str, ...]:
    """os-quota-sets: the keys a microversion neither takes nor shows."""
    if version >= (2, 57):
        return NETWORK + PERSONALITY
    if version >= (2, 36):
        return NETWORK
    return ()


def hidden_quota_class_keys(version: tuple[int, int]) -> tuple[str, ...]:
    """os-quota-class-sets: the keys a microversion neither takes nor shows
    (before 2.50 a body may set the server group limits, but they are not
    shown: ``SERVER_GROUPS``)."""
    if version >= (2, 57):
        return NETWORK + PERSONALITY
    if version >= (2, 50):
        return NETWORK
    return ()


def _resources(hidden: tuple[str, ...]) -> dict[str, Any]:
    return {name: limit_value for name in ALL if name not in hidden}


def quota_set_update(version: tuple[int, int]) -> dict[str, Any]:
    properties = {**_resources(hidden_quota_set_keys(version)), "force": boolean}
    return {
        "type": "object",
        "properties": {"quota_set": {"type": "object", "properties": properties, "additionalProperties": False}},
        "required": ["quota_set"],
        "additionalProperties": False,
    }


def quota_class_update(version: tuple[int, int]) -> dict[str, Any]:
    hidden = hidden_quota_class_keys(version)
    properties = _resources(hidden)
    return {
        "type": "object",
        "properties": {"quota_class_set": {"type": "object", "properties": properties, "additionalProperties": False}},
        "required": ["quota_class_set"],
        "additionalProperties": False,
    }


def quota_set_query(version: tuple[int, int]) -> dict[str, Any]:
    """show, detail, update and delete read user_id; from 2.75 nothing else."""
    return query({"user_id": {"type": "string"}}, strict=version >= (2, 75))


# Nova checks the defaults' query string with its pre-2.102 schema at every
# microversion (its stricter one is defined but not used).
DEFAULTS_QUERY = query()


def quota_class_query(version: tuple[int, int]) -> dict[str, Any]:
    return query(strict=version >= (2, 102))


def limits_query(version: tuple[int, int]) -> dict[str, Any]:
    return query({"tenant_id": {"type": "string"}}, strict=version >= (2, 75))
