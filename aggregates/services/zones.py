"""Availability zones: derived from the ``availability_zone`` key of aggregates."""
from collections import defaultdict

from django.conf import settings

from aggregates.models import AggregateHost, AggregateMetadata, Service

AZ_KEY = "availability_zone"


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


def zone_of_host(host):
    names = zones_by_host([host]).get(host)
    return ",".join(names) if names else settings.DEFAULT_AVAILABILITY_ZONE
