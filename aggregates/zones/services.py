"""Availability zones: derived from the ``availability_zone`` key of aggregates."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, cast

from django.conf import settings
from django.db.models import Q, QuerySet

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


class ZoneSource(NamedTuple):
    """An aggregate that puts a host in a zone."""

    zone: str
    aggregate_id: int
    aggregate_name: str


# --- zone membership: every "hosts in zone X" and "zone of host H" reads these --------------


def zone_memberships(
    hosts: Iterable[str] | None = None, *, excluding: Aggregate | None = None
) -> dict[str, list[ZoneSource]]:
    """host -> the aggregates with a zone that hold it, by host then aggregate
    name (hosts no such aggregate holds, in the default zone, are absent).
    ``hosts`` limits the query; ``excluding`` leaves one aggregate out (the
    zones a host would keep without it). One query."""
    rows = AggregateHost.objects.filter(aggregate__metadata_items__key=AZ_KEY)
    if hosts is not None:
        rows = rows.filter(host__in=list(hosts))
    if excluding is not None:
        rows = rows.exclude(aggregate=excluding)
    found: defaultdict[str, list[ZoneSource]] = defaultdict(list)
    for host, zone, aggregate_id, name in rows.values_list(
        "host", "aggregate__metadata_items__value", "aggregate_id", "aggregate__name"
    ).order_by("host", "aggregate__name", "aggregate_id"):
        found[host].append(ZoneSource(zone, aggregate_id, name))
    return dict(found)


def zones_by_host(hosts: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Map host -> sorted list of the AZ names of its aggregates (hosts in no
    AZ aggregate are absent). ``hosts`` limits the query."""
    return {host: sorted({source.zone for source in sources}) for host, sources in zone_memberships(hosts).items()}


def zone_name(names: Iterable[str]) -> str:
    """The zone Nova reports for a compute host whose aggregates name zones
    ``names`` (one: a host is in one zone): their names comma-joined, else
    the default zone."""
    return ",".join(names) or settings.DEFAULT_AVAILABILITY_ZONE


def zone_of_host(host: str) -> str:
    """The zone of compute host ``host`` (``zone_name`` of its aggregates' zones)."""
    return zone_name(zones_by_host([host]).get(host, []))


def zoned_hosts(zones: Iterable[str] | None = None, *, other_than: str | None = None) -> QuerySet[AggregateHost, str]:
    """A subquery of the hosts that an aggregate with a zone holds: any zone,
    one of ``zones``, or any but ``other_than``."""
    named = AggregateMetadata.objects.filter(key=AZ_KEY)
    if zones is not None:
        named = named.filter(value__in=list(zones))
    if other_than is not None:
        named = named.exclude(value=other_than)
    return AggregateHost.objects.filter(aggregate__in=named.values("aggregate")).values_list("host", flat=True)


def unzoned_hosts() -> QuerySet[Service, str]:
    """The compute hosts no aggregate with a zone holds (by name): the
    default zone's own hosts."""
    return (
        Service.objects.filter(binary=Service.COMPUTE)
        .exclude(host__in=zoned_hosts())
        .order_by("host")
        .values_list("host", flat=True)
    )


def hosts_in_zone(zone: str) -> QuerySet[Service, str]:
    """The compute hosts of zone ``zone`` (by name): those its aggregates
    hold and, for the default zone, also those no aggregate with a zone holds."""
    computes = Service.objects.filter(binary=Service.COMPUTE)
    condition = Q(host__in=zoned_hosts([zone]))
    if zone == settings.DEFAULT_AVAILABILITY_ZONE:
        condition |= ~Q(host__in=zoned_hosts())
    return computes.filter(condition).order_by("host").values_list("host", flat=True)


def aggregates_naming(zone: str) -> QuerySet[AggregateMetadata, int]:
    """A subquery of the ids of the aggregates that name zone ``zone``."""
    return AggregateMetadata.objects.filter(key=AZ_KEY, value=zone).values_list("aggregate_id", flat=True)


@dataclass
class ZoneMembers:
    hosts: list[str]  # the zone's compute hosts, by name
    aggregates: list[str]  # the uuids of the aggregates naming the zone


def zone_members(zone: str) -> ZoneMembers:
    """The compute hosts of availability zone ``zone`` (``hosts_in_zone``)
    and the aggregates naming it; 404 for a zone no aggregate names, other
    than the default zone."""
    aggregates = [
        str(u) for u in Aggregate.objects.filter(pk__in=aggregates_naming(zone)).values_list("uuid", flat=True)
    ]
    if not aggregates and zone != settings.DEFAULT_AVAILABILITY_ZONE:
        raise NotFound(f"Availability zone {zone} could not be found.", field="availability_zone")
    return ZoneMembers(list(hosts_in_zone(zone)), aggregates)


def zone_of_service(service: Service, host_zones: dict[str, list[str]]) -> str:
    """The AZ Nova reports for a service: internal for non-compute services,
    the comma-joined AZ names of its host's aggregates, else the default zone."""
    if service.binary != Service.COMPUTE:
        return settings.INTERNAL_SERVICE_AVAILABILITY_ZONE
    return zone_name(host_zones.get(service.host, []))


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
