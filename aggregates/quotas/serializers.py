"""Answers of os-quota-sets, os-quota-class-sets and /limits per
microversion (Nova's quota_sets.py, quota_classes.py and views/limits.py)."""

from collections.abc import Mapping
from typing import Any

from aggregates.quotas.schemas import SERVER_GROUPS, hidden_quota_class_keys, hidden_quota_set_keys
from aggregates.quotas.services import RESOURCES, QuotaDetail


def quota_set_body(
    version: tuple[int, int], values: Mapping[str, Any], project_id: str | None = None
) -> dict[str, Any]:
    """``{"quota_set": {...}}``: limits, or {in_use, limit, reserved} per
    resource (detail); ``id`` except in an update's answer."""
    hidden = hidden_quota_set_keys(version)
    body: dict[str, Any] = {"id": project_id} if project_id is not None else {}
    for resource in RESOURCES:
        if resource in hidden or resource not in values:
            continue
        value = values[resource]
        if isinstance(value, QuotaDetail):
            value = {"in_use": value.in_use, "limit": value.limit, "reserved": value.reserved}
        body[resource] = value
    return {"quota_set": body}


def quota_class_body(version: tuple[int, int], values: Mapping[str, int], class_name: str | None) -> dict[str, Any]:
    hidden = hidden_quota_class_keys(version) + (SERVER_GROUPS if version < (2, 50) else ())
    body: dict[str, Any] = {"id": class_name} if class_name is not None else {}
    body.update({resource: values[resource] for resource in RESOURCES if resource not in hidden})
    return {"quota_class_set": body}


# Nova's views/limits.py: each resource's absolute limit name(s), and the used names.
LIMIT_NAMES = {
    "ram": ["maxTotalRAMSize"],
    "instances": ["maxTotalInstances"],
    "cores": ["maxTotalCores"],
    "key_pairs": ["maxTotalKeypairs"],
    "floating_ips": ["maxTotalFloatingIps"],
    "metadata_items": ["maxServerMeta", "maxImageMeta"],
    "injected_files": ["maxPersonality"],
    "injected_file_content_bytes": ["maxPersonalitySize"],
    "security_groups": ["maxSecurityGroups"],
    "security_group_rules": ["maxSecurityGroupRules"],
    "server_groups": ["maxServerGroups"],
    "server_group_members": ["maxServerGroupMembers"],
}
USED_NAMES = {
    "totalRAMUsed": "ram",
    "totalCoresUsed": "cores",
    "totalInstancesUsed": "instances",
    "totalFloatingIpsUsed": "floating_ips",
    "totalSecurityGroupsUsed": "security_groups",
    "totalServerGroupsUsed": "server_groups",
}


def limits_body(version: tuple[int, int], quotas: Mapping[str, QuotaDetail]) -> dict[str, Any]:
    """``GET /limits``: the network-era keys until 2.36, maxImageMeta until
    2.39, the personality keys until 2.57; ``rate`` is always empty."""
    if version >= (2, 57):
        filtered: tuple[str, ...] = (
            "floating_ips",
            "security_groups",
            "security_group_rules",
            "injected_files",
            "injected_file_content_bytes",
        )
    elif version >= (2, 36):
        filtered = ("floating_ips", "security_groups", "security_group_rules")
    else:
        filtered = ()
    absolute: dict[str, int] = {}
    for resource, names in LIMIT_NAMES.items():
        if resource in filtered or resource not in quotas:
            continue
        for name in names:
            if name == "maxImageMeta" and version >= (2, 39):
                continue
            absolute[name] = quotas[resource].limit
    for name, resource in USED_NAMES.items():
        if resource in quotas and resource not in filtered:
            absolute[name] = quotas[resource].in_use
    return {"limits": {"rate": [], "absolute": absolute}}
