"""The header's global search: hosts, aggregates, flavors and resource
providers by name or UUID, a few of each, each linking to its page."""

import uuid
from typing import Any

from django.db.models import Q
from django.http import HttpRequest, HttpResponse

from aggregates import placement_client
from aggregates.flavors.models import Flavor
from aggregates.host_aggregates.models import Aggregate
from aggregates.placement_client import PlacementError

from . import placement_views, queries
from .console import console_view, page

SHOWN = 20


def _providers(term: str) -> tuple[list[dict[str, Any]], str | None]:
    placement = placement_client.client()
    try:
        providers = placement.list_providers(max_age=placement_views.max_age())
    except PlacementError as exc:
        return [], placement_views.placement_problem(placement, exc)
    needle = term.lower()
    found = [p for p in providers if needle in p["name"].lower() or needle in p["uuid"].lower()]
    return sorted(found, key=lambda p: p["name"])[:SHOWN], None


def _as_uuid(term: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(term)
    except ValueError:
        return None


@console_view
def search(request: HttpRequest) -> HttpResponse:
    term = request.GET.get("q", "").strip()[:255]
    results: dict[str, list[Any]] = {"hosts": [], "aggregates": [], "flavors": [], "providers": []}
    placement_error = None
    if term:
        by_uuid = Q(uuid=_as_uuid(term)) if _as_uuid(term) else Q(pk__in=[])
        results["hosts"] = list(
            queries.compute_services().filter(Q(host__icontains=term) | by_uuid).order_by("host")[:SHOWN]
        )
        results["aggregates"] = list(
            Aggregate.objects.filter(Q(name__icontains=term) | by_uuid).order_by("name")[:SHOWN]
        )
        results["flavors"] = list(
            Flavor.objects.filter(Q(name__icontains=term) | Q(flavorid__iexact=term)).order_by("name")[:SHOWN]
        )
        results["providers"], placement_error = _providers(term)
    context = {
        "q": term,
        "results": results,
        "total": sum(len(items) for items in results.values()),
        "shown": SHOWN,
        "placement_error": placement_error,
    }
    return page(request, context, "dashboard/search.html")
