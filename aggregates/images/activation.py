"""Deactivating and reactivating an image (Glance's image actions): an
admin or a member of the owner project turns an ``active`` image
``deactivated`` and back. The same action twice does nothing; from any
other status it is refused (403, as Glance). While deactivated, the data is
for admins only (``services.image_data``). Events: ``image.deactivate``,
``image.reactivate``."""

from django.db import transaction
from django.utils import timezone

from aggregates.errors import Forbidden
from aggregates.identity.caller import Caller
from aggregates.images import services
from aggregates.images.models import Image


def _move(caller: Caller, image_id: str, action: str, source: str, target: str) -> Image:
    with transaction.atomic():
        image = services.locked_image(caller, image_id)
        services.check_may(caller, action, image)
        if image.status == target:
            return image
        if image.status != source:
            raise Forbidden(f"Not allowed to {action} image in status '{image.status}'")
        image.status = target
        image.updated_at = timezone.now()
        image.save(update_fields=["status", "updated_at"])
        services.record_event(caller, f"image.{action}", image)
    return image


def deactivate_image(caller: Caller, image_id: str) -> Image:
    return _move(caller, image_id, "deactivate", Image.ACTIVE, Image.DEACTIVATED)


def reactivate_image(caller: Caller, image_id: str) -> Image:
    return _move(caller, image_id, "reactivate", Image.DEACTIVATED, Image.ACTIVE)
