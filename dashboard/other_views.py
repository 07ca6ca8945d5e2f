"""The audit log and the read-only placement pages."""
from collections import defaultdict

from django.db.models import Prefetch, Sum
from django.http import Http404

from aggregates.models import Aggregate, ComputeNode, Event
from placement.models import Allocation, Inventory, ResourceProvider

from .console import console_view, page, paginate
from .filters import EventFilter

# --- events ------------------------------------------------------------------


@console_view
def event_list(request):
    filtered = EventFilter(request.GET, queryset=Event.objects.order_by("-id"))
    current, querystring = paginate(request, filtered.qs)
    return page(request, {"filter": filtered, "page": current, "querystring": querystring},
                "dashboard/events.html")


# --- placement ------------------------------------------------------------------


def _corral_names(providers):
    """Provider uuid -> Corral host, and placement aggregate uuid -> Corral aggregate."""
    uuids = [p.uuid for p in providers]
    hosts = {str(u): h for u, h in ComputeNode.objects.filter(uuid__in=uuids).values_list("uuid", "host")}
    aggregate_uuids = {a.uuid for p in providers for a in p.aggregates.all()}
    aggregates = {str(a.uuid): a for a in Aggregate.objects.filter(uuid__in=aggregate_uuids)}
    return hosts, aggregates


def _usage(providers):
    """(provider id, resource class id) -> used amount."""
    rows = (Allocation.objects.filter(resource_provider__in=providers)
            .values_list("resource_provider_id", "resource_class_id").annotate(used=Sum("used")).order_by())
    return {(provider, rc): used for provider, rc, used in rows}


def _provider_rows(providers):
    providers = list(providers)
    hosts, aggregates = _corral_names(providers)
    usage = _usage(providers)
    rows = []
    for provider in providers:
        inventories = [{
            "inventory": inv,
            "capacity": int((inv.total - inv.reserved) * inv.allocation_ratio),
            "used": usage.get((provider.id, inv.resource_class_id), 0),
        } for inv in provider.inventories.all()]
        rows.append({
            "provider": provider,
            "host": hosts.get(provider.uuid),
            "inventories": inventories,
            "traits": [t.name for t in provider.traits.all()],
            "aggregates": [(a.uuid, aggregates.get(a.uuid)) for a in provider.aggregates.all()],
        })
    return rows


def _providers():
    return ResourceProvider.objects.select_related("parent").prefetch_related(
        Prefetch("inventories",
                 queryset=Inventory.objects.select_related("resource_class").order_by("resource_class_id")),
        "traits", "aggregates").order_by("name")


@console_view
def provider_list(request):
    """Root providers, a page at a time, each with its tree below it."""
    roots = ResourceProvider.objects.filter(parent__isnull=True).order_by("name")
    search = request.GET.get("name", "").strip()
    if search:
        roots = roots.filter(name__icontains=search)
    current, querystring = paginate(request, roots)
    root_ids = [p.id for p in current]
    rows = _provider_rows(_providers().filter(root_id__in=root_ids))
    children = defaultdict(list)
    for row in rows:
        children[row["provider"].parent_id].append(row)
    tree = []

    def walk(row, depth):
        tree.append({**row, "depth": depth})
        for child in children.get(row["provider"].id, []):
            walk(child, depth + 1)

    for row in children.get(None, []):
        walk(row, 0)
    return page(request, {"page": current, "querystring": querystring, "tree": tree, "search": search},
                "dashboard/placement/providers.html")


@console_view
def provider_detail(request, uuid):
    provider = _providers().filter(uuid=uuid).first()
    if provider is None:
        raise Http404(f"No resource provider with uuid {uuid}.")
    row = _provider_rows([provider])[0]
    tree = _providers().filter(root_id=provider.root_id).exclude(id=provider.id)
    return page(request, {**row, "others_in_tree": list(tree)}, "dashboard/placement/provider.html")
