"""Flavors, their extra specs and their project access lists, as Nova keeps them.

Callers who may read admin views see every flavor; everyone else sees the
public flavors and the private ones granted to their project, and gets 404
for the rest. Each write owns its transaction: the change and its audit
event (``flavor.create``, ``flavor.update``, ``flavor.delete``, object type
``flavor``) commit together or not at all.
"""

import re
import unicodedata
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Conflict, Invalid, NotFound

# validate_extra_specs is also the console's entry to the 2.86 rules.
from aggregates.flavors.extra_specs import KEY_PATTERN, known_spec, spec_value, validate_extra_specs
from aggregates.flavors.models import Flavor, FlavorAccess, FlavorExtraSpec
from aggregates.identity.caller import Caller
from aggregates.identity.models import Project

MAX_INT = 2147483647
MAX_RXTX_FACTOR = 3.40282e38
MAX_DESCRIPTION_LENGTH = 65535
# Nova's [api] max_limit: the most flavors one list returns.
MAX_LIMIT = 1000
FLAVOR_ID_PATTERN = r"^(?! )[a-zA-Z0-9. _-]+(?<! )$"
# The sort keys a flavor list takes: Nova's column names, which are our field names.
SORT_KEYS = (
    "flavorid",
    "name",
    "memory_mb",
    "vcpus",
    "root_gb",
    "ephemeral_gb",
    "swap",
    "rxtx_factor",
    "is_public",
    "disabled",
    "description",
    "created_at",
    "updated_at",
    "id",
)
SORT_DIRECTIONS = ("asc", "desc")

# --- reading ---------------------------------------------------------------


def flavors_with_details() -> QuerySet[Flavor]:
    return Flavor.objects.prefetch_related(
        Prefetch("extra_spec_items", queryset=FlavorExtraSpec.objects.order_by("key")),
        Prefetch("access_items", queryset=FlavorAccess.objects.order_by("id")),
    )


def sees_all_flavors(caller: Caller) -> bool:
    """Whether ``caller`` sees private flavors it was not granted (and may
    filter lists by ``is_public``)."""
    return caller.can_read_admin_views


def _public_or_granted(caller: Caller) -> Q:
    granted = FlavorAccess.objects.filter(flavor=OuterRef("pk"), project_id=caller.project_id)
    return Q(is_public=True) | Q(Exists(granted))


def visible_flavors(caller: Caller) -> QuerySet[Flavor]:
    flavors = flavors_with_details()
    return flavors if sees_all_flavors(caller) else flavors.filter(_public_or_granted(caller))


def _not_found(flavorid: str) -> NotFound:
    return NotFound(f"Flavor {flavorid} could not be found.")


def get_flavor(caller: Caller, flavorid: str) -> Flavor:
    try:
        return visible_flavors(caller).get(flavorid=flavorid)
    except Flavor.DoesNotExist:
        raise _not_found(flavorid)


def extra_specs_of(flavor: Flavor) -> dict[str, str]:
    return {item.key: item.value for item in flavor.extra_spec_items.all()}


def projects_of(flavor: Flavor) -> list[str]:
    return [item.project_id for item in flavor.access_items.all()]


def list_flavors(
    caller: Caller,
    is_public: bool | None = True,
    min_ram: int | None = None,
    min_disk: int | None = None,
    name_pattern: str | None = None,
    sort_key: str = "flavorid",
    sort_dir: str = "asc",
    limit: int | None = None,
    marker: str | None = None,
) -> list[Flavor]:
    """One page of the flavors ``caller`` may see.

    ``is_public`` (True, False or None for all) counts only for callers who
    see all flavors; True also takes in the private flavors granted to the
    caller's project, as Nova does. Other callers get the public and granted
    flavors that are not disabled. ``name_pattern`` is a regular expression
    searched in the name. The page holds at most ``limit`` (capped at
    MAX_LIMIT) flavors following the one whose id is ``marker``."""
    flavors = flavors_with_details()
    if not sees_all_flavors(caller):
        flavors = flavors.filter(_public_or_granted(caller), disabled=False)
    elif is_public is True:
        flavors = flavors.filter(_public_or_granted(caller))
    elif is_public is False:
        flavors = flavors.filter(is_public=False)
    if min_ram is not None:
        flavors = flavors.filter(memory_mb__gte=min_ram)
    if min_disk is not None:
        flavors = flavors.filter(root_gb__gte=min_disk)
    if name_pattern is not None:
        try:
            re.compile(name_pattern)
        except re.error as exc:
            raise Invalid(
                f"Invalid name filter [{name_pattern}]: not a valid regular expression ({exc}).", field="name"
            )
        flavors = flavors.filter(name__regex=name_pattern)
    ordered = list(flavors.order_by(*_ordering(sort_key, sort_dir)).values_list("pk", "flavorid"))
    start = 0
    if marker:
        position = next((index for index, (_, flavorid) in enumerate(ordered) if flavorid == marker), None)
        if position is None:
            raise Invalid(f"marker [{marker}] not found", field="marker")
        start = position + 1
    page = [pk for pk, _ in ordered[start : start + min(limit or MAX_LIMIT, MAX_LIMIT)]]
    rows = flavors_with_details().in_bulk(page)
    return [rows[pk] for pk in page]


def _ordering(sort_key: str, sort_dir: str) -> list[str]:
    if sort_key not in SORT_KEYS:
        raise Invalid(f"Invalid sort_key [{sort_key}]. Sort by one of: {', '.join(SORT_KEYS)}.", field="sort_key")
    if sort_dir not in SORT_DIRECTIONS:
        raise Invalid(
            f"Invalid sort_dir [{sort_dir}]. Unknown sort direction, must be 'desc' or 'asc'.", field="sort_dir"
        )
    prefix = "-" if sort_dir == "desc" else ""
    return [prefix + sort_key, prefix + "id"]


def private_flavor(caller: Caller, flavorid: str) -> Flavor:
    """A private flavor, whose access list can be read (404 for public ones)."""
    flavor = get_flavor(caller, flavorid)
    if flavor.is_public:
        raise NotFound("Access list not available for public flavors.")
    return flavor


def get_extra_spec(caller: Caller, flavorid: str, key: str) -> str:
    specs = extra_specs_of(get_flavor(caller, flavorid))
    if key not in specs:
        raise NotFound(f"Flavor {flavorid} has no extra specs with key {key}.", field="key")
    return specs[key]


# --- checks of new values ----------------------------------------------------


def _printable_char(char: str) -> bool:
    """Letters, marks, numbers, punctuation, symbols and horizontal spaces."""
    category = unicodedata.category(char)
    return not category.startswith("C") and (not category.startswith("Z") or category == "Zs")


def _printable(text: str) -> bool:
    return all(_printable_char(char) for char in text)


def _integer(value: int | str, name: str, minimum: int) -> int:
    """Nova's check of the sizes of a flavor; numeric strings count."""
    if isinstance(value, bool):
        raise Invalid(f"Invalid input received: {name} must be an integer", field=name)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise Invalid(f"Invalid input received: {name} must be an integer", field=name)
    if number < minimum:
        raise Invalid(f"Invalid input received: {name} must be >= {minimum}", field=name)
    if number > MAX_INT:
        raise Invalid(f"Invalid input received: {name} must be <= {MAX_INT}", field=name)
    return number


def _rxtx_factor(value: float | str) -> float:
    try:
        factor = float(value)
    except (TypeError, ValueError):
        factor = None
    if factor is None or isinstance(value, bool) or not 0 < factor <= MAX_RXTX_FACTOR:
        raise Invalid(
            f"Invalid input received: 'rxtx_factor' argument must be a float between 0 and {MAX_RXTX_FACTOR:g}",
            field="rxtx_factor",
        )
    return factor


def _flavor_name(name: object) -> str:
    name = name.strip() if isinstance(name, str) else name
    if not isinstance(name, str) or not 1 <= len(name) <= 255:
        raise Invalid("Invalid input received: name must be a string of 1 to 255 characters.", field="name")
    if not _printable(name):
        raise Invalid(
            "Invalid input received: Flavor names can only contain printable characters and horizontal spaces.",
            field="name",
        )
    return name


def _flavor_id(flavorid: object) -> str:
    """The flavor id as stored: given ids are strings (numbers are written
    out), a missing one becomes a new UUID."""
    if flavorid is None:
        return str(uuid.uuid4())
    flavorid = flavorid if isinstance(flavorid, str) else str(flavorid)
    if len(flavorid) > 255 or not re.fullmatch(FLAVOR_ID_PATTERN, flavorid):
        raise Invalid(
            f"Invalid input received: flavor id {flavorid!r} must be 1 to 255 letters, digits, "
            "'.', '_', '-' or inner spaces.",
            field="id",
        )
    return flavorid


def _description(description: object) -> str | None:
    if description is None:
        return None
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_LENGTH:
        raise Invalid(
            f"Invalid input received: description must be a string of at most {MAX_DESCRIPTION_LENGTH} characters.",
            field="description",
        )
    if not _printable(description):
        raise Invalid(
            "Invalid input received: description can only contain printable characters and "
            "horizontal spaces (no tabs or line breaks).",
            field="description",
        )
    return description


def _extra_spec_values(specs: Mapping[str, object]) -> dict[str, str]:
    """``specs`` with checked keys and their values as stored (strings)."""
    for key in specs:
        if not isinstance(key, str) or not re.fullmatch(KEY_PATTERN, key):
            raise Invalid(
                f"Invalid input received: extra spec key {key!r} must be 1 to 255 letters, digits, spaces or '-_:.'.",
                field="key",
            )
    values = {}
    for key, value in specs.items():
        with _about("value"):
            values[key] = spec_value(value)
    return values


@contextmanager
def _about(field: str) -> Iterator[None]:
    """Give the errors raised in the block that name no field ``field``."""
    try:
        yield
    except Invalid as exc:
        exc.field = exc.field or field
        raise


def _validate_extra_specs(values: Mapping[str, str]) -> None:
    """The registry's rules (``validate_extra_specs``): a refusal is about the
    value of a spec the registry knows, else about the key."""
    for key, value in values.items():
        with _about("value" if known_spec(key) is not None else "key"):
            validate_extra_specs({key: value})


# --- writing ---------------------------------------------------------------


def snapshot(flavor: Flavor) -> dict[str, Any]:
    """The FlavorPayload of a notification."""
    return {
        "flavorid": flavor.flavorid,
        "name": flavor.name,
        "memory_mb": flavor.memory_mb,
        "vcpus": flavor.vcpus,
        "root_gb": flavor.root_gb,
        "ephemeral_gb": flavor.ephemeral_gb,
        "swap": flavor.swap,
        "rxtx_factor": flavor.rxtx_factor,
        "is_public": flavor.is_public,
        "disabled": flavor.disabled,
        "description": flavor.description,
        "extra_specs": extra_specs_of(flavor),
        "projects": projects_of(flavor),
    }


def _record(caller: Caller, event_type: str, flavor: Flavor, payload: dict[str, Any] | None = None) -> None:
    events.record(
        caller,
        event_type,
        object_type="flavor",
        object_id=flavor.flavorid,
        payload=payload if payload is not None else snapshot(flavor),
    )


def _locked(caller: Caller, flavorid: str) -> Flavor:
    """Read the flavor under a row lock, for the rest of the transaction."""
    list(Flavor.objects.select_for_update().filter(flavorid=flavorid).values_list("pk"))
    return get_flavor(caller, flavorid)


def _reloaded(flavor: Flavor) -> Flavor:
    return flavors_with_details().get(pk=flavor.pk)


def _existing(flavorid: str, name: str) -> Conflict | None:
    """The 409 for a flavor id or name already taken, or None."""
    if Flavor.objects.filter(flavorid=flavorid).exists():
        return Conflict(f"Flavor with ID {flavorid} already exists.", field="id")
    if Flavor.objects.filter(name=name).exists():
        return Conflict(f"Flavor with name {name} already exists.", field="name")
    return None


def create_flavor(
    caller: Caller,
    name: str,
    ram: int | str,
    vcpus: int | str,
    disk: int | str,
    flavorid: str | int | None = None,
    ephemeral: int | str = 0,
    swap: int | str = 0,
    rxtx_factor: float | str = 1.0,
    is_public: bool = True,
    description: str | None = None,
) -> Flavor:
    """Create a flavor. As in Nova, a private flavor starts with an empty
    access list: grant projects with add_tenant_access."""
    flavor = Flavor(
        name=_flavor_name(name),
        flavorid=_flavor_id(flavorid),
        memory_mb=_integer(ram, "ram", 1),
        vcpus=_integer(vcpus, "vcpus", 1),
        root_gb=_integer(disk, "disk", 0),
        ephemeral_gb=_integer(ephemeral, "ephemeral", 0),
        swap=_integer(swap, "swap", 0),
        rxtx_factor=_rxtx_factor(rxtx_factor),
        is_public=bool(is_public),
        description=_description(description),
    )
    with transaction.atomic():
        conflict = _existing(flavor.flavorid, flavor.name)
        if conflict:
            raise conflict
        try:
            with transaction.atomic():
                flavor.save()
        except IntegrityError:
            raise _existing(flavor.flavorid, flavor.name) or Conflict(
                f"Flavor {flavor.name} already exists.", field="name"
            )
        flavor = _reloaded(flavor)
        _record(caller, "flavor.create", flavor)
    return flavor


def update_description(caller: Caller, flavorid: str, description: str | None) -> Flavor:
    description = _description(description)
    with transaction.atomic():
        flavor = _locked(caller, flavorid)
        flavor.description = description
        flavor.updated_at = timezone.now()
        flavor.save(update_fields=["description", "updated_at"])
        flavor = _reloaded(flavor)
        _record(caller, "flavor.update", flavor)
    return flavor


def delete_flavor(caller: Caller, flavorid: str) -> None:
    """Delete a flavor with its extra specs and access list."""
    with transaction.atomic():
        flavor = _locked(caller, flavorid)
        payload = snapshot(flavor)
        flavor.delete()
        _record(caller, "flavor.delete", Flavor(flavorid=flavorid), payload)


def set_extra_specs(caller: Caller, flavorid: str, specs: Mapping[str, object], validate: bool = True) -> Flavor:
    """Merge ``specs`` (string or number values) into the flavor's extra
    specs. With ``validate`` they are first checked against the registry
    of known specs (compute API 2.86+), before the flavor is looked up."""
    values = _extra_spec_values(specs)
    if validate:
        _validate_extra_specs(values)
    with transaction.atomic():
        flavor = _locked(caller, flavorid)
        for key, value in values.items():
            FlavorExtraSpec.objects.update_or_create(flavor=flavor, key=key, defaults={"value": value})
        flavor = _reloaded(flavor)
        _record(caller, "flavor.update", flavor)
    return flavor


def delete_extra_spec(caller: Caller, flavorid: str, key: str) -> None:
    with transaction.atomic():
        flavor = _locked(caller, flavorid)
        deleted, _ = FlavorExtraSpec.objects.filter(flavor=flavor, key=key).delete()
        if not deleted:
            raise NotFound(f"Flavor {flavorid} has no extra specs with key {key}.", field="key")
        _record(caller, "flavor.update", _reloaded(flavor))


def add_tenant_access(caller: Caller, flavorid: str, project_id: str, refuse_public: bool = True) -> Flavor:
    """Let ``project_id`` use a private flavor. ``refuse_public`` is the
    2.7+ behaviour: granting access to a public flavor is a conflict."""
    if not Project.objects.filter(pk=project_id).exists():
        raise Invalid(
            f"Project ID {project_id} is not a valid project. Give the id (not the name) of an existing project.",
            field="tenant",
        )
    with transaction.atomic():
        flavor = _locked(caller, flavorid)
        if refuse_public and flavor.is_public:
            raise Conflict("Can not add access to a public flavor.")
        already = Conflict(
            f"Flavor access already exists for flavor {flavorid} and project {project_id} combination.", field="tenant"
        )
        if project_id in projects_of(flavor):
            raise already
        try:
            with transaction.atomic():
                FlavorAccess.objects.create(flavor=flavor, project_id=project_id)
        except IntegrityError:
            raise already
        flavor = _reloaded(flavor)
        _record(caller, "flavor.update", flavor)
    return flavor


def remove_tenant_access(caller: Caller, flavorid: str, project_id: str) -> Flavor:
    """Withdraw a grant; the project need not exist any more."""
    with transaction.atomic():
        flavor = _locked(caller, flavorid)
        deleted, _ = FlavorAccess.objects.filter(flavor=flavor, project_id=project_id).delete()
        if not deleted:
            raise NotFound(f"Flavor access not found for {flavorid} / {project_id} combination.")
        flavor = _reloaded(flavor)
        _record(caller, "flavor.update", flavor)
    return flavor
