"""The JSON Schema documents Glance serves at ``/v2/schemas/*`` and links
from every image and member body: Glance's shapes (``name``,
``properties``, ``additionalProperties`` and ``links`` for an image; the
collection documents around them), holding the attributes Corral's images
have (no ``locations``, ``direct_url`` or ``stores``) and the formats it
accepts."""

from typing import Any

from aggregates.images import members, services
from aggregates.images.models import Image

UUID_PATTERN = "^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$"


def _read_only(kind: str | list[str], description: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "readOnly": True, "description": description, **extra}


def image_properties() -> dict[str, Any]:
    return {
        "id": {"type": "string", "description": "The image's identifier", "pattern": UUID_PATTERN},
        "name": {"type": ["null", "string"], "description": "The image's name", "maxLength": 255},
        "status": _read_only("string", "Where the image is in its life", enum=list(services.STATUSES)),
        "visibility": {
            "type": "string",
            "description": "Who may see the image",
            "enum": [Image.COMMUNITY, Image.PUBLIC, Image.PRIVATE, Image.SHARED],
        },
        "protected": {"type": "boolean", "description": "A protected image cannot be deleted"},
        "os_hidden": {"type": "boolean", "description": "A hidden image is left out of lists unless asked for"},
        "checksum": _read_only(["null", "string"], "MD5 digest of the data", maxLength=32),
        "os_hash_algo": _read_only(["null", "string"], "Algorithm of os_hash_value", maxLength=64),
        "os_hash_value": _read_only(["null", "string"], "Digest of the data with os_hash_algo", maxLength=128),
        "owner": {"type": ["null", "string"], "description": "The project owning the image", "maxLength": 255},
        "size": _read_only(["null", "integer"], "Size of the data in bytes"),
        "virtual_size": _read_only(["null", "integer"], "Virtual size of the disk in bytes"),
        "container_format": {
            "type": ["null", "string"],
            "description": "Container format of the data",
            "enum": [None, *services.CONTAINER_FORMATS],
        },
        "disk_format": {
            "type": ["null", "string"],
            "description": "Disk format of the data",
            "enum": [None, *services.DISK_FORMATS],
        },
        "created_at": _read_only("string", "When the image was created"),
        "updated_at": _read_only("string", "When the image last changed"),
        "tags": {
            "type": "array",
            "description": "Strings describing the image",
            "items": {"type": "string", "maxLength": 255},
        },
        "min_ram": {"type": "integer", "description": "RAM (MB) a server booted from it needs"},
        "min_disk": {"type": "integer", "description": "Disk (GB) a server booted from it needs"},
        "self": _read_only("string", "The image's URL"),
        "file": _read_only("string", "The URL of the image's data"),
        "schema": _read_only("string", "The URL of this schema"),
    }


def image_schema() -> dict[str, Any]:
    """Glance's image schema (permissive: extra properties are strings)."""
    return {
        "name": "image",
        "properties": image_properties(),
        "additionalProperties": {"type": "string"},
        "links": [
            {"rel": "self", "href": "{self}"},
            {"rel": "enclosure", "href": "{file}"},
            {"rel": "describedby", "href": "{schema}"},
        ],
    }


def images_schema() -> dict[str, Any]:
    return {
        "name": "images",
        "properties": {
            "images": {"type": "array", "items": image_schema()},
            "first": {"type": "string"},
            "next": {"type": "string"},
            "schema": {"type": "string"},
        },
        "links": [
            {"rel": "first", "href": "{first}"},
            {"rel": "next", "href": "{next}"},
            {"rel": "describedby", "href": "{schema}"},
        ],
    }


def member_schema() -> dict[str, Any]:
    """Glance serves the member schema in its minimal form (no additionalProperties, no links)."""
    return {
        "name": "member",
        "properties": {
            "member_id": {"type": "string", "description": "The project the image is shared with"},
            "image_id": {"type": "string", "description": "The image's identifier", "pattern": UUID_PATTERN},
            "created_at": {"type": "string", "description": "When the membership was created"},
            "updated_at": {"type": "string", "description": "When the membership last changed"},
            "status": {
                "type": "string",
                "description": "The member project's answer",
                "enum": list(members.STATUSES),
            },
            "schema": {"readOnly": True, "type": "string"},
        },
    }


def members_schema() -> dict[str, Any]:
    return {
        "name": "members",
        "properties": {
            "members": {"type": "array", "items": member_schema()},
            "schema": {"type": "string"},
        },
        "links": [{"rel": "describedby", "href": "{schema}"}],
    }


DOCUMENTS = {"image": image_schema, "images": images_schema, "member": member_schema, "members": members_schema}
