"""Scheduling in the console: "why would a boot go where it goes?" The form
is a GET form (the answer is linkable and bookmarkable, a refresh never
re-posts); it calls the scheduler's ``explain_request`` and shows the
placement query, the candidates, the chosen hosts and every host's fate.
Stored decisions (those of boots and of earlier explanations) have their
own page, with the same table."""

import uuid as uuid_module
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qsl

from django import forms
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse

from aggregates.errors import ServiceError
from aggregates.flavors import services as flavor_services
from aggregates.identity import services as identity
from aggregates.identity.caller import Caller
from aggregates.images import services as image_services
from aggregates.images.models import Image
from aggregates.scheduling import services
from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server
from aggregates.zones.services import list_availability_zones

from .console import caller_of, console_view, form_error, page
from .forms import choice_field

MAX_INSTANCES = 1000  # the explain API's own bound (aggregates.scheduling.schemas)
RECENT_DECISIONS = 10
RESULTS = ("chosen", "passed", "rejected")

if TYPE_CHECKING:

    class ShownDecision(SchedulingDecision):
        """A decision as its page shows it (for type checking only):
        ``_summary`` gives it its placement query in readable parts."""

        query_parts: list[str]

        class Meta:
            abstract = True


# The service names the API's fields; the form has its own names.
FORM_FIELD_OF = {
    "flavorRef": "flavor",
    "imageRef": "image",
    "availability_zone": "zone",
    "project_id": "project",
    "num_instances": "num_instances",
}


def flavor_choices(caller: Caller) -> list[tuple[str, str]]:
    rows = flavor_services.visible_flavors(caller).filter(disabled=False).order_by("vcpus", "memory_mb", "name")
    return [
        (flavor.flavorid, f"{flavor.name} — {flavor.vcpus} vCPU, {flavor.memory_mb} MiB, {flavor.root_gb} GiB")
        for flavor in rows
    ]


def image_choices(caller: Caller) -> list[tuple[str, str]]:
    rows = image_services.visible_images(caller).filter(status=Image.ACTIVE).order_by("name", "id")
    return [(str(image.id), image.name or str(image.id)) for image in rows]


def zone_choices() -> list[tuple[str, str]]:
    internal = settings.INTERNAL_SERVICE_AVAILABILITY_ZONE
    return [(zone.name, zone.name) for zone in list_availability_zones() if zone.available and zone.name != internal]


def project_choices() -> list[tuple[str, str]]:
    return [(project.id, project.name) for project in identity.list_projects()]


class ExplainForm(forms.Form):
    flavor = forms.ChoiceField(label="Flavor")
    image = forms.ChoiceField(label="Image", required=False, help_text="Optional: its properties can steer filters.")
    project = forms.CharField(
        label="Project",
        required=False,
        max_length=255,
        help_text="A project id or name (tenant-isolation filters look at it); empty for none.",
        widget=forms.TextInput(attrs={"list": "project-choices", "autocomplete": "off"}),
    )
    zone = forms.ChoiceField(label="Availability zone", required=False)
    num_instances = forms.IntegerField(
        label="Instances", required=False, min_value=1, max_value=MAX_INSTANCES, initial=1
    )

    def __init__(self, *args: Any, caller: Caller, projects: Sequence[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "flavor").choices = [("", "— choose a flavor —")] + flavor_choices(caller)
        choice_field(self, "image").choices = [("", "none")] + image_choices(caller)
        default = settings.DEFAULT_SCHEDULE_ZONE
        choice_field(self, "zone").choices = [("", f"any ({default})" if default else "any")] + zone_choices()
        self.projects = projects

    def clean_project(self) -> str:
        """A project name is taken for its id; anything else is passed as given."""
        value = self.cleaned_data["project"].strip()
        by_name = {name: project_id for project_id, name in self.projects}
        return by_name.get(value, value)


def _explain(request: HttpRequest, form: ExplainForm) -> SchedulingDecision | None:
    data = form.cleaned_data
    try:
        return services.explain_request(
            caller_of(request),
            flavor_ref=data["flavor"],
            image_ref=data["image"] or None,
            availability_zone=data["zone"] or None,
            project_id=data["project"],
            num_instances=data["num_instances"] or 1,
        )
    except ServiceError as exc:
        form_error(form, exc, FORM_FIELD_OF.get(exc.field or ""))
        return None


def readable_query(query: str | None) -> list[str]:
    """The placement query's parameters with their values unquoted
    (``resources=VCPU:2,...``), as an operator reads them."""
    return [f"{key}={value}" for key, value in parse_qsl(query or "", keep_blank_values=True)]


def _summary(decision: SchedulingDecision) -> dict[str, int]:
    """Counts per result, for the filter's labels; the readable placement query."""
    cast("ShownDecision", decision).query_parts = readable_query(decision.explanation.get("placement_query"))
    counts = dict.fromkeys(RESULTS, 0)
    for row in decision.explanation.get("hosts", []):
        counts[row.get("result")] = counts.get(row.get("result"), 0) + 1
    return counts


@console_view
def explain(request: HttpRequest) -> HttpResponse:
    """The explain form; with ``flavor`` in the query string, its answer."""
    projects = project_choices()
    submitted = "flavor" in request.GET
    form = ExplainForm(request.GET if submitted else None, caller=caller_of(request), projects=projects)
    decision = None
    if submitted and form.is_valid():
        decision = _explain(request, form)
    context = {
        "form": form,
        "projects": projects,
        "decision": decision,
        "counts": _summary(decision) if decision else None,
        "recent": SchedulingDecision.objects.all()[:RECENT_DECISIONS],
    }
    return page(request, context, "dashboard/scheduling/explain.html", status=400 if form.errors else 200)


@console_view
def decision_detail(request: HttpRequest, decision_uuid: str) -> HttpResponse:
    try:
        decision = SchedulingDecision.objects.get(uuid=uuid_module.UUID(str(decision_uuid)))
    except (ValueError, SchedulingDecision.DoesNotExist):
        raise Http404(f"Scheduling decision {decision_uuid} could not be found.") from None
    context = {
        "decision": decision,
        "counts": _summary(decision),
        "servers": Server.objects.filter(decision=decision).order_by("launch_index", "id"),
    }
    return page(request, context, "dashboard/scheduling/decision.html")
