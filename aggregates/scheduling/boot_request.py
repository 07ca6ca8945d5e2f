"""What a boot asks for, checked as Nova checks it: the availability_zone
forms, the flavor and the image. Used by server creation and by
os-scheduler-explain alike, so both refuse the same input the same way."""

import uuid
from dataclasses import dataclass

from django.conf import settings

from aggregates.errors import Invalid
from aggregates.flavors import services as flavor_services
from aggregates.flavors.models import Flavor
from aggregates.identity.caller import Caller
from aggregates.images import services as image_services
from aggregates.images.models import Image
from aggregates.zones import services as zones


def parse_uuid(value: object) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class Destination:
    availability_zone: str | None
    forced_host: str | None
    forced_node: str | None


def parse_availability_zone(value: str | None) -> Destination:
    """Nova's az, az:host, az::node and az:host:node forms; an empty zone
    part is DEFAULT_SCHEDULE_ZONE (or none)."""
    zone, host, node = value, None, None
    if value and ":" in value:
        colons = value.count(":")
        if colons == 1:
            zone, host = value.split(":")
        elif colons == 2:
            if "::" in value:
                zone, node = value.split("::")
            else:
                zone, host, node = value.split(":")
        else:
            raise Invalid("Unable to parse availability_zone", field="availability_zone")
    if not zone:
        zone = settings.DEFAULT_SCHEDULE_ZONE or None
    return Destination(zone, host or None, node or None)


def zone_for_forced_host(zone: str | None, host: str | None) -> str | None:
    """Nova's _validate_host_availability_zone: a zone the forced host is
    not in is ignored (None), not refused."""
    if zone is None or host is None:
        return zone
    return zone if zones.zone_of_host(host) == zone else None


def available_zones() -> set[str]:
    return {zone.name for zone in zones.list_availability_zones() if zone.available}


def flavor_for_boot(caller: Caller, flavor_ref: str) -> Flavor:
    """The flavor of a flavorRef (an id or a link ending in one), if the
    caller may use it and it is not disabled."""
    flavorid = str(flavor_ref).rstrip("/").rsplit("/", 1)[-1]
    flavor = flavor_services.visible_flavors(caller).filter(flavorid=flavorid).first()
    if flavor is None or flavor.disabled:
        raise Invalid(f"Flavor {flavorid} could not be found.", field="flavorRef")
    return flavor


def image_for_boot(caller: Caller, image_ref: str, flavor: Flavor) -> Image:
    image_uuid = parse_uuid(image_ref)
    image = image_services.visible_images(caller).filter(pk=image_uuid).first() if image_uuid else None
    if image is None:
        raise Invalid("Can not find requested image", field="imageRef")
    if image.status != Image.ACTIVE:
        raise Invalid(f"Image {image.id} is not active.", field="imageRef")
    check_image_fits(image, flavor)
    return image


def check_image_fits(image: Image, flavor: Flavor) -> None:
    """Nova's checks of a flavor against an image's minimums and size (a
    boot's, and a resize's against the image the server was booted from)."""
    if image.min_ram and flavor.memory_mb < image.min_ram:
        raise Invalid("Flavor's memory is too small for requested image.", field="flavorRef")
    gib = 1024**3
    if flavor.root_gb:
        if image.min_disk and flavor.root_gb < image.min_disk:
            raise Invalid(
                "Flavor's disk is smaller than the minimum size specified in image metadata. Flavor disk is "
                f"{flavor.root_gb * gib} bytes, minimum size is {image.min_disk * gib} bytes.",
                field="flavorRef",
            )
        if image.size and image.size > flavor.root_gb * gib:
            raise Invalid(
                f"Flavor's disk is too small for requested image. Flavor disk is {flavor.root_gb * gib} bytes, "
                f"image is {image.size} bytes.",
                field="flavorRef",
            )


def check_zone(zone: str | None, forced_host: str | None) -> None:
    """A zone asked for must be one where some compute service is enabled
    (not checked when a host is forced: Nova then ignores a wrong zone)."""
    if zone is not None and forced_host is None and zone not in available_zones():
        raise Invalid("The requested availability zone is not available", field="availability_zone")
