"""Image and member JSON as Glance v2 renders them: every core field (null
where unset), extra properties as top-level keys, and the links."""

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

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


# --- Nova's image view (the compute API's image proxy, to 2.35) ------------------

NOVA_STATUS = {"active": "ACTIVE", "queued": "SAVING", "saving": "SAVING"}
NOVA_PROGRESS = {"queued": 25, "saving": 50, "active": 100}


def nova_image_links(base: str, image_id: str) -> list[dict[str, str]]:
    return [
        {"rel": "self", "href": f"{base}/compute/v2.1/images/{image_id}"},
        {"rel": "bookmark", "href": f"{base}/compute/images/{image_id}"},
        {"rel": "alternate", "type": "application/vnd.openstack.image", "href": f"{base}/image/images/{image_id}"},
    ]


def nova_image_brief(base: str, image: Image) -> dict[str, Any]:
    return {"id": str(image.id), "name": image.name, "links": nova_image_links(base, str(image.id))}


def nova_image(base: str, image: Image) -> dict[str, Any]:
    """An image as Nova's compute API shows it: its extra properties as
    ``metadata``, Nova's status names (others UNKNOWN) and progress."""
    metadata = services.properties_of(image)
    body: dict[str, Any] = {
        "id": str(image.id),
        "name": image.name,
        "minRam": image.min_ram or 0,
        "minDisk": image.min_disk or 0,
        "metadata": metadata,
        "created": isotime(image.created_at),
        "updated": isotime(image.updated_at),
        "status": NOVA_STATUS.get(image.status, "UNKNOWN"),
        "progress": NOVA_PROGRESS.get(image.status, 0),
        "OS-EXT-IMG-SIZE:size": image.size,
        "links": nova_image_links(base, str(image.id)),
    }
    instance_uuid = metadata.get("instance_uuid")
    if instance_uuid is not None:
        body["server"] = {
            "id": instance_uuid,
            "links": [
                {"rel": "self", "href": f"{base}/compute/v2.1/servers/{instance_uuid}"},
                {"rel": "bookmark", "href": f"{base}/compute/servers/{instance_uuid}"},
            ],
        }
    auto_disk_config = metadata.get("auto_disk_config")
    if auto_disk_config is not None:
        body["OS-DCF:diskConfig"] = "AUTO" if _truthy(auto_disk_config) else "MANUAL"
    return body


def _truthy(value: str) -> bool:
    return value.strip().lower() in ("1", "t", "true", "on", "y", "yes")


def nova_image_list(
    base: str, items: list[dict[str, Any]], detail: bool, limit: int | None, request: Any
) -> dict[str, Any]:
    """Nova's image list: ``images_links`` next when the page is as long as
    the limit asked for (else Nova's maximum, 1000)."""
    body: dict[str, Any] = {"images": items}
    if items and (limit if limit is not None else 1000) == len(items):
        params = dict(sorted(request.query_params.items()))
        params["marker"] = items[-1]["id"]
        collection = "images/detail" if detail else "images"
        body["images_links"] = [{"rel": "next", "href": f"{base}/compute/v2.1/{collection}?{urlencode(params)}"}]
    return body
