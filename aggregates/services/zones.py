"""Availability zones: derived from the ``availability_zone`` key of aggregates."""
from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings

from aggregates.models import AggregateHost, AggregateMetadata, Service

AZ_KEY = "availability_zone"

# Services of the API itself: they do not heartbeat, so Nova leaves them out
# of os-services and of the hosts of os-availability-zone/detail.
API_BINARIES = ("nova-osapi_compute", "nova-metadata")


def zones_by_host(hosts=None):
    """Map host -> sorted list of the AZ names of its aggregates (hosts in no
    AZ aggregate are absent). ``hosts`` limits the query."""
    rows = AggregateMetadata.objects.filter(key=AZ_KEY)
    memberships = AggregateHost.objects.filter(aggregate_id__in=rows.values("aggregate_id"))
    if hosts is not None:
        memberships = memberships.filter(host__in=list(hosts))
    az_of_aggregate = dict(rows.values_list("aggregate_id", "value"))
    zones = defaultdict(set)
    for host, aggregate_id in memberships.values_list("host", "aggregate_id"):
        zones[host].add(az_of_aggregate[aggregate_id])
    return {host: sorted(names) for host, names in zones.items()}


def zone_of_service(service, host_zones):
    """The AZ Nova reports for a service: internal for non-compute services,
    the comma-joined AZ names of its host's aggregates, else the default zone."""
    if service.binary != Service.COMPUTE:
        return settings.INTERNAL_SERVICE_AVAILABILITY_ZONE
    names = host_zones.get(service.host)
    return ",".join(names) if names else settings.DEFAULT_AVAILABILITY_ZONE


def with_zones(services):
    """``services`` as a list, each with its ``availability_zone`` set (one query for all)."""
    services = list(services)
    host_zones = zones_by_host({s.host for s in services if s.binary == Service.COMPUTE})
    for service in services:
        service.availability_zone = zone_of_service(service, host_zones)
    return services


@dataclass
class AvailabilityZone:
    name: str
    available: bool
    # host -> its enabled services, API services left out; None when unavailable.
    hosts: dict | None


def list_availability_zones():
    """Every zone some service is in. A zone is available when at least one
    of its services is enabled. Available zones come first; each group is
    sorted by name. An AZ aggregate without hosts names no zone."""
    services = with_zones(Service.objects.order_by("host", "binary"))
    available = sorted({s.availability_zone for s in services if not s.disabled})
    unavailable = sorted({s.availability_zone for s in services if s.disabled} - set(available))
    hosts_of_zone = defaultdict(lambda: defaultdict(list))
    for service in services:
        if not service.disabled and service.binary not in API_BINARIES:
            hosts_of_zone[service.availability_zone][service.host].append(service)
    return [AvailabilityZone(name, True, dict(hosts_of_zone[name])) for name in available] + [
        AvailabilityZone(name, False, None) for name in unavailable
    ]
