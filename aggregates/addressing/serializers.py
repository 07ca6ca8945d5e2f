"""Response bodies of ``/os-address-pools`` and Nova's ``/servers/{id}/ips``."""

from typing import Any

from aggregates.addressing import services as service


def pool_body(item: service.PoolUsage) -> dict[str, Any]:
    pool = item.pool
    return {
        "id": str(pool.uuid),
        "name": pool.name,
        "cidr": pool.cidr,
        "gateway": pool.gateway or None,
        "kind": pool.kind,
        "scope": pool.scope,
        "zone": pool.zone or None,
        "aggregate": pool.aggregate.name if pool.aggregate else None,
        "capacity": item.capacity,
        "used": item.used,
        "free": item.free,
        "created_at": pool.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "updated_at": pool.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def basic(addresses: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Nova's ips view: version and addr only, by network."""
    return {label: [{"version": ip["version"], "addr": ip["addr"]} for ip in ips] for label, ips in addresses.items()}
