"""Identity: projects, users and their roles, changed through the same
service functions as the Keystone API (``aggregates.identity.services``)."""

from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from aggregates.audit.models import Event
from aggregates.errors import ServiceError
from aggregates.identity import services as identity
from aggregates.identity.models import Project

from .console import caller_of, console_view, form_error, page
from .forms import choice_field, text_field


class ProjectForm(forms.Form):
    name = text_field("Name", max_length=identity.PROJECT_NAME_MAX)
    description = text_field("Description", required=False, max_length=1000)


class UserForm(forms.Form):
    name = text_field("Name", max_length=identity.USER_NAME_MAX)
    password = forms.CharField(
        label="Password",
        strip=False,
        max_length=4096,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    email = forms.EmailField(label="Email", required=False, max_length=254)
    project = forms.ChoiceField(
        label="Project", required=False, help_text="Granted the role below, and the user's default project."
    )
    role = forms.ChoiceField(label="Role", required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "project").choices = [("", "(none)"), *_project_choices()]
        choice_field(self, "role").choices = _role_choices()
        self.fields["role"].initial = identity.role_id_of("member")


class GrantForm(forms.Form):
    user = forms.ChoiceField(label="User")
    role = forms.ChoiceField(label="Role")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "user").choices = [
            (identity.user_id_of(user), user.get_username()) for user in identity.list_users()
        ]
        choice_field(self, "role").choices = _role_choices()
        self.fields["role"].initial = identity.role_id_of("member")


def _project_choices() -> list[tuple[str, str]]:
    return [(project.id, project.name) for project in identity.list_projects()]


def _role_choices() -> list[tuple[str, str]]:
    return [(identity.role_id_of(name), name) for name in identity.ROLE_NAMES]


# --- projects --------------------------------------------------------------------


def _projects_page(request: HttpRequest, form: ProjectForm | None = None, status: int = 200) -> HttpResponse:
    assignments = identity.list_role_assignments()
    members: dict[str, int] = {}
    for assignment in assignments:
        members[assignment.project.id] = members.get(assignment.project.id, 0) + 1
    projects = [(project, members.get(project.id, 0)) for project in identity.list_projects()]
    context = {"projects": projects, "form": form or ProjectForm()}
    return page(request, context, "dashboard/identity/projects.html", status)


@console_view
def project_list(request: HttpRequest) -> HttpResponse:
    return _projects_page(request)


@console_view
@require_POST
def project_create(request: HttpRequest) -> HttpResponse:
    form = ProjectForm(request.POST)
    if form.is_valid():
        try:
            project = identity.create_project(
                caller_of(request), form.cleaned_data["name"], description=form.cleaned_data["description"]
            )
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Project {project.name} created.")
            return redirect("dashboard:project", project.id)
    return _projects_page(request, form, status=400)


def _project_or_404(project_id: str) -> Project:
    project = identity.get_project(project_id)
    if project is None:
        raise Http404(f"Could not find project: {project_id}.")
    return project


def _project_page(
    request: HttpRequest, project_id: str, form: GrantForm | None = None, status: int = 200
) -> HttpResponse:
    project = _project_or_404(project_id)
    context = {
        "project": project,
        "assignments": identity.list_role_assignments(project_id=project.id),
        "form": form or GrantForm(),
        "events": Event.objects.filter(object_type="project", object_id=project.id)[:20],
    }
    return page(request, context, "dashboard/identity/project.html", status)


@console_view
def project_detail(request: HttpRequest, project_id: str) -> HttpResponse:
    return _project_page(request, project_id)


@console_view
@require_POST
def project_grant(request: HttpRequest, project_id: str) -> HttpResponse:
    _project_or_404(project_id)
    form = GrantForm(request.POST)
    if form.is_valid():
        user_id, role_id = form.cleaned_data["user"], form.cleaned_data["role"]
        try:
            identity.grant_role(caller_of(request), project_id, user_id, role_id)
        except ServiceError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Role {identity.role_named(role_id)} granted.")
            return redirect("dashboard:project", project_id)
    return _project_page(request, project_id, form, status=400)


@console_view
@require_POST
def project_revoke(request: HttpRequest, project_id: str) -> HttpResponse:
    role_id = request.POST.get("role_id", "")
    try:
        identity.revoke_role(caller_of(request), project_id, request.POST.get("user_id", ""), role_id)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Role {identity.role_named(role_id)} revoked.")
    return redirect("dashboard:project", project_id)


@console_view
@require_POST
def project_enable(request: HttpRequest, project_id: str) -> HttpResponse:
    enabled = request.POST.get("enabled") == "true"
    try:
        project = identity.update_project(caller_of(request), project_id, enabled=enabled)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Project {project.name} {'enabled' if enabled else 'disabled'}.")
    return redirect("dashboard:project", project_id)


@console_view
@require_POST
def project_delete(request: HttpRequest, project_id: str) -> HttpResponse:
    try:
        identity.delete_project(caller_of(request), project_id)
    except ServiceError as exc:
        messages.error(request, exc.message)
        return redirect("dashboard:projects")
    messages.success(request, "Project deleted. Its servers and images are left as they are.")
    return redirect("dashboard:projects")


# --- users -------------------------------------------------------------------------


def _users_page(request: HttpRequest, form: UserForm | None = None, status: int = 200) -> HttpResponse:
    roles: dict[int, list[str]] = {}
    for assignment in identity.list_role_assignments():
        roles.setdefault(assignment.user.pk, []).append(f"{assignment.role} on {assignment.project.name}")
    users = [
        {"user": user, "id": identity.user_id_of(user), "roles": roles.get(user.pk, [])}
        for user in identity.list_users()
    ]
    return page(request, {"users": users, "form": form or UserForm()}, "dashboard/identity/users.html", status)


@console_view
def user_list(request: HttpRequest) -> HttpResponse:
    return _users_page(request)


@console_view
@require_POST
def user_create(request: HttpRequest) -> HttpResponse:
    """Create a user, and grant it a role on a project when one is chosen
    (``openstack user create --project`` then ``role add``)."""
    form = UserForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        caller = caller_of(request)
        try:
            user = identity.create_user(
                caller,
                data["name"],
                password=data["password"],
                email=data["email"] or None,
                default_project_id=data["project"] or None,
            )
        except ServiceError as exc:
            form_error(form, exc)
        else:
            if data["project"] and data["role"]:
                identity.grant_role(caller, data["project"], identity.user_id_of(user), data["role"])
            messages.success(request, f"User {user.get_username()} created.")
            return redirect(reverse("dashboard:users"))
    return _users_page(request, form, status=400)


@console_view
@require_POST
def user_enable(request: HttpRequest) -> HttpResponse:
    """Disable a user (its tokens are revoked, it can get no new one) or enable it again."""
    enabled = request.POST.get("enabled") == "true"
    try:
        user = identity.update_user(caller_of(request), request.POST.get("user_id", ""), enabled=enabled)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"User {user.get_username()} {'enabled' if enabled else 'disabled'}.")
    return redirect("dashboard:users")


@console_view
@require_POST
def user_delete(request: HttpRequest) -> HttpResponse:
    user_id = request.POST.get("user_id", "")
    try:
        identity.delete_user(caller_of(request), user_id)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "User deleted; its tokens are revoked.")
    return redirect("dashboard:users")
