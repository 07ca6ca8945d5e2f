"""Request bodies of the pre-caching routes (Nova's schemas/aggregate_images.py)."""

AGGREGATE_IMAGES = {
    "type": "object",
    "properties": {
        "cache": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string", "format": "uuid"}},
                "required": ["id"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["cache"],
    "additionalProperties": False,
}

# GET /os-image-cache-jobs: optional filters (each checked on its last value).
JOB_QUERY = {
    "type": "object",
    "properties": {
        "aggregate_id": {"type": "string", "pattern": "^[0-9]{1,18}$"},
        "status": {"enum": ["queued", "running", "completed", "completed_with_errors", "failed"]},
        "limit": {"type": "string", "pattern": "^[0-9]{1,6}$"},
    },
    "additionalProperties": False,
}

# POST /os-aggregates/{id}/pinned-images
PIN_IMAGE = {
    "type": "object",
    "properties": {
        "pinned_image": {
            "type": "object",
            "properties": {
                "image_id": {"type": "string", "format": "uuid"},
                "replaces": {"type": ["string", "null"], "format": "uuid"},
            },
            "required": ["image_id"],
            "additionalProperties": False,
        },
    },
    "required": ["pinned_image"],
    "additionalProperties": False,
}

# POST /os-aggregates/{id}/pinned-images/recheck (hosts: only these members)
RECHECK = {
    "type": "object",
    "properties": {
        "recheck": {
            "type": "object",
            "properties": {
                "hosts": {
                    "type": "array",
                    "minItems": 1,
                    "uniqueItems": True,
                    "items": {"type": "string", "minLength": 1, "maxLength": 255},
                },
            },
            "additionalProperties": False,
        },
    },
    "required": ["recheck"],
    "additionalProperties": False,
}
