"""Aggregates: list, create, detail, edit, metadata, hosts and delete."""
import csv

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from aggregates import services
from aggregates.models import Event
from aggregates.services.exceptions import NotFound, ServiceError

from . import queries
from .console import caller_of, console_view, form_error, page, paginate
from .filters import AggregateFilter, aggregate_rows
from .forms import AggregateCreateForm, AggregateEditForm, HostsForm, MetadataFormSet

PICKER_LIMIT = 25
HOSTS_PER_PAGE = 50
EVENTS_SHOWN = 12


def _aggregate_or_404(aggregate_id):
    try:
        return services.get_aggregate(aggregate_id)
    except NotFound as exc:
        raise Http404(exc.message)


# --- list ------------------------------------------------------------------


@console_view
def aggregate_list(request):
    filtered = AggregateFilter(request.GET, queryset=aggregate_rows().order_by("name"))
    rows = filtered.qs
    if request.GET.get("format") == "csv":
        return _csv(rows.prefetch_related("host_items"))
    current, querystring = paginate(request, rows)
    return page(request, {"filter": filtered, "page": current, "querystring": querystring,
                          "metadata_keys": queries.metadata_keys()}, "dashboard/aggregates/list.html")


def _csv(rows):
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="aggregates.csv"'
    writer = csv.writer(response)
    writer.writerow(["id", "uuid", "name", "availability_zone", "host_count", "hosts", "metadata", "created_at"])
    for aggregate in rows:
        metadata = ";".join(f"{m.key}={m.value}" for m in aggregate.metadata_items.all())
        writer.writerow([aggregate.id, aggregate.uuid, aggregate.name, aggregate.zone or "", aggregate.host_count,
                         " ".join(queries.aggregate_host_names(aggregate)), metadata,
                         aggregate.created_at.isoformat()])
    return response


# --- create ----------------------------------------------------------------


def _create_error_field(exc):
    if "already exists" in exc.message:
        return "name"
    return "hosts" if "host" in exc.message.lower() else "availability_zone"


@console_view(form_page=True)
def aggregate_create(request):
    form = AggregateCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            aggregate = services.create_aggregate_with_hosts(
                caller_of(request), data["name"], data["availability_zone"], data["hosts"])
        except ServiceError as exc:
            form_error(form, exc, _create_error_field(exc))
        else:
            hosts = f" with {', '.join(data['hosts'])}" if data["hosts"] else ""
            messages.success(request, f"Aggregate {aggregate.name} created{hosts}.")
            return redirect("dashboard:aggregate", aggregate.id)
    status = 400 if form.is_bound else 200
    return page(request, {"form": form}, "dashboard/aggregates/create.html", status)


# --- detail and the forms on it ----------------------------------------------


def _metadata_formset(aggregate, data=None):
    initial = [{"key": m.key, "value": m.value} for m in aggregate.metadata_items.all()]
    return MetadataFormSet(data, initial=initial, prefix="meta")


def _picker(aggregate, search, picked):
    """Registered hosts outside the aggregate that the operator may pick: those
    matching ``search`` (and those ``picked`` already), each with its current
    zone(s) and, when adding it would be refused, the reason. Without a
    search, hosts that another zone holds are left out and only counted."""
    zone = services.availability_zone_of(aggregate)
    candidates = queries.compute_services().exclude(host__in=queries.hosts_of_aggregate(aggregate)).order_by("host")
    hidden = 0
    if search:
        candidates = candidates.filter(Q(host__icontains=search) | Q(host__in=picked))
    elif zone is not None:
        in_other_zones = queries.hosts_in_zones(exclude_zone=zone)
        hidden = candidates.filter(host__in=in_other_zones).count()
        candidates = candidates.filter(Q(host__in=picked) | ~Q(host__in=in_other_zones))
    candidates = list(candidates[:PICKER_LIMIT])
    hosts = [s.host for s in candidates]
    sources = queries.zone_sources(hosts)
    running = {n.host: n.running_vms for nodes in queries.nodes_by_host(hosts).values() for n in nodes}
    rows = []
    for service in candidates:
        host_sources = sources.get(service.host, [])
        other_zones = sorted({z for z, _, _ in host_sources} - {zone})
        reason = ""
        if zone is not None and other_zones:
            via = ", ".join(name for z, _, name in host_sources if z != zone)
            reason = (f"{service.host} is in zone {', '.join(other_zones)} through {via}; a host can be in only "
                      f"one availability zone. Remove it from there first.")
        elif zone is not None and not host_sources and running.get(service.host):
            reason = (f"{service.host} runs {running[service.host]} instance(s) in the default zone; joining "
                      f"{zone} would move them. Move the instances off the host first.")
        rows.append({"service": service, "sources": host_sources, "reason": reason})
    return {"rows": rows, "hidden": hidden}


def _detail_context(request, aggregate, metadata_formset=None, hosts_form=None):
    """The aggregate page: its hosts a page at a time (with their service,
    nodes, zones and mirror state), metadata, events and the forms."""
    hosts_page = Paginator(queries.aggregate_host_names(aggregate), HOSTS_PER_PAGE).get_page(
        request.GET.get("hosts_page"))
    hosts = list(hosts_page)
    nodes = queries.nodes_by_host(hosts)
    service_of = queries.compute_services_by_host(hosts)
    states = queries.mirror_states(aggregate, hosts, nodes)
    zones = queries.zone_sources(hosts)
    search = request.GET.get("host_q", "").strip()
    picked = hosts_form.data.getlist("hosts") if hosts_form is not None else []
    zone = services.availability_zone_of(aggregate)
    return {
        "aggregate": aggregate,
        "zone": zone,
        "metadata": services.metadata_of(aggregate),
        "hosts_page": hosts_page,
        "host_rows": [{"host": h, "service": service_of.get(h), "nodes": nodes.get(h, []),
                       "mirror": states[h], "zones": zones.get(h, [])} for h in hosts],
        "events": Event.objects.filter(object_type="aggregate", object_id=str(aggregate.id))[:EVENTS_SHOWN],
        "metadata_formset": metadata_formset or _metadata_formset(aggregate),
        "hosts_form": hosts_form,
        "picker": _picker(aggregate, search, picked),
        "picked": picked,
        "host_q": search,
    }


@console_view
def aggregate_detail(request, aggregate_id):
    aggregate = _aggregate_or_404(aggregate_id)
    context = _detail_context(request, aggregate)
    if request.headers.get("X-Console-Fragment") == "picker":
        return page(request, context, "dashboard/aggregates/_picker.html")
    return page(request, context, "dashboard/aggregates/detail.html")


@console_view(form_page=True)
def aggregate_edit(request, aggregate_id):
    aggregate = _aggregate_or_404(aggregate_id)
    current_zone = services.availability_zone_of(aggregate)
    form = AggregateEditForm(request.POST or None,
                             initial={"name": aggregate.name, "availability_zone": current_zone})
    if request.method == "POST" and form.is_valid():
        name, zone = form.cleaned_data["name"], form.cleaned_data["availability_zone"] or None
        changes = {}
        if name != aggregate.name:
            changes["name"] = name
        if zone != current_zone:
            changes.update(availability_zone=zone, set_zone=True)
        try:
            if changes:
                services.update_aggregate(caller_of(request), aggregate.id, **changes)
        except ServiceError as exc:
            form_error(form, exc, "name" if "already exists" in exc.message else "availability_zone")
        else:
            messages.success(request, "Aggregate updated." if changes else "Nothing to change.")
            return redirect("dashboard:aggregate", aggregate.id)
    status = 400 if form.is_bound else 200
    return page(request, {"form": form, "aggregate": aggregate}, "dashboard/aggregates/edit.html", status)


@console_view
@require_POST
def aggregate_metadata(request, aggregate_id):
    aggregate = _aggregate_or_404(aggregate_id)
    formset = _metadata_formset(aggregate, request.POST)
    if formset.is_valid():
        changes = formset.changes()
        try:
            services.set_metadata(caller_of(request), aggregate.id, changes)
        except ServiceError as exc:
            formset.non_form_errors().append(exc.message)
        else:
            messages.success(request, f"Metadata saved ({len(changes)} key(s) set or unset).")
            return redirect(reverse("dashboard:aggregate", args=[aggregate.id]) + "#metadata")
    context = _detail_context(request, aggregate, metadata_formset=formset)
    return page(request, context, "dashboard/aggregates/detail.html", status=400)


@console_view
@require_POST
def aggregate_add_hosts(request, aggregate_id):
    aggregate = _aggregate_or_404(aggregate_id)
    submitted = request.POST.getlist("hosts")
    registered = queries.compute_services().filter(host__in=submitted).values_list("host", flat=True)
    form = HostsForm(request.POST, host_choices=sorted(registered))
    if form.is_valid():
        hosts = form.cleaned_data["hosts"]
        try:
            services.add_hosts(caller_of(request), aggregate.id, hosts)
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Added {', '.join(hosts)} to {aggregate.name}.")
            return redirect(reverse("dashboard:aggregate", args=[aggregate.id]) + "#hosts")
    context = _detail_context(request, aggregate, hosts_form=form)
    return page(request, context, "dashboard/aggregates/detail.html", status=400)


@console_view
@require_POST
def aggregate_remove_hosts(request, aggregate_id):
    """Remove one host (a row's button) or the hosts checked in the table: all or none."""
    aggregate = _aggregate_or_404(aggregate_id)
    hosts = list(dict.fromkeys(request.POST.getlist("host")))
    if not hosts:
        messages.error(request, "Select the hosts to remove first.")
        return redirect(reverse("dashboard:aggregate", args=[aggregate.id]) + "#hosts")
    try:
        services.remove_hosts(caller_of(request), aggregate.id, hosts)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Removed {', '.join(hosts)} from {aggregate.name}.")
    return redirect(reverse("dashboard:aggregate", args=[aggregate.id]) + "#hosts")


@console_view
@require_POST
def aggregate_delete(request, aggregate_id):
    aggregate = _aggregate_or_404(aggregate_id)
    try:
        services.delete_aggregate(caller_of(request), aggregate.id)
    except ServiceError as exc:
        messages.error(request, exc.message)
        return redirect("dashboard:aggregate", aggregate.id)
    messages.success(request, f"Aggregate {aggregate.name} deleted.")
    return redirect("dashboard:aggregates")
