"""Aggregates: list, create, detail, edit, metadata, hosts and delete."""

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from aggregates.audit.models import Event
from aggregates.errors import NotFound, ServiceError
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate
from aggregates.zones.services import AZ_KEY, ZoneSource, zone_memberships

from . import mirror_states, queries
from .console import caller_of, console_view, form_error, list_url, page, paginate
from .filters import AggregateFilter, AggregateRowAnnotations, aggregate_rows
from .forms import AggregateCreateForm, AggregateEditForm, BaseMetadataFormSet, HostsForm, MetadataFormSet

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

PICKER_LIMIT = 25
HOSTS_PER_PAGE = 50
EVENTS_SHOWN = 12


def _aggregate_or_404(aggregate_id: int) -> Aggregate:
    try:
        return services.get_aggregate(aggregate_id)
    except NotFound as exc:
        raise Http404(exc.message)


# --- list ------------------------------------------------------------------


@console_view
def aggregate_list(request: HttpRequest) -> HttpResponse:
    filtered = AggregateFilter(request.GET, queryset=aggregate_rows().order_by("name"))
    rows = filtered.qs
    if request.GET.get("format") == "csv":
        return _csv(rows.prefetch_related("host_items"))
    current, querystring = paginate(request, rows)
    context = {
        "filter": filtered,
        "page": current,
        "querystring": querystring,
        "metadata_keys": queries.metadata_keys(),
        "back": request.GET.urlencode(),
    }
    return page(request, context, "dashboard/aggregates/list.html")


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> str:
    """A CSV cell a spreadsheet will not run: text that starts like a formula
    (``=``, ``+``, ``-``, ``@``, tab, carriage return) gets a leading ``'``."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _csv(rows: "Iterable[WithAnnotations[Aggregate, AggregateRowAnnotations]]") -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="aggregates.csv"'
    writer = csv.writer(response)
    writer.writerow(["id", "uuid", "name", "availability_zone", "host_count", "hosts", "metadata", "created_at"])
    for aggregate in rows:
        metadata = ";".join(f"{m.key}={m.value}" for m in aggregate.metadata_items.all())
        writer.writerow(
            csv_cell(value)
            for value in [
                aggregate.id,
                aggregate.uuid,
                aggregate.name,
                aggregate.zone or "",
                aggregate.host_count,
                " ".join(services.hosts_of(aggregate)),
                metadata,
                aggregate.created_at.isoformat(),
            ]
        )
    return response


def _selected_ids(values: Iterable[str]) -> list[int]:
    return list(dict.fromkeys(int(value) for value in values if value.isdigit()))


@console_view(form_page=True)
def aggregate_bulk_delete(request: HttpRequest) -> HttpResponse:
    """Delete the aggregates checked on the list: GET shows what would be
    deleted and asks to confirm; POST deletes them all or none, then goes back
    to the list with its filters."""
    source = request.POST if request.method == "POST" else request.GET
    back = source.get("back", "")
    ids = _selected_ids(source.getlist("id"))
    if not ids:
        messages.error(request, "Select the aggregates to delete first.")
        return redirect(list_url("dashboard:aggregates", back))
    if request.method == "POST":
        try:
            names = services.delete_aggregates(caller_of(request), ids)
        except ServiceError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Deleted {len(names)} aggregate(s): {', '.join(names)}.")
        return redirect(list_url("dashboard:aggregates", back))
    aggregates = list(aggregate_rows().filter(pk__in=ids).order_by("name"))
    if not aggregates:
        messages.error(request, "None of the selected aggregates exists any more.")
        return redirect(list_url("dashboard:aggregates", back))
    context = {
        "aggregates": aggregates,
        "not_empty": [a for a in aggregates if a.host_count],
        "back": back,
        "back_url": list_url("dashboard:aggregates", back),
    }
    return page(request, context, "dashboard/aggregates/bulk_delete.html")


# --- create ----------------------------------------------------------------


@console_view(form_page=True)
def aggregate_create(request: HttpRequest) -> HttpResponse:
    form = AggregateCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            aggregate = services.create_aggregate_with_hosts(
                caller_of(request), data["name"], data["availability_zone"], data["hosts"], data["metadata"]
            )
        except ServiceError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, _create_refusal(exc, data["name"]))
        else:
            hosts = f" with {', '.join(data['hosts'])}" if data["hosts"] else ""
            keys = f"; metadata {', '.join(data['metadata'])}" if data["metadata"] else ""
            messages.success(request, f"Aggregate {aggregate.name} created{hosts}{keys}.")
            if data["availability_zone"] == settings.DEFAULT_AVAILABILITY_ZONE:
                messages.warning(request, _explicit_default_warning(aggregate.name))
            return redirect("dashboard:aggregate", aggregate.id)
    status = 400 if form.is_bound else 200
    return page(request, {"form": form}, "dashboard/aggregates/create.html", status)


def _create_refusal(exc: ServiceError, name: str) -> str:
    """The service's refusal in the operator's words: the aggregate is named
    as typed (its id was rolled back with it), and nothing was created."""
    message = re.sub(r"\baggregate \d+\b", f"aggregate {name}", exc.message)
    return f"{message} Nothing was created: not the aggregate {name}, nor any of its hosts or metadata."


def _explicit_default_warning(name: str) -> str:
    zone = settings.DEFAULT_AVAILABILITY_ZONE
    return (
        f"{name} names the default zone {zone} explicitly. Its hosts look like any host no aggregate places, but "
        f"they are pinned: they cannot join another zone, and changing the default zone setting will not move "
        f"them. Leave the zone empty to use the default zone."
    )


# --- detail and the forms on it ----------------------------------------------


def _metadata_formset(aggregate: Aggregate, data: Mapping[str, Any] | None = None) -> BaseMetadataFormSet:
    initial = [{"key": m.key, "value": m.value} for m in aggregate.metadata_items.all()]
    return MetadataFormSet(data, initial=initial, prefix="meta")


def _picker(aggregate: Aggregate, search: str, picked: Sequence[str]) -> dict[str, Any]:
    """Registered hosts outside the aggregate that the operator may pick: those
    matching ``search`` (and those ``picked`` already), each with its current
    zone(s) and, when adding it would be refused, why: the service's own
    refusal (``add_host_refusals``), the one the add would then raise.
    Without a search, hosts that another zone holds are left out and only
    counted."""
    candidates = queries.compute_services().exclude(host__in=queries.hosts_of_aggregate(aggregate)).order_by("host")
    hidden = 0
    if search:
        candidates = candidates.filter(Q(host__icontains=search) | Q(host__in=picked))
    else:
        held = services.hosts_held_by_other_zones(aggregate)
        hidden = candidates.filter(host__in=held).count()
        candidates = candidates.filter(Q(host__in=picked) | ~Q(host__in=held))
    shown = list(candidates[:PICKER_LIMIT])
    hosts = [s.host for s in shown]
    sources = zone_memberships(hosts)
    refusals = services.add_host_refusals(aggregate, hosts)
    rows = []
    for service in shown:
        host_sources = sources.get(service.host, [])
        refusal = refusals.get(service.host)
        rows.append(
            {
                "service": service,
                "sources": host_sources,
                "refusal": refusal.error if refusal else None,
                "reason": _explain(aggregate, service.host, refusal, host_sources),
            }
        )
    return {"rows": rows, "hidden": hidden}


def _explain(
    aggregate: Aggregate, host: str, refusal: services.HostRefusal | None, host_sources: Sequence[ZoneSource]
) -> str:
    """The picker's words for a refusal of ``add_host_refusals``: which
    aggregates hold the host in another zone, or how many instances would
    change zone; else the service's message itself."""
    if refusal is None:
        return ""
    if refusal.other_zones:
        via = ", ".join(name for zone, _, name in host_sources if zone in refusal.other_zones)
        return (
            f"{host} is in zone {', '.join(refusal.other_zones)} through {via}; a host can be in only "
            f"one availability zone. Remove it from there first."
        )
    if refusal.instances:
        return (
            f"{host} runs {refusal.instances} instance(s) in the default zone; joining "
            f"{services.availability_zone_of(aggregate)} would move them. Move the instances off the host first."
        )
    return refusal.error.message


def _detail_context(
    request: HttpRequest,
    aggregate: Aggregate,
    metadata_formset: BaseMetadataFormSet | None = None,
    hosts_form: HostsForm | None = None,
) -> dict[str, Any]:
    """The aggregate page: its hosts a page at a time (with their service,
    nodes, zones and mirror state), metadata, events and the forms."""
    hosts_page = Paginator(services.hosts_of(aggregate), HOSTS_PER_PAGE).get_page(request.GET.get("hosts_page"))
    hosts = list(hosts_page)
    nodes = queries.nodes_by_host(hosts)
    service_of = queries.compute_services_by_host(hosts)
    states = mirror_states.mirror_states(aggregate, hosts, nodes)
    zones = zone_memberships(hosts)
    search = request.GET.get("host_q", "").strip()
    # (a bound form's data is the request's QueryDict)
    picked = cast(QueryDict, hosts_form.data).getlist("hosts") if hosts_form is not None else []
    zone = services.availability_zone_of(aggregate)
    return {
        "aggregate": aggregate,
        "zone": zone,
        "metadata": services.metadata_of(aggregate),
        "hosts_page": hosts_page,
        "host_rows": [
            {
                "host": h,
                "service": service_of.get(h),
                "nodes": nodes.get(h, []),
                "mirror": states[h],
                "zones": zones.get(h, []),
            }
            for h in hosts
        ],
        "events": Event.objects.filter(object_type="aggregate", object_id=str(aggregate.id))[:EVENTS_SHOWN],
        "metadata_formset": metadata_formset or _metadata_formset(aggregate),
        "hosts_form": hosts_form,
        "picker": _picker(aggregate, search, picked),
        "picked": picked,
        "host_q": search,
    }


@console_view
def aggregate_detail(request: HttpRequest, aggregate_id: int) -> HttpResponse:
    aggregate = _aggregate_or_404(aggregate_id)
    context = _detail_context(request, aggregate)
    if request.headers.get("X-Console-Fragment") == "picker":
        return page(request, context, "dashboard/aggregates/_picker.html")
    return page(request, context, "dashboard/aggregates/detail.html")


@console_view(form_page=True)
def aggregate_edit(request: HttpRequest, aggregate_id: int) -> HttpResponse:
    aggregate = _aggregate_or_404(aggregate_id)
    current_zone = services.availability_zone_of(aggregate)
    form = AggregateEditForm(request.POST or None, initial={"name": aggregate.name, "availability_zone": current_zone})
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
            form_error(form, exc)
        else:
            messages.success(request, "Aggregate updated." if changes else "Nothing to change.")
            return redirect("dashboard:aggregate", aggregate.id)
    status = 400 if form.is_bound else 200
    return page(request, {"form": form, "aggregate": aggregate}, "dashboard/aggregates/edit.html", status)


@console_view
@require_POST
def aggregate_metadata(request: HttpRequest, aggregate_id: int) -> HttpResponse:
    aggregate = _aggregate_or_404(aggregate_id)
    formset = _metadata_formset(aggregate, request.POST)
    if formset.is_valid():
        current = services.metadata_of(aggregate)
        # Only real changes: a row saved unchanged, or a removed key that is not there, is none.
        changes = {
            key: value
            for key, value in formset.changes().items()
            if (value is None and key in current) or (value is not None and current.get(key) != value)
        }
        if not changes:
            messages.info(request, "Nothing to change: the metadata is as submitted.")
            return redirect(reverse("dashboard:aggregate", args=[aggregate.id]) + "#metadata")
        try:
            services.set_metadata(caller_of(request), aggregate.id, changes)
        except ServiceError as exc:
            formset.non_form_errors().append(exc.message)
        else:
            messages.success(request, f"Metadata saved: {_describe_changes(changes, current)}.")
            if changes.get(AZ_KEY) == settings.DEFAULT_AVAILABILITY_ZONE:
                messages.warning(request, _explicit_default_warning(aggregate.name))
            return redirect(reverse("dashboard:aggregate", args=[aggregate.id]) + "#metadata")
    context = _detail_context(request, aggregate, metadata_formset=formset)
    context["canonical_url"] = reverse("dashboard:aggregate", args=[aggregate.id]) + "#metadata"
    return page(request, context, "dashboard/aggregates/detail.html", status=400)


def _describe_changes(changes: Mapping[str, str | None], current: Mapping[str, str]) -> str:
    added = [f"{k}={v}" for k, v in sorted(changes.items()) if v is not None and k not in current]
    changed = [f"{k}={v}" for k, v in sorted(changes.items()) if v is not None and k in current]
    removed = [k for k, v in sorted(changes.items()) if v is None]
    parts = [
        f"{label} {', '.join(items)}"
        for label, items in (("added", added), ("changed", changed), ("removed", removed))
        if items
    ]
    return "; ".join(parts)


@console_view
@require_POST
def aggregate_add_hosts(request: HttpRequest, aggregate_id: int) -> HttpResponse:
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
    context["canonical_url"] = reverse("dashboard:aggregate", args=[aggregate.id]) + "#add-hosts"
    return page(request, context, "dashboard/aggregates/detail.html", status=400)


@console_view
@require_POST
def aggregate_remove_hosts(request: HttpRequest, aggregate_id: int) -> HttpResponse:
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
def aggregate_delete(request: HttpRequest, aggregate_id: int) -> HttpResponse:
    aggregate = _aggregate_or_404(aggregate_id)
    try:
        services.delete_aggregate(caller_of(request), aggregate.id)
    except ServiceError as exc:
        messages.error(request, exc.message)
        return redirect("dashboard:aggregate", aggregate.id)
    messages.success(request, f"Aggregate {aggregate.name} deleted.")
    return redirect("dashboard:aggregates")
