"""Image and member JSON as Glance v2 renders them: every core field (null
where unset), extra properties as top-level keys, and the links."""

from datetime import UTC, datetime
from typing import Any

from aggregates.images import services
from aggregates.images.models import Image, ImageMember


def isotime(value: datetime | None) -> str | None:
    """Glance's timestamps: seconds, UTC, ``Z``."""
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def image_body(image: Image) -> dict[str, Any]:
    body: dict[str, Any] = services.properties_of(image)
    body.update(
        {
            "id": str(image.id),
            "name": image.name,
            "status": image.status,
            "disk_format": image.disk_format,
            "container_format": image.container_format,
            "visibility": image.visibility,
            "size": image.size,
            "virtual_size": image.virtual_size,
            "checksum": image.checksum,
            "os_hash_algo": image.os_hash_algo,
            "os_hash_value": image.os_hash_value,
            "protected": image.protected,
            "os_hidden": image.os_hidden,
            "min_ram": image.min_ram,
            "min_disk": image.min_disk,
            "owner": image.owner,
            "tags": services.tags_of(image),
            "created_at": isotime(image.created_at),
            "updated_at": isotime(image.updated_at),
            "self": f"/v2/images/{image.id}",
            "file": f"/v2/images/{image.id}/file",
            "schema": "/v2/schemas/image",
        }
    )
    return body


def images_body(images: list[Image], first: str, next_link: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"images": [image_body(image) for image in images], "first": first}
    if next_link:
        body["next"] = next_link
    body["schema"] = "/v2/schemas/images"
    return body


def member_body(member: ImageMember) -> dict[str, Any]:
    return {
        "member_id": member.member,
        "image_id": str(member.image_id),
        "status": member.status,
        "created_at": isotime(member.created_at),
        "updated_at": isotime(member.updated_at),
        "schema": "/v2/schemas/member",
    }


def members_body(members: list[ImageMember]) -> dict[str, Any]:
    return {"members": [member_body(member) for member in members], "schema": "/v2/schemas/members"}
