"""The query string of ``GET /os-capacity`` (Corral's own route)."""

CAPACITY_QUERY = {
    "type": "object",
    "properties": {
        "flavor": {"type": "string", "minLength": 1, "maxLength": 255},
        "project": {"type": "string", "minLength": 1, "maxLength": 255},
        "lose_hosts": {"type": "string", "pattern": "^[0-9]{1,6}$"},
    },
    "additionalProperties": False,
}
