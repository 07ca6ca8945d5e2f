"""Read-side queries of the console: a bounded number of queries per page,
whatever the number of hosts."""
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from aggregates.models import AggregateHost, AggregateMetadata, ComputeNode, PlacementMirrorRequest, Service
from aggregates.services.zones import AZ_KEY
from placement.models import ResourceProviderAggregate


def up_services_q():
    """Services whose agent reported within SERVICE_DOWN_TIME (Service.is_up, in SQL)."""
    threshold = timezone.now() - timedelta(seconds=settings.SERVICE_DOWN_TIME)
    return Q(forced_down=False) & (Q(last_seen_up__gte=threshold) | Q(last_seen_up__isnull=True,
                                                                       created_at__gte=threshold))


def compute_services():
    return Service.objects.filter(binary=Service.COMPUTE)


def annotate_last_seen(queryset):
    return queryset.annotate(seen=Coalesce("last_seen_up", "created_at"))


def compute_services_by_host(hosts):
    return {s.host: s for s in compute_services().filter(host__in=list(hosts))}


def nodes_by_host(hosts):
    nodes = defaultdict(list)
    for node in ComputeNode.objects.filter(host__in=list(hosts)).order_by("hypervisor_hostname"):
        nodes[node.host].append(node)
    return nodes


def zone_sources(hosts):
    """host -> [(zone, aggregate id, aggregate name)] for the AZ aggregates each host is in."""
    rows = (AggregateHost.objects.filter(host__in=list(hosts), aggregate__metadata_items__key=AZ_KEY)
            .values_list("host", "aggregate__metadata_items__value", "aggregate_id", "aggregate__name")
            .order_by("host", "aggregate__name"))
    sources = defaultdict(list)
    for host, zone, aggregate_id, name in rows:
        sources[host].append((zone, aggregate_id, name))
    return sources


def hosts_in_zones(zones=None, exclude_zone=None):
    """A subquery of the hosts that an aggregate with a zone holds: any zone,
    one of ``zones``, or any zone but ``exclude_zone``."""
    zone_aggregates = AggregateMetadata.objects.filter(key=AZ_KEY)
    if zones is not None:
        zone_aggregates = zone_aggregates.filter(value__in=zones)
    if exclude_zone is not None:
        zone_aggregates = zone_aggregates.exclude(value=exclude_zone)
    return AggregateHost.objects.filter(aggregate__in=zone_aggregates.values("aggregate")).values("host")


def hosts_of_aggregate(aggregate):
    """A subquery of the aggregate's hosts."""
    return AggregateHost.objects.filter(aggregate=aggregate).values("host")


def aggregates_by_host(hosts):
    """host -> [(aggregate id, name)]."""
    memberships = defaultdict(list)
    rows = AggregateHost.objects.filter(host__in=list(hosts)).values_list("host", "aggregate_id", "aggregate__name")
    for host, aggregate_id, name in rows.order_by("aggregate__name"):
        memberships[host].append((aggregate_id, name))
    return memberships


def mirror_states(aggregate, hosts, nodes_of_host):
    """host -> (badge level, label, detail) for ``hosts`` of the aggregate:
    whether placement associates the host's providers with the aggregate,
    else the state of the host's latest outbox row."""
    node_uuids = [str(n.uuid) for nodes in nodes_of_host.values() for n in nodes]
    associated = set(ResourceProviderAggregate.objects.filter(
        aggregate__uuid=str(aggregate.uuid), resource_provider__uuid__in=node_uuids,
    ).values_list("resource_provider__uuid", flat=True))
    latest = {}
    for row in PlacementMirrorRequest.objects.filter(aggregate_uuid=aggregate.uuid, host__in=hosts).order_by("id"):
        latest[row.host] = row
    states = {}
    for host in hosts:
        nodes = nodes_of_host.get(host, [])
        row = latest.get(host)
        if not nodes:
            states[host] = ("bad", "no compute node", "The host has no compute node, so no provider to mirror to.")
        elif all(str(n.uuid) in associated for n in nodes):
            states[host] = ("ok", "in placement", "")
        elif row is not None and row.status == PlacementMirrorRequest.PENDING:
            states[host] = ("warn", "pending", row.last_error or f"attempt {row.attempts}")
        elif row is not None and row.status == PlacementMirrorRequest.FAILED:
            states[host] = ("bad", "failed", row.last_error)
        else:
            states[host] = ("bad", "missing", "Placement lacks the association: run the reconciler "
                                              "(manage.py sync_placement_aggregates).")
    return states


def aggregate_host_names(aggregate):
    return [item.host for item in aggregate.host_items.all()]


def metadata_keys():
    return list(AggregateMetadata.objects.order_by("key").values_list("key", flat=True).distinct())
