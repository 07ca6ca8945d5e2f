"""A project's quotas: its limits and what it uses, changed by admins through
the same service functions (and value schema) as os-quota-sets."""

from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from aggregates.errors import ServiceError
from aggregates.identity import services as identity
from aggregates.identity.models import Project
from aggregates.quotas import schemas
from aggregates.quotas import services as quotas

from .console import caller_of, console_view, form_error, page
from .forms import ApiCheckedForm

# What Nova shows at its newest microversion, in the order of its CLI.
SHOWN = (
    ("instances", "Instances", "servers"),
    ("cores", "Cores", "vCPUs"),
    ("ram", "RAM", "MiB"),
    ("metadata_items", "Metadata items", "per server"),
    ("key_pairs", "Key pairs", "per user"),
    ("server_groups", "Server groups", ""),
    ("server_group_members", "Server group members", "per group"),
)


class QuotaForm(ApiCheckedForm):
    api_rules = {name: schemas.limit_value for name, _, _ in SHOWN}
    force = forms.BooleanField(
        label="Force", required=False, help_text="Set a limit below what the project already uses."
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields = {
            name: forms.IntegerField(label=label, help_text=f"{unit}; -1: unlimited" if unit else "-1: unlimited")
            for name, label, unit in SHOWN
        }
        self.fields = {**fields, "force": self.fields["force"]}


def _project_or_404(project_id: str) -> Project:
    project = identity.get_project(project_id)
    if project is None:
        raise Http404(f"Could not find project: {project_id}.")
    return project


def _page(request: HttpRequest, project: Project, form: QuotaForm | None = None, status: int = 200) -> HttpResponse:
    detail = quotas.detail(project.id)
    defaults = quotas.defaults()
    counted = quotas.counted_resources()
    rows = [
        {
            "name": name,
            "label": label,
            "unit": unit,
            "limit": detail[name].limit,
            "in_use": detail[name].in_use,
            "counted": name in counted,
            "default": defaults[name],
        }
        for name, label, unit in SHOWN
    ]
    if form is None:
        form = QuotaForm(initial={name: detail[name].limit for name, _, _ in SHOWN})
    context = {"project": project, "rows": rows, "form": form, "enforced": quotas.enforced()}
    return page(request, context, "dashboard/identity/quotas.html", status)


@console_view
def project_quotas(request: HttpRequest, project_id: str) -> HttpResponse:
    return _page(request, _project_or_404(project_id))


@console_view
@require_POST
def project_quotas_update(request: HttpRequest, project_id: str) -> HttpResponse:
    """Set the limits that changed (as ``openstack quota set``)."""
    project = _project_or_404(project_id)
    form = QuotaForm(request.POST)
    if form.is_valid():
        current = quotas.limits(project.id)
        changed = {
            name: form.cleaned_data[name]
            for name, _, _ in SHOWN
            if form.cleaned_data[name] is not None and form.cleaned_data[name] != current[name]
        }
        try:
            quotas.update(caller_of(request), project.id, changed, force=form.cleaned_data["force"])
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Quotas of {project.name} saved." if changed else "Nothing changed.")
            return redirect("dashboard:project_quotas", project.id)
    return _page(request, project, form, status=400)


@console_view
@require_POST
def project_quotas_reset(request: HttpRequest, project_id: str) -> HttpResponse:
    """Back to the defaults (as ``DELETE /os-quota-sets/{id}``)."""
    project = _project_or_404(project_id)
    try:
        quotas.delete(caller_of(request), project.id)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Quotas of {project.name} are the defaults again.")
    return redirect("dashboard:project_quotas", project.id)
