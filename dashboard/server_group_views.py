"""Server groups in the console: every project's groups with their policy
and members, a group's page (its members: name, status, host), and, for
admins, create and delete through the server groups' service functions
(the same ones ``/os-server-groups`` calls)."""

import dataclasses

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from aggregates import value_schemas
from aggregates.errors import NotFound, ServiceError
from aggregates.identity import services as identity
from aggregates.server_groups import services
from aggregates.server_groups.models import ServerGroup
from aggregates.server_groups.schemas import positive_integer
from aggregates.servers.models import Server, status_of

from .console import caller_of, console_view, form_error, page, paginate
from .forms import ApiCheckedForm, text_field

POLICY_HELP = {
    ServerGroup.ANTI_AFFINITY: "never two members on one host (or at most “max per host”)",
    ServerGroup.AFFINITY: "every member on the same host",
    ServerGroup.SOFT_ANTI_AFFINITY: "spread the members where possible",
    ServerGroup.SOFT_AFFINITY: "keep the members together where possible",
}


class ServerGroupForm(ApiCheckedForm):
    name = text_field("Name", max_length=255)
    policy = forms.ChoiceField(
        label="Policy",
        choices=[(policy, f"{policy}: {POLICY_HELP[policy]}") for policy, _ in ServerGroup.POLICIES],
        initial=ServerGroup.ANTI_AFFINITY,
    )
    max_server_per_host = text_field(
        "Max members per host", required=False, help_text="anti-affinity only (the 2.64 rule); empty for 1"
    )
    project = text_field("Project", help_text="The project's name or id: its servers may join the group.")
    api_rules = {"name": value_schemas.name, "max_server_per_host": positive_integer}

    def clean_project(self) -> str:
        ref = self.cleaned_data["project"].strip()
        project = identity.get_project(ref) or next(iter(identity.list_projects(name=ref)), None)
        if project is None:
            raise forms.ValidationError(f"No project is named {ref} or has that id.")
        return str(project.id)


@console_view
def group_list(request: HttpRequest) -> HttpResponse:
    views = services.list_groups(caller_of(request), all_projects=True)
    names = {str(project.id): project.name for project in identity.list_projects()}
    current, querystring = paginate(request, views)
    return page(
        request, {"page": current, "querystring": querystring, "projects": names}, "dashboard/server_groups/list.html"
    )


@console_view(form_page=True)
def group_create(request: HttpRequest) -> HttpResponse:
    form = ServerGroupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        rules = {"max_server_per_host": int(data["max_server_per_host"])} if data["max_server_per_host"] else {}
        caller = dataclasses.replace(caller_of(request), project_id=data["project"])
        try:
            view = services.create_group(caller, data["name"], data["policy"], rules)
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Server group {view.group.name} created.")
            return redirect("dashboard:server_group", str(view.group.uuid))
    return page(request, {"form": form}, "dashboard/server_groups/create.html", 400 if form.is_bound else 200)


@console_view
def group_detail(request: HttpRequest, group_uuid: str) -> HttpResponse:
    try:
        view = services.get_group(caller_of(request), group_uuid)
    except NotFound as exc:
        raise Http404(exc.message)
    servers = {str(s.uuid): s for s in Server.objects.filter(uuid__in=view.members)}
    shown = [servers[uuid] for uuid in view.members if uuid in servers]
    members = [{"uuid": str(server.uuid), "server": server, "status": status_of(server)} for server in shown]
    project = identity.get_project(view.group.project_id)
    context = {
        "group": view.group,
        "members": members,
        "hosts": len({server.host for server in shown if server.host}),
        "project_name": project.name if project else "",
        "policy_help": POLICY_HELP.get(view.group.policy, ""),
    }
    return page(request, context, "dashboard/server_groups/detail.html")


@console_view
@require_POST
def group_delete(request: HttpRequest, group_uuid: str) -> HttpResponse:
    try:
        view = services.get_group(caller_of(request), group_uuid)
        services.delete_group(caller_of(request), group_uuid)
    except NotFound as exc:
        raise Http404(exc.message)
    messages.success(request, f"Server group {view.group.name} deleted; its servers stay where they are.")
    return redirect("dashboard:server_groups")
