"""Images, as Glance v2 keeps them: who sees and changes what, Glance's rules
on core and extra properties, and the data upload (queued -> saving ->
active) and download.

Visibility (``visible_q``, the one rule every reader of images goes through):
an admin or reader sees every image; anyone else sees public and community
images, those their project owns, and ``shared`` images their project is a
member of (``members``): by id whatever the member's answer, in lists once
accepted (or as ``member_status`` asks), as Glance. The rest is 404. Changes
are for the owner project's members and for admins (403 on an image one may
only see); making an image public is for admins (Glance's
``publicize_image``). A deactivated image's data is for admins only.

Each write owns its transaction: the change and its audit event
(``image.create``, ``image.update``, ``image.upload``, ``image.delete``, object
type ``image``) commit together or not at all. An upload streams outside any
transaction: the image is marked ``saving`` first, the data is written to a
temporary file and renamed into place once complete, and only then is the
image made ``active``. A refused or broken upload removes the temporary file
and puts the image back to ``queued``.
"""

import csv
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, BinaryIO

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Prefetch, Q, QuerySet
from django.db.models.expressions import OrderBy
from django.utils import timezone

from aggregates import after_commit
from aggregates.audit import services as events
from aggregates.errors import Conflict, Forbidden, Invalid, NotFound, ServiceError
from aggregates.identity.caller import Caller
from aggregates.identity.models import Project
from aggregates.images import storage
from aggregates.images.models import Image, ImageMember, ImageProperty, ImageTag
from aggregates.images.storage import TooLarge

DISK_FORMATS = ("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop")
CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed")
VISIBILITIES = (Image.PUBLIC, Image.COMMUNITY, Image.SHARED, Image.PRIVATE)
# Glance's statuses (a status filter accepts any of them; Corral's images are queued, saving, active or deactivated).
STATUSES = (
    "queued",
    "saving",
    "active",
    "killed",
    "deleted",
    "pending_delete",
    "deactivated",
    "uploading",
    "importing",
)

# Glance's lists of attributes (glance/api/v2/images.py).
READ_ONLY = (
    "created_at",
    "updated_at",
    "status",
    "checksum",
    "os_hash_algo",
    "os_hash_value",
    "size",
    "virtual_size",
    "direct_url",
    "self",
    "file",
    "schema",
    "id",
    "stores",
)
RESERVED = ("location", "locations", "deleted", "deleted_at")
RESERVED_PREFIX = "os_glance"
# Core attributes one may set (the rest of Glance's base properties are read-only).
SETTABLE = ("name", "visibility", "protected", "os_hidden", "min_disk", "min_ram", "disk_format", "container_format")
CORE = (*SETTABLE, "tags", "owner")

MAX_INT = 2147483647
MAX_KEY_LENGTH = 255
MAX_VALUE_LENGTH = 65535
# Glance's [DEFAULT] image_property_quota and image_tag_quota.
PROPERTY_QUOTA = 128
TAG_QUOTA = 128
# Glance's [DEFAULT] limit_param_default and api_limit_max.
DEFAULT_LIMIT = 25
MAX_LIMIT = 1000
SORT_KEYS = ("name", "status", "container_format", "disk_format", "size", "id", "created_at", "updated_at")
SORT_DIRECTIONS = ("asc", "desc")
# The member_status filter of a list: a membership's status, or "all".
MEMBER_STATUSES = (*(status for status, _ in ImageMember.STATUSES), "all")


class Gone(ServiceError):
    status = 410


class UnsupportedFilter(Invalid):
    pass


# --- who may do what -----------------------------------------------------------


def visible_q(caller: Caller, member_status: str | None = None) -> Q:
    """The images ``caller`` sees. A ``shared`` image shows to the projects
    it is shared with: any membership counts for ``member_status`` None or
    ``"all"`` (a GET by id), only those with that status otherwise (lists)."""
    if caller.can_read_admin_views:
        return Q()
    visible = Q(visibility__in=[Image.PUBLIC, Image.COMMUNITY])
    if caller.project_id:
        visible |= Q(owner=caller.project_id)
        memberships = ImageMember.objects.filter(member=caller.project_id)
        if member_status not in (None, "all"):
            memberships = memberships.filter(status=member_status)
        visible |= Q(visibility=Image.SHARED, pk__in=memberships.values("image_id"))
    return visible


def is_owner(caller: Caller, image: Image) -> bool:
    return bool(caller.project_id) and image.owner == caller.project_id


def check_may(caller: Caller, action: str, image: Image | None = None) -> None:
    """403 unless the policy's rule ``action`` (Glance's name: by default an
    admin, or a member acting on its project's image) allows it."""
    owner = caller.project_id if image is None else image.owner
    if not caller.may(action, {"project_id": owner or None, "owner": owner or None}):
        raise Forbidden(f"You are not authorized to complete {action} action.")


# --- reading -------------------------------------------------------------------


def images_with_details() -> QuerySet[Image]:
    return Image.objects.prefetch_related(
        Prefetch("property_items", queryset=ImageProperty.objects.order_by("name")),
        Prefetch("tag_items", queryset=ImageTag.objects.order_by("value")),
    )


def visible_images(caller: Caller, member_status: str | None = None) -> QuerySet[Image]:
    """The images ``caller`` may show by id (``member_status`` None), or
    list (shared ones by their membership's status, see ``visible_q``)."""
    return images_with_details().filter(visible_q(caller, member_status))


def _parse_id(image_id: object) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(image_id))
    except ValueError:
        return None


def get_image(caller: Caller, image_id: str) -> Image:
    check_may(caller, "get_image")
    parsed = _parse_id(image_id)
    image = visible_images(caller).filter(pk=parsed).first() if parsed else None
    if image is None:
        raise NotFound(f"No image found with ID {image_id}")
    return image


def properties_of(image: Image) -> dict[str, str]:
    return {item.name: item.value for item in image.property_items.all()}


def tags_of(image: Image) -> list[str]:
    return [item.value for item in image.tag_items.all()]


@dataclass
class ImageQuery:
    """What an image list asks for (Glance's query parameters, parsed)."""

    filters: dict[str, str] = field(default_factory=dict)  # core attribute filters, as given
    properties: dict[str, str] = field(default_factory=dict)  # extra property filters
    tags: list[str] = field(default_factory=list)
    sort: list[tuple[str, str]] = field(default_factory=list)  # (key, direction)
    limit: int | None = None
    marker: str | None = None
    updated_since: datetime | None = None  # Nova's changes-since: updated at or after


def parse_in(value: str) -> list[str] | None:
    """The values of an ``in:a,"b,c"`` filter, or None when it is not one."""
    if not value.startswith("in:"):
        return None
    try:
        values = next(csv.reader([value[3:]], skipinitialspace=True, strict=True))
    except (csv.Error, StopIteration):
        raise Invalid(f"Invalid filter value {value}. The quote is not closed.")
    return values


def _bool_filter(key: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on", "t", "y"):
        return True
    if lowered in ("false", "0", "no", "off", "f", "n"):
        return False
    raise Invalid(f"Invalid value '{value}' for '{key}' filter: it must be a boolean.")


def _int_filter(key: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise Invalid(f"Invalid value for {key}: {value!r} is not an integer.")
    if number < 0:
        raise Invalid(f"Invalid value for {key}: it must not be negative.")
    return number


def _filtered(caller: Caller, query: ImageQuery) -> QuerySet[Image]:
    filters = dict(query.filters)
    member_status = filters.pop("member_status", ImageMember.ACCEPTED)
    if member_status not in MEMBER_STATUSES:
        raise Invalid(f"Invalid status: {member_status}")
    images = visible_images(caller, member_status)
    visibility = filters.pop("visibility", None)
    if visibility is not None:
        if visibility not in (*VISIBILITIES, "all"):
            raise Invalid(f"Invalid visibility value: {visibility}")
        if visibility != "all":
            images = images.filter(visibility=visibility)
    elif not caller.can_read_admin_views:
        # Community images are listed only when asked for, or when they are one's own.
        images = images.exclude(Q(visibility=Image.COMMUNITY) & ~Q(owner=caller.project_id or None))
    hidden = filters.pop("os_hidden", None)
    images = images.filter(os_hidden=_bool_filter("os_hidden", hidden) if hidden is not None else False)
    for key in ("id", "name"):
        value = filters.pop(key, None)
        if value is None:
            continue
        values = parse_in(value)
        if key == "id":
            ids = [parsed for parsed in map(_parse_id, values if values is not None else [value]) if parsed]
            images = images.filter(pk__in=ids)
        else:
            images = images.filter(name__in=values) if values is not None else images.filter(name=value)
    status = filters.pop("status", None)
    if status is not None:
        if status not in STATUSES:
            raise Invalid(f"Invalid status value: {status}")
        images = images.filter(status=status)
    for key in ("owner", "disk_format", "container_format"):
        value = filters.pop(key, None)
        if value is not None:
            images = images.filter(**{key: value})
    protected = filters.pop("protected", None)
    if protected is not None:
        images = images.filter(protected=_bool_filter("protected", protected))
    for key, lookup in (("size_min", "size__gte"), ("size_max", "size__lte")):
        value = filters.pop(key, None)
        if value is not None:
            images = images.filter(**{lookup: _int_filter(key, value)})
    for key in ("min_ram", "min_disk"):
        value = filters.pop(key, None)
        if value is not None:
            images = images.filter(**{key: _int_filter(key, value)})
    if filters:
        raise UnsupportedFilter(f"Filtering on {', '.join(sorted(filters))} is not supported.")
    if query.updated_since is not None:
        images = images.filter(updated_at__gte=query.updated_since)
    for tag in query.tags:
        images = images.filter(pk__in=ImageTag.objects.filter(value=tag).values("image_id"))
    for name, value in query.properties.items():
        images = images.filter(pk__in=ImageProperty.objects.filter(name=name, value=value).values("image_id"))
    return images


def _sort_of(query: ImageQuery) -> list[tuple[str, str]]:
    """The requested sort, checked, with created_at and id appended as
    tie-breakers (as Glance does), so that pages never overlap."""
    sort = list(query.sort) or [("created_at", "desc")]
    for key, direction in sort:
        if key not in SORT_KEYS:
            raise Invalid(f"Invalid sort key: {key}. It must be one of the following: {', '.join(SORT_KEYS)}.")
        if direction not in SORT_DIRECTIONS:
            raise Invalid(f"Invalid sort direction: {direction}")
    keys = [key for key, _ in sort]
    if len(set(keys)) != len(keys):
        raise Invalid("Sort keys must be unique.")
    # Glance: the tie-breakers follow a single given direction, else descend.
    default = sort[0][1] if len(sort) == 1 else "desc"
    for key in ("created_at", "id"):
        if key not in keys:
            sort.append((key, default))
    return sort


def _order(sort: list[tuple[str, str]]) -> list[OrderBy]:
    # NULL sorts as the smallest value on every database.
    return [
        F(key).asc(nulls_first=True) if direction == "asc" else F(key).desc(nulls_last=True) for key, direction in sort
    ]


def _after(marker: Image, sort: list[tuple[str, str]]) -> Q:
    """Rows strictly after ``marker`` in the ``sort`` order (NULL smallest)."""
    condition = Q(pk__in=[])
    equal_so_far = Q()
    for key, direction in sort:
        value = getattr(marker, key)
        if direction == "asc":
            beyond = Q(**{f"{key}__isnull": False}) if value is None else Q(**{f"{key}__gt": value})
        else:
            beyond = Q(pk__in=[]) if value is None else Q(**{f"{key}__lt": value}) | Q(**{f"{key}__isnull": True})
        condition |= equal_so_far & beyond
        equal_so_far &= Q(**{f"{key}__isnull": True}) if value is None else Q(**{key: value})
    return condition


def list_images(caller: Caller, query: ImageQuery) -> tuple[list[Image], bool]:
    """One page of the images ``caller`` sees, and whether more may follow."""
    check_may(caller, "get_images")
    limit = DEFAULT_LIMIT if query.limit is None else query.limit
    if limit < 0:
        raise Invalid("limit param must be positive")
    limit = min(limit, MAX_LIMIT)
    sort = _sort_of(query)
    images = _filtered(caller, query).order_by(*_order(sort))
    if query.marker is not None:
        marker_id = _parse_id(query.marker)
        marker = visible_images(caller).filter(pk=marker_id).first() if marker_id else None
        if marker is None:
            raise Invalid(f"No image found with ID {query.marker}")
        images = images.filter(_after(marker, sort))
    page = list(images[: limit + 1])
    return page[:limit], len(page) > limit


def list_all_images(caller: Caller, query: ImageQuery) -> list[Image]:
    """The images ``caller`` sees, as ``list_images`` pages them: the one
    page ``query.limit`` asks for, else every page (as Nova's image proxy
    reads them all when no limit is given)."""
    if query.limit is not None:
        return list_images(caller, query)[0]
    found: list[Image] = []
    marker = query.marker
    while True:
        page, more = list_images(caller, replace(query, marker=marker, limit=MAX_LIMIT))
        found.extend(page)
        if not more or not page:
            return found
        marker = str(page[-1].id)


# --- the values an image may hold ------------------------------------------------


def _schema_error(reason: str) -> Invalid:
    return Invalid(f"Provided object does not match schema 'image': {reason}")


def _json_repr(value: Any) -> str:
    return repr(value)


def check_name(key: str) -> None:
    """403 for the attributes no one may set; 400 for keys Glance cannot store."""
    if key in READ_ONLY:
        raise Forbidden(f"Attribute '{key}' is read-only.")
    if key in RESERVED or key.startswith(RESERVED_PREFIX):
        raise Forbidden(f"Attribute '{key}' is reserved.")
    if not key or len(key) > MAX_KEY_LENGTH:
        raise _schema_error(f"{key!r} is not a valid property name: it must be 1 to {MAX_KEY_LENGTH} characters long")


def clean_value(key: str, value: Any) -> Any:
    """``value`` checked against Glance's image schema for ``key``."""
    if key in ("name", "owner"):
        if value is not None and not isinstance(value, str):
            raise _schema_error(f"{_json_repr(value)} is not of type 'null', 'string'")
        if value is not None and len(value) > 255:
            raise _schema_error(f"{_json_repr(value)} is too long")
        return value
    if key == "visibility":
        if value not in VISIBILITIES:
            raise _schema_error(f"{_json_repr(value)} is not one of {list(VISIBILITIES)}")
        return value
    if key in ("protected", "os_hidden"):
        if not isinstance(value, bool):
            raise _schema_error(f"{_json_repr(value)} is not of type 'boolean'")
        return value
    if key in ("min_disk", "min_ram"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise _schema_error(f"{_json_repr(value)} is not of type 'integer'")
        if value < 0:
            raise _schema_error(f"{value} is less than the minimum of 0")
        if value > MAX_INT:
            raise _schema_error(f"{value} is greater than the maximum of {MAX_INT}")
        return value
    if key in ("disk_format", "container_format"):
        allowed = DISK_FORMATS if key == "disk_format" else CONTAINER_FORMATS
        if value is not None and value not in allowed:
            raise _schema_error(f"{_json_repr(value)} is not one of {[*allowed, None]}")
        return value
    if key == "tags":
        if not isinstance(value, list):
            raise _schema_error(f"{_json_repr(value)} is not of type 'array'")
        for tag in value:
            if not isinstance(tag, str):
                raise _schema_error(f"{_json_repr(tag)} is not of type 'string'")
            if not tag or len(tag) > 255:
                raise _schema_error(f"{_json_repr(tag)} is not a valid tag: it must be 1 to 255 characters long")
        tags = list(dict.fromkeys(value))
        if len(tags) > TAG_QUOTA:
            raise TooLarge(
                "The limit has been exceeded on the number of allowed image tags. "
                f"Attempted: {len(tags)}, Maximum: {TAG_QUOTA}"
            )
        return tags
    # an extra property
    if not isinstance(value, str):
        raise _schema_error(f"{_json_repr(value)} is not of type 'string'")
    if len(value) > MAX_VALUE_LENGTH:
        raise _schema_error(f"{_json_repr(value[:20] + '...')} is too long")
    return value


def _check_visibility_change(caller: Caller, visibility: str) -> None:
    if visibility == Image.PUBLIC and not caller.is_admin:
        raise Forbidden("You are not authorized to complete publicize_image action.")


def _check_owner_change(caller: Caller, owner: str | None) -> None:
    if not caller.is_admin and owner != (caller.project_id or None):
        raise Forbidden(f"You are not permitted to create images owned by '{owner}'.")


def _check_property_quota(count: int) -> None:
    if count > PROPERTY_QUOTA:
        raise TooLarge(
            "The limit has been exceeded on the number of allowed image properties. "
            f"Attempted: {count}, Maximum: {PROPERTY_QUOTA}"
        )


def snapshot(image: Image) -> dict[str, Any]:
    """The payload of an image event."""
    return {
        "id": str(image.id),
        "name": image.name,
        "status": image.status,
        "visibility": image.visibility,
        "owner": image.owner,
        "size": image.size,
        "checksum": image.checksum,
        "protected": image.protected,
    }


def record_event(caller: Caller, event_type: str, image: Image, **extra: Any) -> None:
    events.record(
        caller,
        event_type,
        object_type="image",
        object_id=str(image.id),
        object_uuid=image.id,
        payload={**snapshot(image), **extra},
    )


# --- writing -------------------------------------------------------------------


def create_image(caller: Caller, attributes: Mapping[str, Any]) -> Image:
    """A new ``queued`` image from Glance's flat create body: core attributes,
    ``id`` and ``tags``, and any other key as an extra property."""
    check_may(caller, "add_image")
    image = Image(owner=caller.project_id or None)
    properties: dict[str, str] = {}
    tags: list[str] = []
    for key, value in attributes.items():
        if key == "id":
            parsed = _parse_id(value) if isinstance(value, str) else None
            if parsed is None:
                raise _schema_error(f"{_json_repr(value)} does not match the pattern of a UUID")
            image.id = parsed
            continue
        check_name(key)
        cleaned = clean_value(key, value)
        if key == "tags":
            tags = cleaned
        elif key == "owner":
            _check_owner_change(caller, cleaned)
            image.owner = cleaned
        elif key in SETTABLE:
            if key == "visibility":
                _check_visibility_change(caller, cleaned)
            setattr(image, key, cleaned)
        else:
            properties[key] = cleaned
    _check_property_quota(len(properties))
    now = timezone.now()
    image.created_at = image.updated_at = now
    try:
        with transaction.atomic():
            image.save(force_insert=True)
            ImageProperty.objects.bulk_create(
                ImageProperty(image=image, name=name, value=value) for name, value in properties.items()
            )
            ImageTag.objects.bulk_create(ImageTag(image=image, value=tag) for tag in tags)
            record_event(caller, "image.create", image, properties=properties, tags=tags)
    except IntegrityError:
        raise Conflict(f"Image with identifier {image.id} already exists!")
    return get_image(caller, str(image.id))


def locked_image(caller: Caller, image_id: str) -> Image:
    """The image under a row lock (for the rest of the transaction), or 404."""
    parsed = _parse_id(image_id)
    image = Image.objects.select_for_update().filter(visible_q(caller), pk=parsed).first() if parsed else None
    if image is None:
        raise NotFound(f"No image found with ID {image_id}")
    return image


@dataclass
class Change:
    """One JSON-patch operation, its path already decoded to an attribute name."""

    op: str  # add, replace or remove
    name: str
    value: Any = None


def update_image(caller: Caller, image_id: str, changes: Sequence[Change]) -> Image:
    """Apply ``changes`` in order, as Glance does: ``add`` sets a core attribute
    or an extra property (replacing a present one); ``replace`` needs the
    property to exist (409); ``remove`` takes extra properties only (403 for
    core ones, 409 for absent ones); read-only and reserved attributes give
    403. All of them or none."""
    with transaction.atomic():
        image = locked_image(caller, image_id)
        check_may(caller, "modify_image", image)
        properties = {item.name: item.value for item in image.property_items.all()}
        tags = [item.value for item in image.tag_items.order_by("value")]
        before = (properties.copy(), tags.copy())
        for change in changes:
            if change.op not in ("add", "replace", "remove"):
                raise Invalid(f"Invalid operation: `{change.op}`. It must be one of: add, remove, replace.")
            check_name(change.name)
            if change.op == "remove":
                if change.name in CORE:
                    raise Forbidden(f"Property {change.name} may not be removed.")
                if change.name not in properties:
                    raise Conflict(f"Property {change.name} does not exist.")
                del properties[change.name]
                continue
            value = clean_value(change.name, change.value)
            if change.name == "tags":
                tags = value
            elif change.name == "owner":
                if not caller.is_admin:
                    raise Forbidden("You are not authorized to complete modify_image action.")
                image.owner = value
            elif change.name in SETTABLE:
                if change.name == "visibility" and value != image.visibility:
                    _check_visibility_change(caller, value)
                if change.name in ("disk_format", "container_format") and image.status != Image.QUEUED:
                    if value != getattr(image, change.name):
                        raise Forbidden(f"Attribute {change.name} can be only replaced for a queued image.")
                setattr(image, change.name, value)
            elif change.op == "replace" and change.name not in properties:
                raise Conflict(f"Property {change.name} does not exist.")
            else:
                properties[change.name] = value
        _check_property_quota(len(properties))
        image.updated_at = timezone.now()
        image.save()
        if properties != before[0]:
            image.property_items.exclude(name__in=list(properties)).delete()
            existing = {item.name: item for item in image.property_items.all()}
            for name, value in properties.items():
                if name not in existing:
                    ImageProperty.objects.create(image=image, name=name, value=value)
                elif existing[name].value != value:
                    ImageProperty.objects.filter(pk=existing[name].pk).update(value=value)
        if tags != before[1]:
            _replace_tags(image, tags)
        record_event(caller, "image.update", image, changes=[{"op": c.op, "path": f"/{c.name}"} for c in changes])
    return get_image(caller, image_id)


def _replace_tags(image: Image, tags: list[str]) -> None:
    image.tag_items.exclude(value__in=tags).delete()
    present = set(image.tag_items.values_list("value", flat=True))
    ImageTag.objects.bulk_create(ImageTag(image=image, value=tag) for tag in tags if tag not in present)


def add_tag(caller: Caller, image_id: str, tag: str) -> None:
    with transaction.atomic():
        image = locked_image(caller, image_id)
        check_may(caller, "modify_image", image)
        tags = clean_value("tags", [*image.tag_items.values_list("value", flat=True), tag])
        _replace_tags(image, tags)
        Image.objects.filter(pk=image.pk).update(updated_at=timezone.now())
        record_event(caller, "image.update", image, changes=[{"op": "add", "path": "/tags", "tag": tag}])


def delete_tag(caller: Caller, image_id: str, tag: str) -> None:
    with transaction.atomic():
        image = locked_image(caller, image_id)
        check_may(caller, "modify_image", image)
        deleted, _ = image.tag_items.filter(value=tag).delete()
        if not deleted:
            raise NotFound(f"Tag {tag} not found.")
        Image.objects.filter(pk=image.pk).update(updated_at=timezone.now())
        record_event(caller, "image.update", image, changes=[{"op": "remove", "path": "/tags", "tag": tag}])


def delete_image(caller: Caller, image_id: str) -> None:
    """Delete the image and its data (403 while protected)."""
    with transaction.atomic():
        image = locked_image(caller, image_id)
        check_may(caller, "delete_image", image)
        if image.protected:
            raise Forbidden(f"Image {image.id} is protected and cannot be deleted.")
        record_event(caller, "image.delete", image)
        image.delete()
        after_commit.dispatch(
            lambda: storage.remove(image_id), failure=f"could not remove the data of deleted image {image_id}"
        )


def _back_to_queued(image_id: uuid.UUID) -> None:
    Image.objects.filter(pk=image_id, status=Image.SAVING).update(status=Image.QUEUED, updated_at=timezone.now())


def upload_image_data(
    caller: Caller, image_id: str, chunks: Iterable[bytes], expected_size: int | None = None
) -> Image:
    """Store the image's data from ``chunks``, streamed to disk (never held
    whole in memory): ``size``, ``checksum`` (MD5) and ``os_hash_value``
    (SHA-512) are computed as it passes. Refuses data above IMAGE_MAX_BYTES
    (413), before reading any when ``expected_size`` says so."""
    max_bytes = settings.IMAGE_MAX_BYTES
    with transaction.atomic():
        image = locked_image(caller, image_id)
        check_may(caller, "upload_image", image)
        if image.status != Image.QUEUED:
            raise Conflict(f"Image status transition from {image.status} to saving is not allowed")
        if not image.disk_format or not image.container_format:
            raise Invalid("Properties disk_format, container_format must be set prior to saving data.")
        if expected_size is not None and expected_size > max_bytes:
            raise TooLarge("The incoming image is too large: The provided image is too large.")
        Image.objects.filter(pk=image.pk).update(status=Image.SAVING, updated_at=timezone.now())
    try:
        staged = storage.stage(image.id, chunks, max_bytes)
    except BaseException:
        _back_to_queued(image.id)
        raise
    placed = False
    try:
        with transaction.atomic():
            current = Image.objects.select_for_update().filter(pk=image.pk).first()
            if current is None:
                raise Gone(
                    f"Image {image.id} could not be found after upload."
                    " The image may have been deleted during the upload."
                )
            if current.status != Image.SAVING:
                raise Conflict(f"Image status transition from {current.status} to active is not allowed")
            current.status = Image.ACTIVE
            current.size = staged.size
            current.checksum = staged.checksum
            current.os_hash_algo = staged.os_hash_algo
            current.os_hash_value = staged.os_hash_value
            current.updated_at = timezone.now()
            current.save()
            record_event(caller, "image.upload", current)
            staged.commit(image.id)
            placed = True
    except BaseException:
        staged.discard()
        if placed:
            storage.remove(image.id)
        _back_to_queued(image.id)
        raise
    return get_image(caller, image_id)


def image_data(caller: Caller, image_id: str) -> tuple[Image, BinaryIO | None]:
    """The image and its data opened for reading (None while it has none);
    403 for a deactivated image unless the caller is an admin."""
    image = get_image(caller, image_id)
    check_may(caller, "download_image")
    if image.status == Image.DEACTIVATED and not caller.is_admin:
        raise Forbidden("The requested image has been deactivated. Image data download is forbidden.")
    if image.status not in (Image.ACTIVE, Image.DEACTIVATED):
        return image, None
    return image, storage.open_data(image.id)


def projects_for_owner_choice() -> list[tuple[str, str]]:
    """(id, name) of the projects an admin may give an image to, for forms."""
    return list(Project.objects.order_by("name").values_list("id", "name"))
