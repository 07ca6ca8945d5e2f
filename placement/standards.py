"""Standard resource classes and traits, from the os-resource-classes and
os-traits packages, kept in the database next to the CUSTOM_* ones."""

import os_resource_classes
import os_traits
from django.db import transaction

from .models import ResourceClass, Trait

CUSTOM_PREFIX = "CUSTOM_"

_synced = False
# Standard resource classes have fixed ids (their position in the package's
# list), so they need no lookup.
STANDARD_CLASS_IDS = {name: index for index, name in enumerate(os_resource_classes.STANDARDS)}


def sync_standard_names(
    resource_class_model: type[ResourceClass] = ResourceClass, trait_model: type[Trait] = Trait
) -> None:
    """Insert the standard resource classes (id = position in the package's
    list) and traits that the database lacks. Safe to run repeatedly."""
    with transaction.atomic():
        have = set(resource_class_model.objects.filter(id__lt=10000).values_list("name", flat=True))
        resource_class_model.objects.bulk_create(
            [
                resource_class_model(id=index, name=name)
                for index, name in enumerate(os_resource_classes.STANDARDS)
                if name not in have
            ],
            ignore_conflicts=True,
        )
        have = set(trait_model.objects.exclude(name__startswith=CUSTOM_PREFIX).values_list("name", flat=True))
        trait_model.objects.bulk_create(
            [trait_model(name=name) for name in os_traits.get_traits() if name not in have],
            ignore_conflicts=True,
        )


def ensure_standard_names() -> None:
    """Run the sync once per process (a newer package may add names)."""
    global _synced
    if not _synced:
        sync_standard_names()
        _synced = True


def is_standard_trait(name: str) -> bool:

    return not name.startswith(CUSTOM_PREFIX)
