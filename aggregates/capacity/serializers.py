"""The body of ``GET /os-capacity`` (Corral's own route)."""

from typing import Any

from aggregates.capacity.counting import GroupCapacity, Report


def _group(group: GroupCapacity) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": group.name,
        "hosts": group.hosts,
        "flavors": [
            {"id": f.flavorid, "name": f.name, "servers": f.servers, "limited_by": f.limited_by} for f in group.flavors
        ],
    }
    if group.scope == "aggregate":
        body["availability_zone"] = group.zone or None
    body["lost_hosts"] = list(group.lost_hosts)
    body["stranded_servers"] = group.stranded
    return body


def capacity_body(report: Report) -> dict[str, Any]:
    return {
        "capacity": {
            "taken_at": report.taken_at.isoformat(),
            "project_id": report.project_id,
            "lose_hosts": report.lose_hosts,
            "flavors": [{"id": flavorid, "name": name} for flavorid, name in report.flavors],
            "availability_zones": [_group(group) for group in report.zones],
            "aggregates": [_group(group) for group in report.aggregates],
        }
    }
