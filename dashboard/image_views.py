"""Images: list, detail (properties, size, checksums, members), upload,
delete, deactivate and reactivate, and sharing with projects.

The upload form works without JavaScript (the file comes with the form and
is streamed from Django's upload temp file to the service). With JavaScript
(``dashboard/image_upload.js``) the form creates the image first (JSON
answer), then sends the file alone to ``images/<id>/upload/``, which streams
the request body to the same service function and lets the browser show
upload progress."""

import uuid
from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from aggregates.audit.models import Event
from aggregates.errors import NotFound, ServiceError
from aggregates.identity.models import Project
from aggregates.images import activation, storage
from aggregates.images import members as image_members
from aggregates.images import services as image_services
from aggregates.images.models import Image
from aggregates.precache import services as precache_services

from .console import caller_of, console_view, form_error, page, paginate
from .forms import FlavorAccessForm, choice_field

CREATE_FIELDS = ("name", "disk_format", "container_format", "visibility", "owner", "min_disk", "min_ram", "protected")


class ImageForm(forms.Form):
    name = forms.CharField(max_length=255)
    disk_format = forms.ChoiceField(choices=[(f, f) for f in image_services.DISK_FORMATS], initial="qcow2")
    container_format = forms.ChoiceField(choices=[(f, f) for f in image_services.CONTAINER_FORMATS], initial="bare")
    visibility = forms.ChoiceField(choices=[(v, v) for v in image_services.VISIBILITIES], initial=Image.SHARED)
    owner = forms.ChoiceField(label="Project", help_text="The project that owns the image.")
    min_disk = forms.IntegerField(label="Min disk (GiB)", min_value=0, initial=0, required=False)
    min_ram = forms.IntegerField(label="Min RAM (MiB)", min_value=0, initial=0, required=False)
    protected = forms.BooleanField(required=False, help_text="A protected image cannot be deleted.")
    file = forms.FileField(required=False, help_text="The image data; it can also be uploaded later.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        projects = image_services.projects_for_owner_choice()
        choice_field(self, "owner").choices = projects
        self.fields["owner"].initial = next((pid for pid, name in projects if name == "admin"), None)

    def attributes(self) -> dict[str, Any]:
        """The create body for the service, as the API would pass it."""
        data = self.cleaned_data
        attributes = {key: data[key] for key in CREATE_FIELDS}
        attributes["min_disk"] = data["min_disk"] or 0
        attributes["min_ram"] = data["min_ram"] or 0
        return attributes


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@console_view
def image_list(request: HttpRequest) -> HttpResponse:
    images = image_services.visible_images(caller_of(request)).order_by("-created_at", "-id")
    search = request.GET.get("name", "").strip()
    status = request.GET.get("status", "")
    visibility = request.GET.get("visibility", "")
    if search:
        images = images.filter(name__icontains=search)
    if status in dict(Image.STATUSES):
        images = images.filter(status=status)
    if visibility in image_services.VISIBILITIES:
        images = images.filter(visibility=visibility)
    current, querystring = paginate(request, images)
    context = {
        "page": current,
        "querystring": querystring,
        "search": search,
        "status": status,
        "visibility": visibility,
        "statuses": [s for s, _ in Image.STATUSES],
        "visibilities": image_services.VISIBILITIES,
    }
    return page(request, context, "dashboard/images/list.html")


def _image_or_404(request: HttpRequest, image_id: uuid.UUID) -> Image:
    try:
        return image_services.get_image(caller_of(request), str(image_id))
    except NotFound as exc:
        raise Http404(exc.message)


class ImageMemberForm(FlavorAccessForm):
    """A project to share an image with, by name or id (as the flavor access form)."""


def _image_page(
    request: HttpRequest, image: Image, member_form: ImageMemberForm | None = None, status: int = 200
) -> HttpResponse:
    members: list[dict[str, Any]] = []
    if image.visibility == Image.SHARED:
        rows = image_members.list_members(caller_of(request), str(image.id))
        names = dict(Project.objects.filter(pk__in=[row.member for row in rows]).values_list("id", "name"))
        members = [{"row": row, "name": names.get(row.member)} for row in rows]
    context = {
        "image": image,
        "properties": image_services.properties_of(image),
        "tags": image_services.tags_of(image),
        "members": members,
        "member_form": member_form or ImageMemberForm(),
        "events": Event.objects.filter(object_type="image", object_id=str(image.id))[:20],
        "cached_on": precache_services.cached_hosts_of_image(str(image.id)),
        "held_by": precache_services.hosts_holding_image(str(image.id)),
    }
    return page(request, context, "dashboard/images/detail.html", status)


@console_view
def image_detail(request: HttpRequest, image_id: uuid.UUID) -> HttpResponse:
    return _image_page(request, _image_or_404(request, image_id))


def _members_url(image_id: uuid.UUID) -> str:
    return reverse("dashboard:image", args=[image_id]) + "#members"


@console_view
@require_POST
def image_add_member(request: HttpRequest, image_id: uuid.UUID) -> HttpResponse:
    """Share the image with a project (named by name or id): a pending membership, as the image API's."""
    image = _image_or_404(request, image_id)
    form = ImageMemberForm(request.POST)
    if form.is_valid():
        project = form.cleaned_data["project"]
        try:
            image_members.add_member(caller_of(request), str(image.id), project.id)
        except ServiceError as exc:
            form_error(form, exc, field="project")
        else:
            messages.success(request, f"Image shared with project {project.name} ({project.id}): pending its answer.")
            return redirect(_members_url(image.id))
    return _image_page(request, image, member_form=form, status=400)


@console_view
@require_POST
def image_remove_member(request: HttpRequest, image_id: uuid.UUID) -> HttpResponse:
    project_id = request.POST.get("project_id", "")
    try:
        image_members.remove_member(caller_of(request), str(image_id), project_id)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Project {project_id} is no longer a member of this image.")
    return redirect(_members_url(image_id))


def _activation(request: HttpRequest, image_id: uuid.UUID, action: str) -> HttpResponse:
    move = activation.deactivate_image if action == "deactivate" else activation.reactivate_image
    try:
        image = move(caller_of(request), str(image_id))
    except NotFound as exc:
        raise Http404(exc.message)
    except ServiceError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Image {image.name or image.id} {action}d.")
    return redirect("dashboard:image", image_id)


@console_view
@require_POST
def image_deactivate(request: HttpRequest, image_id: uuid.UUID) -> HttpResponse:
    return _activation(request, image_id, "deactivate")


@console_view
@require_POST
def image_reactivate(request: HttpRequest, image_id: uuid.UUID) -> HttpResponse:
    return _activation(request, image_id, "reactivate")


def _field_of(exc: ServiceError) -> str | None:
    message = exc.message
    return next((name for name in CREATE_FIELDS if f"'{name}'" in message or name in message.split()), None)


@console_view(form_page=True)
def image_create(request: HttpRequest) -> HttpResponse:
    form = ImageForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        caller = caller_of(request)
        try:
            image = image_services.create_image(caller, form.attributes())
        except ServiceError as exc:
            form_error(form, exc, _field_of(exc))
        else:
            detail_url = reverse("dashboard:image", args=[image.id])
            if _wants_json(request):
                upload_url = reverse("dashboard:image_upload", args=[image.id])
                return JsonResponse(
                    {"id": str(image.id), "upload_url": upload_url, "detail_url": detail_url}, status=201
                )
            uploaded = form.cleaned_data.get("file")
            if uploaded:
                try:
                    image_services.upload_image_data(
                        caller, str(image.id), uploaded.chunks(storage.CHUNK_SIZE), expected_size=uploaded.size
                    )
                except ServiceError as exc:
                    messages.error(request, f"Image {image.name} created, but its upload failed: {exc.message}")
                    return redirect(detail_url)
            messages.success(request, f"Image {image.name} created.")
            return redirect(detail_url)
    if _wants_json(request) and request.method == "POST":
        errors = {field: [str(e) for e in errs] for field, errs in form.errors.items()}
        return JsonResponse({"errors": errors}, status=400)
    return page(request, {"form": form}, "dashboard/images/create.html", 400 if form.is_bound else 200)


@console_view
@require_POST
def image_upload(request: HttpRequest, image_id: uuid.UUID) -> HttpResponse:
    """The image data as the raw request body (``application/octet-stream``), streamed."""
    content_length = request.headers.get("Content-Length", "")
    if not content_length.isdigit():
        return JsonResponse({"error": "A Content-Length is required."}, status=411)
    length = int(content_length)
    try:
        image = image_services.upload_image_data(
            caller_of(request), str(image_id), storage.chunks_of(request.read, length), expected_size=length
        )
    except ServiceError as exc:
        return JsonResponse({"error": exc.message}, status=exc.status)
    messages.success(request, f"Image {image.name} uploaded.")
    return JsonResponse({"status": image.status, "size": image.size, "checksum": image.checksum})


@console_view
@require_POST
def image_delete(request: HttpRequest, image_id: uuid.UUID) -> HttpResponse:
    image = _image_or_404(request, image_id)
    try:
        image_services.delete_image(caller_of(request), str(image.id))
    except ServiceError as exc:
        messages.error(request, exc.message)
        return redirect("dashboard:image", image.id)
    messages.success(request, f"Image {image.name or image.id} deleted.")
    return redirect("dashboard:images")
