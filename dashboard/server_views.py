"""Servers in the console: the list (filters by status, host, project, name;
paged), a server's page (every field, its fault, its scheduling decision),
and, for admins, "Boot server", "Delete", "Resize" and, in VERIFY_RESIZE,
"Confirm resize" and "Revert resize", "Stop", "Start", "Reboot", "Hard
reboot", "Lock" and "Unlock" through the servers' and moves' service
functions (the same ones ``/servers`` and its actions call)."""

import dataclasses
import uuid as uuid_module
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from aggregates import value_schemas
from aggregates.addressing import services as addressing
from aggregates.errors import ServiceError
from aggregates.identity import services as identity
from aggregates.identity.caller import Caller
from aggregates.images.models import Image
from aggregates.moves import confirmation as move_confirmation
from aggregates.moves import services as moves
from aggregates.moves import states as move_states
from aggregates.servers import actions, power, services, tags
from aggregates.servers.models import Server, status_of, status_q

from .console import caller_of, console_view, form_error, page, paginate
from .forms import ApiCheckedForm, choice_field, text_field
from .scheduling_views import flavor_choices, image_choices, project_choices, zone_choices

STATUSES = ["ACTIVE", "BUILD", "MIGRATING", "VERIFY_RESIZE", "SHUTOFF", "ERROR", "SOFT_DELETED", "DELETED"]
SORTS = {
    "name": ("name", "id"),
    "status": ("vm_state", "name"),
    "host": ("host", "name"),
    "created": ("created_at", "id"),
}
MAX_BOOT = services.MAX_SERVERS_PER_REQUEST
FORM_FIELD_OF = {
    "flavorRef": "flavor",
    "imageRef": "image",
    "availability_zone": "zone",
    "min_count": "count",
    "max_count": "count",
    "name": "name",
}


if TYPE_CHECKING:

    class ShownServer(Server):
        """A server as the list shows it (for type checking only): ``_decorate``
        gives it its status, its project's and its flavor's names."""

        status: str
        project_name: str
        flavor_name: str

        class Meta:
            abstract = True


def _decorate(servers: list[Server], projects: Mapping[str, str]) -> list[Server]:
    for server in cast("list[ShownServer]", servers):
        server.status = status_of(server)
        server.project_name = projects.get(server.project_id, "")
        server.flavor_name = (server.flavor or {}).get("original_name") or server.flavorid
    return servers


@console_view
def server_list(request: HttpRequest) -> HttpResponse:
    """Every project's servers (the console is for admins and readers),
    newest first; deleted ones only when asked for by status."""
    rows = Server.objects.select_related("decision")
    status = request.GET.get("status", "").upper()
    condition = status_q(status) if status in STATUSES else None
    if condition is not None:
        rows = rows.filter(condition)
    else:
        status = ""
        rows = rows.exclude(vm_state=Server.DELETED).filter(deleted_at__isnull=True)
    for param, lookup in (("host", "host"), ("project", "project_id"), ("reservation", "reservation_id")):
        value = request.GET.get(param, "").strip()
        if value:
            rows = rows.filter(**{lookup: value})
    name = request.GET.get("name", "").strip()
    if name:
        rows = rows.filter(name__icontains=name)
    sort = request.GET.get("sort", "")
    fields = SORTS.get(sort.lstrip("-"))
    if fields:
        rows = rows.order_by(*(f"-{f}" if sort.startswith("-") else f for f in fields))
    else:
        rows = rows.order_by("-created_at", "-id")
    current, querystring = paginate(request, rows)
    projects = dict(project_choices())
    context = {
        "page": current,
        "servers": _decorate(list(current), projects),
        "querystring": querystring,
        "statuses": STATUSES,
        "status": status,
        "projects": sorted(projects.items(), key=lambda item: item[1]),
    }
    return page(request, context, "dashboard/servers/list.html")


def _server_or_404(server_uuid: str) -> Server:
    try:
        parsed = uuid_module.UUID(str(server_uuid))
    except ValueError:
        parsed = None
    server = Server.objects.select_related("decision").filter(uuid=parsed).first() if parsed else None
    if server is None:
        raise Http404(f"Instance {server_uuid} could not be found.")
    return server


def _image_of(server: Server) -> Image | None:
    try:
        image_id = uuid_module.UUID(server.image_id)
    except ValueError:
        return None
    return Image.objects.filter(pk=image_id).first()


@console_view
def server_detail(request: HttpRequest, server_uuid: str) -> HttpResponse:
    server = _server_or_404(server_uuid)
    project = identity.get_project(server.project_id) if server.project_id else None
    _decorate([server], {server.project_id: project.name} if project else {})
    context = {
        "server": server,
        "project": project,
        "image": _image_of(server),
        "description": services.description_of(server),
        "extra_specs": sorted(((server.flavor or {}).get("extra_specs") or {}).items()),
        "metadata": sorted((server.metadata or {}).items()),
        "tags": tags.tags_of(server),
        "actions": actions.actions_of(server),
        "hints": sorted((server.scheduler_hints or {}).items()),
        "stoppable": server.vm_state in (Server.ACTIVE, Server.ERROR) and server.task_state is None,
        "startable": server.vm_state == Server.STOPPED and server.task_state is None,
        "soft_rebootable": server.vm_state in power.SOFT_REBOOTABLE and server.task_state is None,
        "hard_rebootable": server.vm_state in power.HARD_REBOOTABLE and server.task_state is None,
        "resizable": server.vm_state in (Server.ACTIVE, move_states.STOPPED) and server.task_state is None,
        "verify_resize": server.vm_state == move_states.RESIZED and server.task_state is None,
        "resize_source": moves.resize_source(server) if server.vm_state == move_states.RESIZED else None,
        "resize_flavors": [
            (flavorid, label) for flavorid, label in flavor_choices(caller_of(request)) if flavorid != server.flavorid
        ],
        "addresses": addressing.addresses_of(server),
    }
    return page(request, context, "dashboard/servers/detail.html")


class BootForm(ApiCheckedForm):
    name = text_field("Name", max_length=255)
    flavor = forms.ChoiceField(label="Flavor")
    image = forms.ChoiceField(label="Image")
    zone = forms.ChoiceField(label="Availability zone", required=False)
    count = forms.IntegerField(
        label="Number of servers",
        min_value=1,
        max_value=MAX_BOOT,
        initial=1,
        help_text="All or none: when fewer fit, every one ends in ERROR. Names get -1, -2… when more than one.",
    )
    project = forms.ChoiceField(label="Project", help_text="The project the servers belong to.")
    api_rules = {"name": value_schemas.name}

    def __init__(self, *args: Any, caller: Caller, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "flavor").choices = [("", "— choose a flavor —")] + flavor_choices(caller)
        choice_field(self, "image").choices = [("", "— choose an image —")] + image_choices(caller)
        choice_field(self, "zone").choices = [("", "any")] + zone_choices()
        projects = project_choices()
        choice_field(self, "project").choices = projects
        self.fields["project"].initial = next((pid for pid, name in projects if name == "admin"), None)


@console_view(form_page=True)
def server_create(request: HttpRequest) -> HttpResponse:
    caller = caller_of(request)
    form = BootForm(request.POST if request.method == "POST" else None, caller=caller)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            created = services.create_servers(
                dataclasses.replace(caller, project_id=data["project"]),
                name=data["name"],
                flavor_ref=data["flavor"],
                image_ref=data["image"],
                availability_zone=data["zone"] or None,
                min_count=data["count"],
                max_count=data["count"],
            )
        except ServiceError as exc:
            form_error(form, exc, FORM_FIELD_OF.get(exc.field or ""))
        else:
            count = len(created.servers)
            messages.success(request, f"Booting {count} server(s): reservation {created.reservation_id}.")
            if count == 1:
                return redirect("dashboard:server", created.servers[0].uuid)
            return redirect(reverse("dashboard:servers") + f"?reservation={created.reservation_id}")
    context = {"form": form}
    return page(request, context, "dashboard/servers/create.html", status=400 if form.errors else 200)


@console_view
@require_POST
def server_delete(request: HttpRequest, server_uuid: str) -> HttpResponse:
    server = _server_or_404(server_uuid)
    try:
        services.delete_server(caller_of(request), str(server.uuid))
    except ServiceError as exc:
        messages.error(request, f"Server {server.name} was not deleted: {exc.message}")
        return redirect("dashboard:server", server.uuid)
    server.refresh_from_db()
    if server.vm_state == Server.SOFT_DELETED:
        messages.success(
            request, f"Server {server.name} soft-deleted: it can be restored until it is reclaimed (its host keeps it)."
        )
        return redirect("dashboard:server", server.uuid)
    done = "deleted" if server.vm_state == Server.DELETED else "being deleted"
    messages.success(request, f"Server {server.name} {done}.")
    return redirect("dashboard:servers")


def _act_on_server(
    request: HttpRequest, server_uuid: str, act: Callable[[Caller, str], object], failed: str, done: str
) -> HttpResponse:
    """Run the service function ``act`` on the server, as the API's action
    does; its refusal (after ``failed``) or ``done`` as the message, then
    back to the server's page (``{name}`` in either: the server's name)."""
    server = _server_or_404(server_uuid)
    try:
        act(caller_of(request), str(server.uuid))
    except ServiceError as exc:
        messages.error(request, f"{failed.format(name=server.name)}: {exc.message}")
    else:
        messages.success(request, done.format(name=server.name))
    return redirect("dashboard:server", server.uuid)


@console_view
@require_POST
def server_restore(request: HttpRequest, server_uuid: str) -> HttpResponse:
    """Restore a soft-deleted server (services.restore_server, as the API's restore)."""
    return _act_on_server(
        request, server_uuid, services.restore_server, "Server {name} was not restored", "Server {name} restored."
    )


# --- resize, confirm, revert -----------------------------------------------------------


@console_view
@require_POST
def server_resize(request: HttpRequest, server_uuid: str) -> HttpResponse:
    """Resize to the chosen flavor (moves.services.resize, as the API's resize)."""
    server = _server_or_404(server_uuid)
    flavorid = request.POST.get("flavor", "").strip()
    if not flavorid:
        messages.error(request, f"Server {server.name} was not resized: Choose a flavor.")
        return redirect("dashboard:server", server.uuid)
    try:
        moves.resize(caller_of(request), str(server.uuid), flavorid)
    except ServiceError as exc:
        messages.error(request, f"Server {server.name} was not resized: {exc.message}")
        return redirect("dashboard:server", server.uuid)
    server.refresh_from_db()
    if server.vm_state == move_states.RESIZED:
        flavor = (server.flavor or {}).get("original_name") or server.flavorid
        messages.success(request, f"Server {server.name} resized to {flavor}: confirm or revert it.")
    else:
        messages.warning(request, f"Server {server.name} is {status_of(server)}: see its actions and migrations.")
    return redirect("dashboard:server", server.uuid)


@console_view
@require_POST
def server_confirm_resize(request: HttpRequest, server_uuid: str) -> HttpResponse:
    return _act_on_server(
        request,
        server_uuid,
        move_confirmation.confirm_resize,
        "The resize of server {name} was not confirmed",
        "The resize of server {name} is confirmed: its old host is released.",
    )


@console_view
@require_POST
def server_revert_resize(request: HttpRequest, server_uuid: str) -> HttpResponse:
    return _act_on_server(
        request,
        server_uuid,
        move_confirmation.revert_resize,
        "The resize of server {name} was not reverted",
        "Server {name} is back on its old host with its old flavor.",
    )


# --- power actions and locks -------------------------------------------------------------


@console_view
@require_POST
def server_stop(request: HttpRequest, server_uuid: str) -> HttpResponse:
    """Stop (power.stop_server, as the API's os-stop)."""
    return _act_on_server(
        request, server_uuid, power.stop_server, "Server {name} was not stopped", "Server {name} stopped."
    )


@console_view
@require_POST
def server_start(request: HttpRequest, server_uuid: str) -> HttpResponse:
    """Start (power.start_server, as the API's os-start)."""
    return _act_on_server(
        request, server_uuid, power.start_server, "Server {name} was not started", "Server {name} started."
    )


@console_view
@require_POST
def server_reboot(request: HttpRequest, server_uuid: str) -> HttpResponse:
    """Reboot, SOFT or HARD (power.reboot_server, as the API's reboot)."""
    reboot_type = power.HARD if request.POST.get("type", "").upper() == power.HARD else power.SOFT
    return _act_on_server(
        request,
        server_uuid,
        lambda caller, server_id: power.reboot_server(caller, server_id, reboot_type),
        "Server {name} was not rebooted",
        f"Server {{name}} rebooted ({reboot_type}).",
    )


@console_view
@require_POST
def server_lock(request: HttpRequest, server_uuid: str) -> HttpResponse:
    """Lock, with an optional reason (services.lock_server, as the API's lock)."""
    reason = request.POST.get("reason", "").strip()[:255] or None
    return _act_on_server(
        request,
        server_uuid,
        lambda caller, server_id: services.lock_server(caller, server_id, reason),
        "Server {name} was not locked",
        "Server {name} locked: only admins may change it until it is unlocked.",
    )


@console_view
@require_POST
def server_unlock(request: HttpRequest, server_uuid: str) -> HttpResponse:
    """Unlock (services.unlock_server, as the API's unlock)."""
    return _act_on_server(
        request, server_uuid, services.unlock_server, "Server {name} was not unlocked", "Server {name} unlocked."
    )
