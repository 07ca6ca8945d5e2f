"""Response bodies of ``/os-availability-zone``."""

from collections.abc import Iterable
from typing import Any

from aggregates.compute_api.base import isotime
from aggregates.zones.services import AvailabilityZone


def zone_hosts(zone: AvailabilityZone) -> dict[str, dict[str, dict[str, Any]]] | None:
    """The services of each host of the zone, by binary (None when not listed)."""
    if zone.hosts is None:
        return None
    return {
        host: {
            service.binary: {"available": service.is_up, "active": True, "updated_at": isotime(service.updated_at)}
            for service in services
        }
        for host, services in zone.hosts.items()
    }


def zone_list_body(zones: Iterable[AvailabilityZone], detail: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Nova's availabilityZoneInfo; the brief list shows no hosts."""
    return {
        "availabilityZoneInfo": [
            {"zoneName": z.name, "zoneState": {"available": z.available}, "hosts": zone_hosts(z) if detail else None}
            for z in zones
        ]
    }
