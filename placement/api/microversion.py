"""Placement microversions: the one table of versions (with what each added),
parsing of the ``OpenStack-API-Version: placement X.Y`` header, and the
Version type handlers compare with ``request.version >= (1, 15)``."""

SERVICE_TYPE = "placement"
HEADER = "OpenStack-API-Version"

VERSIONS = [
    ("1.0", "Initial version"),
    ("1.1", "Resource provider aggregates"),
    ("1.2", "Custom resource classes (/resource_classes)"),
    ("1.3", "member_of query parameter on GET /resource_providers"),
    ("1.4", "resources query parameter on GET /resource_providers"),
    ("1.5", "DELETE /resource_providers/{uuid}/inventories"),
    ("1.6", "Traits (/traits and /resource_providers/{uuid}/traits)"),
    ("1.7", "PUT /resource_classes/{name} is a bodiless create-or-keep"),
    ("1.8", "project_id and user_id required in PUT /allocations/{consumer_uuid}"),
    ("1.9", "GET /usages"),
    ("1.10", "GET /allocation_candidates"),
    ("1.11", "allocations link on resource providers"),
    ("1.12", "Allocations in dict form (PUT /allocations, allocation_requests)"),
    ("1.13", "POST /allocations for several consumers at once"),
    ("1.14", "Nested providers: parent/root provider UUIDs and in_tree"),
    ("1.15", "Last-Modified and Cache-Control headers"),
    ("1.16", "limit on GET /allocation_candidates"),
    ("1.17", "required traits on GET /allocation_candidates; traits in provider summaries"),
    ("1.18", "required traits on GET /resource_providers"),
    ("1.19", "Generations in provider aggregates requests and responses"),
    ("1.20", "POST /resource_providers answers 200 with the provider"),
    ("1.21", "member_of on GET /allocation_candidates"),
    ("1.22", "Forbidden traits (!TRAIT) in required"),
    ("1.23", "code field in error responses"),
    ("1.24", "Repeated member_of parameters"),
    ("1.25", "Granular (numbered) request groups and group_policy"),
    ("1.26", "Inventory reserved may equal total"),
    ("1.27", "All inventories in provider summaries"),
    ("1.28", "Consumer generations"),
    ("1.29", "Nested providers in allocation candidates"),
    ("1.30", "POST /reshaper"),
    ("1.31", "in_tree on GET /allocation_candidates"),
    ("1.32", "Forbidden aggregates (!member_of)"),
    ("1.33", "Request group suffixes of [a-zA-Z0-9_-]{1,64}"),
    ("1.34", "mappings in allocation requests"),
    ("1.35", "root_required on GET /allocation_candidates"),
    ("1.36", "same_subtree and resourceless request groups"),
    ("1.37", "Re-parenting and un-parenting providers"),
    ("1.38", "Consumer types"),
    ("1.39", "in: (any-of) syntax for required traits"),
]

VERSION_STRINGS = [number for number, _note in VERSIONS]
MIN_VERSION = VERSION_STRINGS[0]
MAX_VERSION = VERSION_STRINGS[-1]


class Version(tuple[int, int]):
    """A (major, minor) tuple that prints as "1.15"."""

    def __new__(cls, major: int, minor: int) -> "Version":
        return super().__new__(cls, (major, minor))

    def __str__(self) -> str:
        return f"{self[0]}.{self[1]}"


class BadVersion(Exception):
    """The header could not be parsed (400)."""


class UnacceptableVersion(Exception):
    """The version is well formed but not one we serve (406)."""


def parse(text: str) -> Version:
    try:
        major, minor = (int(part) for part in text.split(".", 1))
    except (ValueError, TypeError, AttributeError) as exc:
        raise BadVersion(f"invalid version string: {text}; {exc}") from None
    return Version(major, minor)


def requested_version(header_value: str | None) -> Version:
    """The version a request asks for: the last ``placement X.Y`` entry of
    the header, the minimum when there is none, the maximum for "latest"."""
    wanted = None
    if header_value:
        for entry in reversed(header_value.split(",")):
            parts = entry.strip().split(None, 1)
            if len(parts) == 2 and parts[0].lower() == SERVICE_TYPE:
                wanted = parts[1].strip()
                break
    wanted = wanted or MIN_VERSION
    if wanted == "latest":
        wanted = MAX_VERSION
    version = parse(wanted)
    if str(version) not in VERSION_STRINGS:
        raise UnacceptableVersion(f"Unacceptable version header: {wanted}")
    return version
