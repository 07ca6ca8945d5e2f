"""Address pools: list with usage, create, edit, delete, and the addresses a pool gives."""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from aggregates.addressing import services as addressing
from aggregates.addressing.models import AddressAllocation, AddressPool
from aggregates.audit.models import Event
from aggregates.errors import NotFound, ServiceError
from aggregates.host_aggregates.models import Aggregate

from .console import caller_of, can_change, console_view, form_error, page
from .forms import AddressPoolForm


def _form(data: Any = None, initial: dict[str, Any] | None = None) -> AddressPoolForm:
    names = Aggregate.objects.order_by("name").values_list("name", flat=True)
    return AddressPoolForm(data, initial=initial, aggregates=names)


def _fields(form: AddressPoolForm) -> dict[str, Any]:
    data = form.cleaned_data
    return {
        "name": data["name"],
        "cidr": data["cidr"],
        "gateway": data["gateway"] or "",
        "kind": data["kind"],
        "scope": data["scope"],
        "zone": data["zone"] or None,
        "aggregate": data["aggregate"] or None,
    }


@console_view
def pool_list(request: HttpRequest) -> HttpResponse:
    context = {"pools": addressing.usage(), "auto_assign": settings.AUTO_ASSIGN_FLOATING_IP}
    return page(request, context, "dashboard/addresses/list.html")


@console_view(form_page=True)
def pool_create(request: HttpRequest) -> HttpResponse:
    form = _form(request.POST or None, initial={"kind": "internal", "scope": "global"})
    if request.method == "POST" and form.is_valid():
        try:
            pool = addressing.create_pool(caller_of(request), **_fields(form))
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Address pool {pool.name} created.")
            return redirect("dashboard:address_pool", pool.uuid)
    return page(request, {"form": form}, "dashboard/addresses/create.html", 400 if form.is_bound else 200)


def _pool_or_404(pool_id: str) -> AddressPool:
    try:
        return addressing.get_pool(pool_id)
    except NotFound as exc:
        raise Http404(exc.message)


@console_view
def pool_detail(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    initial = {
        "name": pool.name,
        "cidr": pool.cidr,
        "gateway": pool.gateway,
        "kind": pool.kind,
        "scope": pool.scope,
        "zone": pool.zone,
        "aggregate": pool.aggregate.name if pool.aggregate else "",
    }
    form = _form(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            pool = addressing.update_pool(caller_of(request), str(pool.uuid), _fields(form))
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Address pool {pool.name} saved.")
            return redirect("dashboard:address_pool", pool.uuid)
    held = AddressAllocation.objects.filter(pool=pool).select_related("server").order_by("id")[:200]
    context = {
        "pool": pool,
        "usage": addressing.usage([pool])[0],
        "form": form,
        "held": held,
        "events": Event.objects.filter(object_type="address_pool", object_uuid=str(pool.uuid))[:20],
    }
    status = 400 if form.is_bound else 200
    if not can_change(request):
        context["form"] = None
    return page(request, context, "dashboard/addresses/detail.html", status)


@console_view
@require_POST
def pool_delete(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    try:
        addressing.delete_pool(caller_of(request), str(pool.uuid))
    except ServiceError as exc:
        messages.error(request, exc.message)
        return redirect("dashboard:address_pool", pool.uuid)
    messages.success(request, f"Address pool {pool.name} deleted.")
    return redirect("dashboard:address_pools")
