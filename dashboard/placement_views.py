"""The read-only placement pages: resource provider trees with their
inventories, usages, traits and aggregates, read from the configured
placement through the placement client (never from placement's tables), so
that they show what PLACEMENT_URL's placement holds, Corral's own or an
upstream one.

Placement has no bulk read of inventories or usages: a page costs one
listing of the providers (cached, shared with the overview's count) and four
requests per provider shown (inventories, usages, traits, aggregates), so
pages hold ROOTS_PER_PAGE root providers with their trees, and answers are
kept PLACEMENT_CONSOLE_CACHE_SECONDS (a few seconds) for the next render.
When placement cannot be read, the page says why, inside the console's
layout (status 200: the console works, its placement part does not)."""

import uuid as uuid_module
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse

from aggregates import placement_client
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import ComputeNode
from aggregates.placement_client import (
    PlacementClient,
    PlacementError,
    PlacementUnreachable,
    ProviderNotFound,
)

from .console import console_view, page, paginate

ROOTS_PER_PAGE = 20
LIST_TEMPLATE = "dashboard/placement/providers.html"
DETAIL_TEMPLATE = "dashboard/placement/provider.html"
# Requests placement answers for each provider a page shows.
REQUESTS_PER_PROVIDER = 4
# Resource classes shown first, in this order; the others follow by name.
CLASS_ORDER = ("VCPU", "MEMORY_MB", "DISK_GB")

# A provider as placement lists it (uuid, name, generation, tree uuids...).
Provider = dict[str, Any]


def max_age() -> float:
    return settings.PLACEMENT_CONSOLE_CACHE_SECONDS


def placement_source(placement: PlacementClient) -> str:
    if placement.in_process:
        return "Corral's own placement (in process)"
    return f"the placement at {placement.base_url}"


def placement_problem(placement: PlacementClient, exc: PlacementError) -> str:
    """A sentence for the page when placement could not be read."""
    what = "is unreachable" if isinstance(exc, PlacementUnreachable) else "answered with an error"
    return (
        f"Placement ({placement_source(placement)}) {what}, so this page cannot show its resource providers. "
        f"{exc.message}"
    )


def provider_count() -> tuple[int, None] | tuple[None, dict[str, str]]:
    """(number of resource providers, None), or (None, {"label", "detail"})
    saying why it is unknown; from the cached listing the providers page
    also uses."""
    placement = placement_client.client()
    try:
        return placement.provider_count(max_age=max_age()), None
    except PlacementError as exc:
        label = "placement unreachable" if isinstance(exc, PlacementUnreachable) else "placement error"
        return None, {"label": label, "detail": exc.message}


def _class_key(resource_class: str) -> tuple[int, int, str]:
    if resource_class in CLASS_ORDER:
        return (0, CLASS_ORDER.index(resource_class), "")
    return (1, 0, resource_class)


def _corral_names(
    providers: Iterable[Provider], aggregate_uuids: Iterable[str]
) -> tuple[dict[str, str], dict[str, Aggregate]]:
    """Provider uuid -> Corral host (compute nodes' providers have the
    node's uuid), and aggregate uuid -> Corral aggregate."""
    uuids = [p["uuid"] for p in providers]
    hosts = {str(u): h for u, h in ComputeNode.objects.filter(uuid__in=uuids).values_list("uuid", "host")}
    aggregates = {str(a.uuid): a for a in Aggregate.objects.filter(uuid__in=list(aggregate_uuids))}
    return hosts, aggregates


def _details(placement: PlacementClient, provider: Provider) -> dict[str, Any]:
    """What placement holds on one provider (four requests, or none from
    the cache)."""
    provider_uuid = provider["uuid"]
    age = max_age()
    inventories = placement.provider_inventories(provider_uuid, max_age=age)
    usages = placement.provider_usages(provider_uuid, max_age=age)
    traits = placement.provider_traits(provider_uuid, max_age=age)
    aggregates, _generation = placement.provider_aggregates(provider_uuid, max_age=age)
    rows: list[dict[str, Any]] = []
    for resource_class in sorted(inventories, key=_class_key):
        record = inventories[resource_class]
        rows.append(
            {
                **record,
                "resource_class": resource_class,
                "capacity": int((record["total"] - record["reserved"]) * record["allocation_ratio"]),
                "used": usages.get(resource_class, 0),
            }
        )
    return {"provider": provider, "inventories": rows, "traits": traits, "aggregate_uuids": sorted(aggregates)}


def provider_rows(placement: PlacementClient, providers: Sequence[Provider]) -> list[dict[str, Any]]:
    """A row per provider (provider, Corral host, inventories with usage,
    traits, aggregates named when Corral has them). A provider deleted
    since the listing was read is left out."""
    details: list[dict[str, Any]] = []
    for provider in providers:
        try:
            details.append(_details(placement, provider))
        except ProviderNotFound:
            continue
    hosts, aggregates = _corral_names(providers, {u for d in details for u in d["aggregate_uuids"]})
    return [
        {
            "provider": d["provider"],
            "host": hosts.get(d["provider"]["uuid"]),
            "inventories": d["inventories"],
            "traits": d["traits"],
            "aggregates": [(u, aggregates.get(u)) for u in d["aggregate_uuids"]],
        }
        for d in details
    ]


def _by_name(provider: Provider) -> tuple[str, str]:
    return (provider["name"], provider["uuid"])


def _root_of(provider: Provider) -> str:
    return provider.get("root_provider_uuid") or provider["uuid"]


@console_view
def provider_list(request: HttpRequest) -> HttpResponse:
    """Root providers, ROOTS_PER_PAGE at a time (by name, filtered on a part
    of the name), each with its tree below it."""
    placement = placement_client.client()
    search = request.GET.get("name", "").strip()
    context = {"search": search, "tree": [], "placement_source": placement_source(placement)}
    try:
        providers = placement.list_providers(max_age=max_age())
    except PlacementError as exc:
        return page(request, {**context, "placement_error": placement_problem(placement, exc)}, LIST_TEMPLATE)
    roots = sorted((p for p in providers if not p.get("parent_provider_uuid")), key=_by_name)
    if search:
        roots = [p for p in roots if search.lower() in p["name"].lower()]
    current, querystring = paginate(request, roots, per_page=ROOTS_PER_PAGE)
    shown_roots = {p["uuid"] for p in current}
    try:
        rows = provider_rows(placement, sorted((p for p in providers if _root_of(p) in shown_roots), key=_by_name))
    except PlacementError as exc:
        return page(request, {**context, "placement_error": placement_problem(placement, exc)}, LIST_TEMPLATE)
    children: defaultdict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        children[row["provider"].get("parent_provider_uuid")].append(row)
    tree: list[dict[str, Any]] = []

    def walk(row: dict[str, Any], depth: int) -> None:
        tree.append({**row, "depth": depth})
        for child in children.get(row["provider"]["uuid"], []):
            walk(child, depth + 1)

    for row in children.get(None, []):
        walk(row, 0)
    return page(request, {**context, "page": current, "querystring": querystring, "tree": tree}, LIST_TEMPLATE)


def _is_uuid(value: str) -> bool:
    try:
        uuid_module.UUID(value)
    except ValueError:
        return False
    return True


@console_view
def provider_detail(request: HttpRequest, uuid: str) -> HttpResponse:
    """One provider: its inventories with usage, traits, aggregates, parent
    and the other providers of its tree."""
    if not _is_uuid(uuid):
        raise Http404(f"No resource provider with uuid {uuid}.")
    placement = placement_client.client()
    context = {"placement_source": placement_source(placement), "provider_uuid": uuid}
    try:
        provider = placement.get_provider(uuid, max_age=max_age())
        tree = placement.list_providers(in_tree=uuid, max_age=max_age())
        rows: list[dict[str, Any] | None] = [*provider_rows(placement, [provider])]
        (row,) = rows or [None]
    except ProviderNotFound:
        raise Http404(f"No resource provider with uuid {uuid}.") from None
    except PlacementError as exc:
        return page(request, {**context, "placement_error": placement_problem(placement, exc)}, DETAIL_TEMPLATE)
    if row is None:  # deleted between the reads
        raise Http404(f"No resource provider with uuid {uuid}.")
    parent_uuid = provider.get("parent_provider_uuid")
    others = sorted((p for p in tree if p["uuid"] != provider["uuid"]), key=_by_name)
    parent = next((p for p in tree if p["uuid"] == parent_uuid), None) if parent_uuid else None
    if parent_uuid and parent is None:
        parent = {"uuid": parent_uuid, "name": parent_uuid}
    return page(request, {**context, **row, "parent": parent, "others_in_tree": others}, DETAIL_TEMPLATE)
