"""Availability zones: derived from the ``availability_zone`` key of aggregates."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from django.conf import settings

from aggregates.errors import NotFound
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts.models import Service

AZ_KEY = "availability_zone"

# Services of the API itself: they do not heartbeat, so Nova leaves them out
# of os-services and of the hosts of os-availability-zone/detail.
API_BINARIES = ("nova-osapi_compute", "nova-metadata")

if TYPE_CHECKING:

    class ZonedService(Service):
        """A Service that ``with_zones`` gave its ``availability_zone`` (no column)."""

        availability_zone: str


def zones_by_host(hosts: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Map host -> sorted list of the AZ names of its aggregates (hosts in no
    AZ aggregate are absent). ``hosts`` limits the query."""
    rows = AggregateMetadata.objects.filter(key=AZ_KEY)
    memberships = AggregateHost.objects.filter(aggregate_id__in=rows.values("aggregate_id"))
    if hosts is not None:
        memberships = memberships.filter(host__in=list(hosts))
    az_of_aggregate = dict(rows.values_list("aggregate_id", "value"))
    zones: defaultdict[str, set[str]] = defaultdict(set)
    for host, aggregate_id in memberships.values_list("host", "aggregate_id"):
        zones[host].add(az_of_aggregate[aggregate_id])
    return {host: sorted(names) for host, names in zones.items()}


@dataclass
class ZoneMembers:
    hosts: list[str]  # the zone's compute hosts, by name
    aggregates: list[str]  # the uuids of the aggregates naming the zone (none for the default zone)


def hosts_in_zone(zone: str) -> ZoneMembers:
    """The compute hosts of availability zone ``zone`` and the aggregates
    making it: the members of the aggregates whose ``availability_zone`` is
    ``zone``, or, for the default zone, the hosts in no zone aggregate. 404
    for a zone no aggregate names (other than the default zone)."""
    zoned = AggregateMetadata.objects.filter(key=AZ_KEY)
    named = list(zoned.filter(value=zone).values_list("aggregate_id", flat=True))
    computes = list(Service.objects.filter(binary=Service.COMPUTE).order_by("host").values_list("host", flat=True))
    if named:
        members = set(AggregateHost.objects.filter(aggregate_id__in=named).values_list("host", flat=True))
        uuids = [str(u) for u in Aggregate.objects.filter(pk__in=named).values_list("uuid", flat=True)]
        return ZoneMembers([h for h in computes if h in members], uuids)
    if zone == settings.DEFAULT_AVAILABILITY_ZONE:
        in_zones = set(
            AggregateHost.objects.filter(aggregate_id__in=zoned.values("aggregate_id")).values_list("host", flat=True)
        )
        return ZoneMembers([h for h in computes if h not in in_zones], [])
    raise NotFound(f"Availability zone {zone} could not be found.", field="availability_zone")


def zone_of_service(service: Service, host_zones: dict[str, list[str]]) -> str:
    """The AZ Nova reports for a service: internal for non-compute services,
    the comma-joined AZ names of its host's aggregates, else the default zone."""
    if service.binary != Service.COMPUTE:
        return settings.INTERNAL_SERVICE_AVAILABILITY_ZONE
    names = host_zones.get(service.host)
    return ",".join(names) if names else settings.DEFAULT_AVAILABILITY_ZONE


def with_zones(services: Iterable[Service]) -> "list[ZonedService]":
    """``services`` as a list, each with its ``availability_zone`` set (one query for all)."""
    zoned = cast("list[ZonedService]", list(services))
    host_zones = zones_by_host({s.host for s in zoned if s.binary == Service.COMPUTE})
    for service in zoned:
        service.availability_zone = zone_of_service(service, host_zones)
    return zoned


@dataclass
class AvailabilityZone:
    name: str
    available: bool
    # host -> its enabled services, API services left out; None when unavailable.
    hosts: dict[str, list[Service]] | None


def list_availability_zones() -> list[AvailabilityZone]:
    """Every zone some service is in. A zone is available when at least one
    of its services is enabled. Available zones come first; each group is
    sorted by name. An AZ aggregate without hosts names no zone."""
    services = with_zones(Service.objects.order_by("host", "binary"))
    available = sorted({s.availability_zone for s in services if not s.disabled})
    unavailable = sorted({s.availability_zone for s in services if s.disabled} - set(available))
    hosts_of_zone: defaultdict[str, defaultdict[str, list[Service]]] = defaultdict(lambda: defaultdict(list))
    for service in services:
        if not service.disabled and service.binary not in API_BINARIES:
            hosts_of_zone[service.availability_zone][service.host].append(service)
    return [AvailabilityZone(name, True, dict(hosts_of_zone[name])) for name in available] + [
        AvailabilityZone(name, False, None) for name in unavailable
    ]
