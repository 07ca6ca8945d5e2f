"""Resource classes: the standard ones (read-only) and CUSTOM_* ones."""

from collections.abc import Collection

import os_resource_classes
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from placement import errors
from placement.models import MIN_CUSTOM_RESOURCE_CLASS_ID, Inventory, ResourceClass


def list_resource_classes() -> list[ResourceClass]:
    return list(ResourceClass.objects.all())


def get_resource_class(name: str) -> ResourceClass:
    try:
        return ResourceClass.objects.get(name=name)
    except ResourceClass.DoesNotExist:
        raise errors.NotFound(f"No such resource class {name}.") from None


def resource_class_ids(names: Collection[str]) -> dict[str, int]:
    """{name: id} for ``names``; 400-style NotFound naming the first unknown one."""
    found = dict(ResourceClass.objects.filter(name__in=set(names)).values_list("name", "id"))
    for name in names:
        if name not in found:
            raise errors.NotFound(f"No such resource class {name}.")
    return found


def _next_custom_id() -> int:
    highest = ResourceClass.objects.aggregate(highest=Max("id"))["highest"] or 0
    return max(highest + 1, MIN_CUSTOM_RESOURCE_CLASS_ID)


def create_resource_class(name: str) -> ResourceClass:
    """A new CUSTOM_* class; Conflict if the name is taken (standard ones included)."""
    if name in os_resource_classes.STANDARDS:
        raise errors.Conflict(f"Conflicting resource class already exists: {name}")
    try:
        with transaction.atomic():
            return ResourceClass.objects.create(id=_next_custom_id(), name=name)
    except IntegrityError:
        raise errors.Conflict(f"Conflicting resource class already exists: {name}") from None


def ensure_resource_class(name: str) -> tuple[ResourceClass, bool]:
    """(class, created): the class called ``name``, made if missing."""
    existing = ResourceClass.objects.filter(name=name).first()
    if existing is not None:
        return existing, False
    try:
        return create_resource_class(name), True
    except errors.Conflict:
        return ResourceClass.objects.get(name=name), False


def rename_resource_class(name: str, new_name: str) -> ResourceClass:
    resource_class = get_resource_class(name)
    if resource_class.is_standard:
        raise errors.Invalid(f"Cannot update standard resource class {name}")
    try:
        with transaction.atomic():
            resource_class.name = new_name
            resource_class.updated_at = timezone.now()
            resource_class.save(update_fields=["name", "updated_at"])
    except IntegrityError:
        raise errors.Conflict(f"Resource class already exists: {new_name}") from None
    return resource_class


def delete_resource_class(name: str) -> None:
    with transaction.atomic():
        resource_class = get_resource_class(name)
        if resource_class.is_standard:
            raise errors.Invalid(f"Error in delete resource class: Cannot delete standard resource class {name}.")
        if Inventory.objects.filter(resource_class=resource_class).exists():
            raise errors.Conflict(
                f"Error in delete resource class: Cannot delete resource class {name}. Class is in use in inventory."
            )
        resource_class.delete()
