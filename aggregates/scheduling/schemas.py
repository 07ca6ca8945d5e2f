"""Request bodies of ``os-scheduler-explain`` (Corral's own extension)."""

EXPLAIN = {
    "type": "object",
    "properties": {
        "explain": {
            "type": "object",
            "properties": {
                "flavorRef": {"type": ["string", "integer"], "minLength": 1},
                "imageRef": {"type": "string", "minLength": 1},
                "availability_zone": {"type": "string", "minLength": 1, "maxLength": 255},
                "project_id": {"type": "string", "minLength": 1, "maxLength": 255},
                "num_instances": {"type": "integer", "minimum": 1, "maximum": 1000},
            },
            "required": ["flavorRef"],
            "additionalProperties": False,
        }
    },
    "required": ["explain"],
    "additionalProperties": False,
}
