"""The shapes of image API requests (the values themselves are checked by
the services, against Glance's image schema)."""

# PATCH /v2/images/{id}: the media types Glance accepts, newest first.
PATCH_V21 = "application/openstack-images-v2.1-json-patch"
PATCH_V20 = "application/openstack-images-v2.0-json-patch"
PATCH_MEDIA_TYPES = (PATCH_V21, PATCH_V20)
PATCH_OPS = ("add", "remove", "replace")

# A v2.1 change: {"op": ..., "path": "/name", "value": ...}.
PATCH_V21_OPERATION = {
    "type": "object",
    "required": ["op", "path"],
    "properties": {"op": {"type": "string"}, "path": {"type": "string"}},
}

CREATE_BODY = {"type": "object"}

# Query parameters of GET /v2/images that are not filters.
LIST_CONTROLS = ("limit", "marker", "sort", "sort_key", "sort_dir")
# Filters on core attributes (anything else filters on an extra property).
CORE_FILTERS = (
    "id",
    "name",
    "status",
    "visibility",
    "owner",
    "os_hidden",
    "protected",
    "member_status",
    "size_min",
    "size_max",
    "disk_format",
    "container_format",
    "min_ram",
    "min_disk",
    "created_at",
    "updated_at",
)
