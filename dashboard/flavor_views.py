"""Flavors: list, create, delete and the extra specs editor."""

from django.contrib import messages
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from aggregates.audit.models import Event
from aggregates.errors import NotFound, ServiceError
from aggregates.flavors import services as flavor_services
from aggregates.flavors.models import Flavor, FlavorExtraSpec
from aggregates.identity.models import Project

from .console import caller_of, console_view, form_error, page, paginate
from .forms import ExtraSpecForm, FlavorAccessForm, FlavorForm


@console_view
def flavor_list(request: HttpRequest) -> HttpResponse:
    flavors = Flavor.objects.prefetch_related(
        Prefetch("extra_spec_items", queryset=FlavorExtraSpec.objects.order_by("key"))
    ).order_by("memory_mb", "name")
    search = request.GET.get("name", "").strip()
    if search:
        flavors = flavors.filter(name__icontains=search)
    current, querystring = paginate(request, flavors)
    return page(request, {"page": current, "querystring": querystring, "search": search}, "dashboard/flavors/list.html")


@console_view(form_page=True)
def flavor_create(request: HttpRequest) -> HttpResponse:
    form = FlavorForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            flavor = flavor_services.create_flavor(
                caller_of(request),
                name=data["name"],
                flavorid=data["id"] or None,
                ram=data["ram"],
                vcpus=data["vcpus"],
                disk=data["disk"],
                ephemeral=data["ephemeral"] or 0,
                swap=data["swap"] or 0,
                is_public=data["is_public"],
                description=data["description"] or None,
            )
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Flavor {flavor.name} created.")
            return redirect("dashboard:flavor", flavor.flavorid)
    return page(request, {"form": form}, "dashboard/flavors/create.html", 400 if form.is_bound else 200)


def _flavor_or_404(request: HttpRequest, flavorid: str) -> Flavor:
    try:
        return flavor_services.get_flavor(caller_of(request), flavorid)
    except NotFound as exc:
        raise Http404(exc.message)


def _flavor_page(
    request: HttpRequest,
    flavorid: str,
    spec_form: ExtraSpecForm | None = None,
    access_form: FlavorAccessForm | None = None,
    status: int = 200,
) -> HttpResponse:
    flavor = _flavor_or_404(request, flavorid)
    project_ids = flavor_services.projects_of(flavor)
    names = dict(Project.objects.filter(pk__in=project_ids).values_list("id", "name"))
    context = {
        "flavor": flavor,
        "extra_specs": flavor_services.extra_specs_of(flavor),
        "projects": [{"id": pid, "name": names.get(pid)} for pid in project_ids],
        "spec_form": spec_form or ExtraSpecForm(),
        "access_form": access_form or FlavorAccessForm(),
        "events": Event.objects.filter(object_type="flavor", object_id=flavor.flavorid)[:20],
    }
    if status != 200:
        context["canonical_url"] = (
            _access_url(flavor.flavorid) if access_form else reverse("dashboard:flavor", args=[flavorid])
        )
    return page(request, context, "dashboard/flavors/detail.html", status)


@console_view
def flavor_detail(request: HttpRequest, flavorid: str) -> HttpResponse:
    return _flavor_page(request, flavorid)


@console_view
@require_POST
def flavor_set_spec(request: HttpRequest, flavorid: str) -> HttpResponse:
    _flavor_or_404(request, flavorid)
    form = ExtraSpecForm(request.POST)
    if form.is_valid():
        key, value = form.cleaned_data["key"], form.cleaned_data["value"]
        try:
            flavor_services.set_extra_specs(caller_of(request), flavorid, {key: value})
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Extra spec {key} set.")
            return redirect("dashboard:flavor", flavorid)
    return _flavor_page(request, flavorid, spec_form=form, status=400)


def _access_url(flavorid: str) -> str:
    return reverse("dashboard:flavor", args=[flavorid]) + "#access"


@console_view
@require_POST
def flavor_add_access(request: HttpRequest, flavorid: str) -> HttpResponse:
    """Give a project (named by name or id) access to a private flavor, as
    the compute API's addTenantAccess does."""
    _flavor_or_404(request, flavorid)
    form = FlavorAccessForm(request.POST)
    if form.is_valid():
        project = form.cleaned_data["project"]
        try:
            flavor_services.add_tenant_access(caller_of(request), flavorid, project.id)
        except ServiceError as exc:
            form_error(form, exc, field="project")
        else:
            messages.success(request, f"Project {project.name} ({project.id}) may now use this flavor.")
            return redirect(_access_url(flavorid))
    return _flavor_page(request, flavorid, access_form=form, status=400)


@console_view
@require_POST
def flavor_remove_access(request: HttpRequest, flavorid: str) -> HttpResponse:
    """Withdraw a project's access, as removeTenantAccess does."""
    project_id = request.POST.get("project_id", "")
    try:
        flavor_services.remove_tenant_access(caller_of(request), flavorid, project_id)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        project = Project.objects.filter(pk=project_id).first()
        named = f"{project.name} ({project_id})" if project else project_id
        messages.success(request, f"Project {named} no longer has access to this flavor.")
    return redirect(_access_url(flavorid))


@console_view
@require_POST
def flavor_delete_spec(request: HttpRequest, flavorid: str) -> HttpResponse:
    key = request.POST.get("key", "")
    try:
        flavor_services.delete_extra_spec(caller_of(request), flavorid, key)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Extra spec {key} removed.")
    return redirect("dashboard:flavor", flavorid)


@console_view
@require_POST
def flavor_delete(request: HttpRequest, flavorid: str) -> HttpResponse:
    flavor = _flavor_or_404(request, flavorid)
    try:
        flavor_services.delete_flavor(caller_of(request), flavorid)
    except ServiceError as exc:
        messages.error(request, exc.message)
        return redirect("dashboard:flavor", flavorid)
    messages.success(request, f"Flavor {flavor.name} deleted.")
    return redirect("dashboard:flavors")
