"""Image members, as Glance v2 keeps them: the projects a ``shared`` image
is shared with, each with its own answer (``pending`` when added, then
``accepted`` or ``rejected`` by the member project).

Who may do what (Glance's default policies): the owner project's members
and admins add and remove members; the member project (or an admin)
answers, never the owner; the owner, admins and readers see every member of
the image, a member project its own membership only. Only ``shared`` images
have members (403, or 404 for a single member, as Glance). Which images a
membership makes visible is ``services.visible_q``.

Each write owns its transaction and records its audit event
(``image.member.create``, ``image.member.update``, ``image.member.delete``).
"""

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from aggregates.errors import Conflict, Forbidden, Invalid, NotFound
from aggregates.identity.caller import MEMBER, Caller
from aggregates.images import services
from aggregates.images.models import Image, ImageMember
from aggregates.images.storage import TooLarge

# Glance's [DEFAULT] image_member_quota.
MEMBER_QUOTA = 128
STATUSES = tuple(status for status, _ in ImageMember.STATUSES)
MAX_MEMBER_LENGTH = 255


def _image(caller: Caller, image_id: str, lock: bool = False) -> Image:
    try:
        return services.locked_image(caller, image_id) if lock else services.get_image(caller, image_id)
    except NotFound:
        raise NotFound(f"Image {image_id} not found.")


def _seen_members(caller: Caller, image: Image) -> QuerySet[ImageMember]:
    """The members of ``image`` the caller may see: all of them for the
    owner, admins and readers; its own membership for a member project."""
    members = ImageMember.objects.filter(image=image)
    if caller.can_read_admin_views or services.is_owner(caller, image):
        return members
    return members.filter(member=caller.project_id) if caller.project_id else members.none()


def _member(caller: Caller, image: Image, member_id: str, lock: bool = False) -> ImageMember:
    members = _seen_members(caller, image)
    found = (members.select_for_update() if lock else members).filter(member=member_id).first()
    if found is None:
        raise NotFound(f"{member_id} not found in the member list of the image {image.id}.")
    return found


def _refused(policy: str) -> str:
    """Glance's words for an action its policy refuses."""
    return f"You are not authorized to complete {policy} action."


def _may_manage(caller: Caller, image: Image) -> bool:
    """Glance's add_member and delete_member: an admin, or a member of the owner project."""
    return caller.is_admin or (MEMBER in caller.roles and services.is_owner(caller, image))


def check_member_id(member_id: object) -> str:
    """The project id of an add-member request (Glance: a non-empty value)."""
    if not member_id:
        raise Invalid("Member can't be empty")
    if not isinstance(member_id, str) or len(member_id) > MAX_MEMBER_LENGTH:
        raise Invalid('Expected a member in the form: {"member": "image_id"}')
    return member_id


def list_members(caller: Caller, image_id: str) -> list[ImageMember]:
    image = _image(caller, image_id)
    if image.visibility != Image.SHARED:
        raise Forbidden(f"Not allowed to list members for image {image.id}: Only shared images have members.")
    return list(_seen_members(caller, image))


def get_member(caller: Caller, image_id: str, member_id: str) -> ImageMember:
    image = _image(caller, image_id)
    if image.visibility != Image.SHARED:
        raise NotFound("Only shared images have members.")
    return _member(caller, image, member_id)


def add_member(caller: Caller, image_id: str, member_id: object) -> ImageMember:
    """Share the image with project ``member_id``: a ``pending`` membership."""
    project = check_member_id(member_id)
    with transaction.atomic():
        image = _image(caller, image_id, lock=True)
        if image.visibility != Image.SHARED:
            raise Forbidden(f"Not allowed to create members for image {image_id}.")
        if not _may_manage(caller, image):
            raise Forbidden(_refused("add_member"))
        if image.members.filter(member=project).exists():
            raise Conflict(f"Member {project} is duplicated for image {image_id}")
        attempted = image.members.count() + 1
        if attempted > MEMBER_QUOTA:
            raise TooLarge(
                f"Image member limit exceeded for image {image_id}: The limit has been exceeded on the number of "
                f"allowed image members for this image. Attempted: {attempted}, Maximum: {MEMBER_QUOTA}"
            )
        now = timezone.now()
        try:
            with transaction.atomic():
                member = ImageMember.objects.create(image=image, member=project, created_at=now, updated_at=now)
        except IntegrityError:
            raise Conflict(f"Member {project} is duplicated for image {image_id}")
        services.record_event(caller, "image.member.create", image, member_id=project, member_status=member.status)
    return member


def update_member(caller: Caller, image_id: str, member_id: str, status: object) -> ImageMember:
    """The member project's answer (``pending``, ``accepted``, ``rejected``);
    the owner may not answer for it (403)."""
    with transaction.atomic():
        image = _image(caller, image_id, lock=True)
        if image.visibility != Image.SHARED:
            raise Forbidden(f"Not allowed to update members for image {image_id}.")
        member = _member(caller, image, member_id, lock=True)
        answering = (
            MEMBER in caller.roles and not services.is_owner(caller, image) and caller.project_id == member.member
        )
        if not (caller.is_admin or answering):
            raise Forbidden(_refused("modify_member"))
        if not isinstance(status, str) or status not in STATUSES:
            raise Invalid('Incorrect request: Status must be "pending", "accepted" or "rejected".')
        member.status = status
        member.updated_at = timezone.now()
        member.save(update_fields=["status", "updated_at"])
        services.record_event(caller, "image.member.update", image, member_id=member.member, member_status=status)
    return member


def remove_member(caller: Caller, image_id: str, member_id: str) -> None:
    with transaction.atomic():
        image = _image(caller, image_id, lock=True)
        if image.visibility != Image.SHARED:
            raise Forbidden(f"Not allowed to delete members for image {image_id}.")
        member = _member(caller, image, member_id, lock=True)
        if not _may_manage(caller, image):
            raise Forbidden(_refused("delete_member"))
        member.delete()
        services.record_event(caller, "image.member.delete", image, member_id=member_id)
