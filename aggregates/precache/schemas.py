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
