"""Console overview. Views read through service functions, models and
dashboard.queries (placement through the placement client); they hold no rules."""

from typing import Any

from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse

from aggregates.audit.models import Event
from aggregates.flavors.models import Flavor
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import up_q
from aggregates.mirroring.models import PlacementMirrorRequest, ReconciliationRun

from . import placement_views, queries
from .console import console_view, page

RECENT_EVENTS = 10
ATTENTION_SHOWN = 8


def _host_counts() -> dict[str, int]:
    services = queries.compute_services()
    return services.aggregate(
        total=Count("id"),
        up=Count("id", filter=up_q()),
        disabled=Count("id", filter=Q(disabled=True)),
    )


def _mirror_status() -> dict[str, Any]:
    counts = dict(PlacementMirrorRequest.objects.values_list("status").annotate(n=Count("id")).order_by())
    return {
        "pending": counts.get(PlacementMirrorRequest.PENDING, 0),
        "failed": counts.get(PlacementMirrorRequest.FAILED, 0),
        "oldest_pending": PlacementMirrorRequest.objects.filter(status=PlacementMirrorRequest.PENDING)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first(),
        "last_run": ReconciliationRun.objects.order_by("-started_at", "-id").first(),
    }


def _hosts_needing_attention() -> dict[str, Any]:
    """Down or disabled compute hosts, the first few, and how many there are."""
    hosts = queries.compute_services().filter(Q(disabled=True) | ~up_q()).order_by("host")
    return {"first": list(hosts[:ATTENTION_SHOWN]), "count": hosts.count()}


@console_view
def home(request: HttpRequest) -> HttpResponse:
    hosts = _host_counts()
    providers, providers_unknown = placement_views.provider_count()
    zones = queries.zone_counts()
    context = {
        "counts": {
            "aggregates": Aggregate.objects.count(),
            # As the zones page (and Nova's zone list): zones that hold a host or a service.
            "zones": zones["with_hosts"],
            "zones_empty": zones["empty"],
            "hosts": hosts["total"],
            "hosts_up": hosts["up"],
            "hosts_down": hosts["total"] - hosts["up"],
            "hosts_disabled": hosts["disabled"],
            "flavors": Flavor.objects.count(),
            "providers": providers,
        },
        "providers_unknown": providers_unknown,
        "mirror": _mirror_status(),
        "attention": _hosts_needing_attention(),
        "events": Event.objects.order_by("-id")[:RECENT_EVENTS],
    }
    return page(request, context, "dashboard/home.html")
