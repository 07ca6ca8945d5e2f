"""Read-side queries of the console: a bounded number of queries per page,
whatever the number of hosts."""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db.models import Count, Q, QuerySet

from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts.models import ComputeNode, Service, ServiceQuerySet
from aggregates.zones.services import AZ_KEY, unzoned_hosts, zoned_hosts, zones_by_host


def compute_services() -> ServiceQuerySet:
    return Service.objects.filter(binary=Service.COMPUTE)


def compute_services_by_host(hosts: Iterable[str]) -> dict[str, Service]:
    return {s.host: s for s in compute_services().filter(host__in=list(hosts))}


def nodes_by_host(hosts: Iterable[str]) -> defaultdict[str, list[ComputeNode]]:
    nodes: defaultdict[str, list[ComputeNode]] = defaultdict(list)
    for node in ComputeNode.objects.filter(host__in=list(hosts)).order_by("hypervisor_hostname"):
        nodes[node.host].append(node)
    return nodes


def hosts_of_aggregate(aggregate: Aggregate) -> QuerySet[AggregateHost, Any]:  # rows {"host": ...}
    """A subquery of the aggregate's hosts."""
    return AggregateHost.objects.filter(aggregate=aggregate).values("host")


def aggregates_by_host(hosts: Iterable[str]) -> defaultdict[str, list[tuple[int, str]]]:
    """host -> [(aggregate id, name)]."""
    memberships: defaultdict[str, list[tuple[int, str]]] = defaultdict(list)
    rows = AggregateHost.objects.filter(host__in=list(hosts)).values_list("host", "aggregate_id", "aggregate__name")
    for host, aggregate_id, name in rows.order_by("aggregate__name"):
        memberships[host].append((aggregate_id, name))
    return memberships


def metadata_keys() -> list[str]:
    return list(AggregateMetadata.objects.order_by("key").values_list("key", flat=True).distinct())


def zone_overview() -> list[dict[str, Any]]:
    """Every availability zone the compute API lists, one entry per zone:
    the zones aggregates name, the default zone (hosts no aggregate places,
    and hosts of aggregates that name it explicitly, in one entry) and the
    internal zone of the non-compute services. The overview counts these,
    and the zones page shows them."""
    default = settings.DEFAULT_AVAILABILITY_ZONE
    internal = settings.INTERNAL_SERVICE_AVAILABILITY_ZONE
    aggregates_of_zone: defaultdict[str, list[tuple[int, str]]] = defaultdict(list)
    rows = AggregateMetadata.objects.filter(key=AZ_KEY).values_list("value", "aggregate_id", "aggregate__name")
    for zone, aggregate_id, name in rows.order_by("value", "aggregate__name"):
        aggregates_of_zone[zone].append((aggregate_id, name))
    hosts_of_zone: defaultdict[str, list[str]] = defaultdict(list)
    for host, zones in sorted(zones_by_host().items()):
        for zone in zones:
            hosts_of_zone[zone].append(host)
    default_only = list(unzoned_hosts())
    entries: list[dict[str, Any]] = []
    for name in sorted(set(aggregates_of_zone) | {default}):
        is_default = name == default
        if is_default and not (default_only or aggregates_of_zone.get(name)):
            continue
        placed = hosts_of_zone.get(name, [])
        entries.append(
            {
                "name": name,
                "aggregates": aggregates_of_zone.get(name, []),
                "hosts": sorted(set(placed) | set(default_only)) if is_default else placed,
                "default_only": default_only if is_default else [],
                "explicit_default": is_default and bool(aggregates_of_zone.get(name)),
                "is_default": is_default,
                "internal": False,
            }
        )
    services = list(
        Service.objects.exclude(binary=Service.COMPUTE).order_by("host", "binary").values_list("host", "binary")
    )
    if services:
        entries.append(
            {
                "name": internal,
                "aggregates": [],
                "hosts": sorted({host for host, _ in services}),
                "services": services,
                "default_only": [],
                "explicit_default": False,
                "is_default": False,
                "internal": True,
            }
        )
    return entries


def zone_counts() -> dict[str, int]:
    """How many zones the zones page shows with hosts (as Nova lists them) and
    how many named zones have none yet: two queries, whatever the size."""
    default = settings.DEFAULT_AVAILABILITY_ZONE
    named = dict(
        AggregateMetadata.objects.filter(key=AZ_KEY)
        .values("value")
        .annotate(hosts=Count("aggregate__host_items"))
        .values_list("value", "hosts")
        .order_by()
    )
    services = Service.objects.aggregate(
        default_only=Count("id", filter=Q(binary=Service.COMPUTE) & ~Q(host__in=zoned_hosts())),
        internal=Count("id", filter=~Q(binary=Service.COMPUTE)),
    )
    with_hosts = {zone for zone, hosts in named.items() if hosts}
    if services["default_only"]:
        with_hosts.add(default)
    return {
        "with_hosts": len(with_hosts) + (1 if services["internal"] else 0),
        "empty": len(set(named) - with_hosts),
    }
