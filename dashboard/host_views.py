"""Compute hosts and availability zones."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from aggregates import placement_client
from aggregates.audit.models import Event
from aggregates.errors import ServiceError
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts import services as host_services
from aggregates.hosts.models import ComputeNode, Service
from aggregates.placement_client import PlacementError
from aggregates.servers.models import instances_by_host, instances_by_node
from aggregates.zones.services import zone_memberships, zone_name, zones_by_host

from . import maintenance_views, queries
from .console import caller_of, console_view, form_error, list_url, page, paginate, redirect_next
from .filters import HostFilter
from .forms import DisableHostForm

ZONE_HOSTS_SHOWN = 40

if TYPE_CHECKING:

    class ShownNode(ComputeNode):
        """A compute node as the host page shows it (for type checking only):
        ``node_usages`` gives it its instances and usage, and where the usage
        was read."""

        instances: int
        used: dict[str, int]
        usage_source: str

        class Meta:
            abstract = True


@console_view
def host_list(request: HttpRequest) -> HttpResponse:
    filtered = HostFilter(request.GET, queryset=queries.compute_services().order_by("host"))
    current, querystring = paginate(request, filtered.qs)
    hosts = [service.host for service in current]
    zones = zones_by_host(hosts)
    memberships = queries.aggregates_by_host(hosts)
    nodes = queries.nodes_by_host(hosts)
    rows = [
        {
            "service": service,
            "zone": zone_name(zones.get(service.host, [])),
            "in_default": service.host not in zones,
            "aggregates": memberships.get(service.host, []),
            "nodes": nodes.get(service.host, []),
        }
        for service in current
    ]
    context = {
        "filter": filtered,
        "page": current,
        "querystring": querystring,
        "rows": rows,
        "back": request.GET.urlencode(),
    }
    return page(request, context, "dashboard/hosts/list.html")


@console_view
@require_POST
def hosts_bulk_status(request: HttpRequest) -> HttpResponse:
    """Enable or disable the hosts checked on the list, all or none (the
    compute API's os-services update for each), then back to the list."""
    back = list_url("dashboard:hosts", request.POST.get("back"))
    hosts = list(dict.fromkeys(request.POST.getlist("host")))
    enable = request.POST.get("action") == "enable"
    if not hosts:
        messages.error(request, "Select the hosts to enable or disable first.")
        return redirect(back)
    form = DisableHostForm(request.POST)
    if not enable and not form.is_valid():
        errors = [str(message) for messages_ in form.errors.values() for message in messages_]
        messages.error(request, f"Nothing was changed: {' '.join(errors)}")
        return redirect(back)
    reason = None if enable else form.cleaned_data["disabled_reason"] or None
    try:
        host_services.update_services(
            caller_of(request), hosts, status="enabled" if enable else "disabled", disabled_reason=reason
        )
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        verb = "Enabled" if enable else "Disabled"
        messages.success(request, f"{verb} {len(hosts)} host(s): {', '.join(hosts)}.")
    return redirect(back)


def _service_or_404(host: str) -> Service:
    service = queries.compute_services().filter(host=host).first()
    if service is None or service.host != host:
        raise Http404(f"Compute host {host} could not be found.")
    return service


@console_view
def host_detail(request: HttpRequest, host: str) -> HttpResponse:
    return _host_page(request, host)


def node_usages(nodes: Sequence[ComputeNode]) -> str | None:
    """Each node with ``used`` (vCPU, RAM, disk allocated), read from placement
    through the placement client (cached PLACEMENT_CONSOLE_CACHE_SECONDS), and
    ``instances`` (the instances on it, as the hypervisor API counts them:
    ``instances_by_node``). When placement cannot be read, the node's stored
    figures stand in and ``usage_source`` says so."""
    counts = instances_by_node(nodes)
    placement = placement_client.client()
    problem = None
    for node in cast("Sequence[ShownNode]", nodes):
        node.instances = counts.get(str(node.uuid), 0)
        stored = {"vcpus": node.vcpus_used, "memory_mb": node.memory_mb_used, "local_gb": node.local_gb_used}
        node.used, node.usage_source = stored, "stored"
        if problem is not None:
            continue
        try:
            usages = placement.provider_usages(node.uuid, max_age=settings.PLACEMENT_CONSOLE_CACHE_SECONDS)
        except PlacementError as exc:
            problem = exc.message
            continue
        node.used = {
            "vcpus": usages.get("VCPU", 0),
            "memory_mb": usages.get("MEMORY_MB", 0),
            "local_gb": usages.get("DISK_GB", 0),
        }
        node.usage_source = "placement"
    return problem


def _host_page(
    request: HttpRequest,
    host: str,
    disable_form: DisableHostForm | None = None,
    status: int = 200,
    maintenance: dict[str, Any] | None = None,
) -> HttpResponse:
    service = _service_or_404(host)
    zones = zone_memberships([host]).get(host, [])
    nodes = queries.nodes_by_host([host]).get(host, [])
    usage_problem = node_usages(nodes)
    context = {
        "service": service,
        "zone": zone_name(sorted({source.zone for source in zones})),
        "zone_sources": zones,
        "aggregates": queries.aggregates_by_host([host]).get(host, []),
        "nodes": nodes,
        "usage_problem": usage_problem,
        "instance_count": instances_by_host([host]).get(host, 0),
        "events": Event.objects.filter(object_type="service", object_id=str(service.id))[:25],
        "disable_form": disable_form or DisableHostForm(),
        "maintenance": maintenance or maintenance_views.maintenance_card(host),
        "canonical_url": reverse("dashboard:host", args=[host]),
    }
    return page(request, context, "dashboard/hosts/detail.html", status)


@console_view
@require_POST
def host_maintenance(request: HttpRequest, host: str) -> HttpResponse:
    """The Maintenance card's form: a preview (the dry-run plan, shown on the
    host page), or, confirmed, the start or stop itself (then the job page)."""
    _service_or_404(host)
    response, card, status = maintenance_views.submit(request, host)
    if response is not None:
        return response
    return _host_page(request, host, status=status, maintenance=card)


@console_view
@require_POST
def host_status(request: HttpRequest, host: str) -> HttpResponse:
    service = _service_or_404(host)
    enable = request.POST.get("action") == "enable"
    form = DisableHostForm(request.POST)
    if enable or form.is_valid():
        try:
            if enable:
                host_services.update_service(caller_of(request), service.uuid, status="enabled")
            else:
                host_services.update_service(
                    caller_of(request),
                    service.uuid,
                    status="disabled",
                    disabled_reason=form.cleaned_data["disabled_reason"] or None,
                )
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Host {host} {'enabled' if enable else 'disabled'}.")
            return redirect_next(request, "dashboard:hosts")
    return _host_page(request, host, disable_form=form, status=400)


@console_view
def zone_list(request: HttpRequest) -> HttpResponse:
    """Every zone, once: the named ones with their aggregates and hosts, the
    default zone with both the hosts no aggregate places and those of
    aggregates that name it, and the internal zone of non-compute services."""
    cards = queries.zone_overview()
    default = settings.DEFAULT_AVAILABILITY_ZONE
    context = {
        "cards": cards,
        # The zones aggregates name, and the hosts only in the default zone, apart.
        "zones": [z for z in cards if z["aggregates"]],
        "default_only": next((z["default_only"] for z in cards if z["name"] == default), []),
        "default_zone": settings.DEFAULT_AVAILABILITY_ZONE,
        "shown": ZONE_HOSTS_SHOWN,
        "aggregate_count": Aggregate.objects.count(),
    }
    return page(request, context, "dashboard/zones.html")
