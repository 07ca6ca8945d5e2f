"""Server-side filters and sorting of the console's lists (django-filter).
Filters on related rows use ``pk__in`` subqueries, so that they never
duplicate rows or skew the counts annotated on them."""

from typing import TYPE_CHECKING, TypedDict

import django_filters
from django.db.models import Count, OuterRef, QuerySet, Subquery

from aggregates.audit.models import Event
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts.models import Service, ServiceQuerySet
from aggregates.zones.services import AZ_KEY, aggregates_naming, hosts_in_zone

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class AggregateRowAnnotations(TypedDict):
    """What ``aggregate_rows`` adds to each aggregate."""

    zone: str | None
    host_count: int


def zone_subquery() -> Subquery:
    return Subquery(AggregateMetadata.objects.filter(aggregate=OuterRef("pk"), key=AZ_KEY).values("value")[:1])


def aggregate_rows() -> "QuerySet[WithAnnotations[Aggregate, AggregateRowAnnotations]]":
    """Aggregates with their zone and host count, read in the page's own query."""
    return Aggregate.objects.annotate(zone=zone_subquery(), host_count=Count("host_items")).prefetch_related(
        "metadata_items"
    )


class AggregateFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(label="Name contains", lookup_expr="icontains")
    zone = django_filters.CharFilter(label="Zone", method="filter_zone")
    key = django_filters.CharFilter(label="Metadata key", method="filter_key")
    host = django_filters.CharFilter(label="Host", method="filter_host")
    sort = django_filters.OrderingFilter(
        fields=(
            ("name", "name"),
            ("zone", "zone"),
            ("host_count", "hosts"),
            ("created_at", "created"),
            ("updated_at", "updated"),
        )
    )

    class Meta:
        model = Aggregate
        fields: list[str] = []

    def filter_zone(self, queryset: QuerySet[Aggregate], name: str, value: str) -> QuerySet[Aggregate]:
        return queryset.filter(pk__in=aggregates_naming(value))

    def filter_key(self, queryset: QuerySet[Aggregate], name: str, value: str) -> QuerySet[Aggregate]:
        return queryset.filter(pk__in=AggregateMetadata.objects.filter(key=value).values("aggregate"))

    def filter_host(self, queryset: QuerySet[Aggregate], name: str, value: str) -> QuerySet[Aggregate]:
        return queryset.filter(pk__in=AggregateHost.objects.filter(host__icontains=value).values("aggregate"))


STATE_CHOICES = [
    ("up", "up"),
    ("down", "down"),
    ("enabled", "enabled"),
    ("disabled", "disabled"),
    ("attention", "down or disabled"),
]


class HostFilter(django_filters.FilterSet):
    host = django_filters.CharFilter(label="Host contains", lookup_expr="icontains")
    state = django_filters.ChoiceFilter(label="State", choices=STATE_CHOICES, method="filter_state", empty_label="any")
    zone = django_filters.CharFilter(label="Zone", method="filter_zone")
    aggregate = django_filters.CharFilter(label="Aggregate", method="filter_aggregate")
    sort = django_filters.OrderingFilter(fields=(("host", "host"), ("disabled", "status"), ("last_seen_up", "seen")))

    class Meta:
        model = Service
        fields: list[str] = []

    def filter_state(self, queryset: ServiceQuerySet, name: str, value: str) -> ServiceQuerySet:
        if value == "up":
            return queryset.up()
        if value == "down":
            return queryset.down()
        if value == "attention":
            return queryset.filter(disabled=True) | queryset.down()
        return queryset.filter(disabled=value == "disabled")

    def filter_zone(self, queryset: ServiceQuerySet, name: str, value: str) -> ServiceQuerySet:
        """Hosts of the zone; for the default zone, also those no AZ aggregate places."""
        return queryset.filter(host__in=hosts_in_zone(value))

    def filter_aggregate(self, queryset: ServiceQuerySet, name: str, value: str) -> ServiceQuerySet:
        return queryset.filter(host__in=AggregateHost.objects.filter(aggregate__name=value).values("host"))


class EventFilter(django_filters.FilterSet):
    event_type = django_filters.CharFilter(label="Type contains", lookup_expr="icontains")
    object_type = django_filters.ChoiceFilter(
        label="Object type",
        empty_label="any",
        choices=[
            ("aggregate", "aggregate"),
            ("flavor", "flavor"),
            ("service", "service"),
            ("compute_node", "compute node"),
            ("token", "token"),
        ],
    )
    object_id = django_filters.CharFilter(label="Object id", lookup_expr="exact")
    username = django_filters.CharFilter(label="User", lookup_expr="exact")
    priority = django_filters.ChoiceFilter(
        label="Priority", empty_label="any", choices=[("INFO", "info"), ("ERROR", "error")]
    )

    class Meta:
        model = Event
        fields: list[str] = []
