"""Compute API microversions: the table, the header parsing, the negotiation."""

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from rest_framework.request import Request
from rest_framework.versioning import BaseVersioning

from .errors import ApiError


class APIVersion(NamedTuple):
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


# The versions whose behaviour Corral's compute endpoints follow; every
# other step between MIN and MAX changes only resources Corral does not serve.
VERSIONS = {
    (2, 1): "Base version",
    (2, 7): "addTenantAccess refuses public flavors with 409",
    (2, 11): "os-services: forced_down field and force-down action",
    (2, 13): "os-server-groups: project_id and user_id fields",
    (2, 15): "os-server-groups: soft-affinity and soft-anti-affinity policies",
    (2, 28): "os-hypervisors: cpu_info is an object",
    (2, 33): "os-hypervisors: limit and marker paging",
    (2, 40): "os-simple-tenant-usage: limit and marker paging, next links",
    (2, 41): "os-aggregates: uuid field",
    (2, 53): "os-services and os-hypervisors: ids are uuids; PUT /os-services/{uuid}; hypervisor_hostname_pattern",
    (2, 55): "flavors: description field and PUT /flavors/{id}",
    (2, 61): "flavors: extra_specs in flavor bodies",
    (2, 64): "os-server-groups: policy and rules (max_server_per_host) replace policies and metadata",
    (2, 69): "os-services: services of unreachable cells (never the case in Corral)",
    (2, 71): "servers: server_groups in a server's show and update",
    (2, 75): "strict query parameters for os-services, flavors and os-simple-tenant-usage; swap is an integer",
    (2, 81): "POST /os-aggregates/{id}/images (image pre-caching)",
    (2, 86): "flavor extra specs are validated against known namespaces",
    (2, 88): "os-hypervisors: usage fields dropped, uptime added; statistics and uptime routes removed",
    (2, 102): "strict query parameters everywhere; flavors: rxtx_factor and disabled removed; name filter",
    (2, 104): "Latest version (changes only resources Corral does not serve)",
}
MIN_VERSION = APIVersion(2, 1)
MAX_VERSION = APIVersion(2, 104)

SERVICE_TYPE = "compute"
HEADER = "OpenStack-API-Version"
LEGACY_HEADER = "X-OpenStack-Nova-API-Version"
_FORMAT = re.compile(r"^([1-9]\d*)\.([1-9]\d*|0)$")


def requested_version_string(headers: Mapping[str, str]) -> str | None:
    """The compute version asked for, or None. The standard header wins when
    it names compute; among several compute entries the last one counts."""
    standard = headers.get(HEADER)
    if standard:
        found = None
        for item in standard.split(","):
            parts = item.strip().split(None, 1)
            if len(parts) == 2 and parts[0].lower() == SERVICE_TYPE:
                found = parts[1].strip()
        if found is not None:
            return found
    legacy = headers.get(LEGACY_HEADER)
    return legacy.strip() if legacy else None


def parse_version(text: str | None) -> APIVersion:
    """Turn a requested version into an APIVersion, raising 400 or 406 as Nova does."""
    if text is None:
        return MIN_VERSION
    if text == "latest":
        return MAX_VERSION
    match = _FORMAT.match(text)
    if not match:
        raise ApiError(400, f"API Version String {text} is of invalid format. Must be of format MajorNum.MinorNum.")
    version = APIVersion(int(match.group(1)), int(match.group(2)))
    if not (MIN_VERSION <= version <= MAX_VERSION):
        raise ApiError(
            406,
            f"Version {text} is not supported by the API. Minimum is {MIN_VERSION} and maximum is {MAX_VERSION}.",
            headers=version_headers(version),
        )
    return version


def version_headers(version: APIVersion) -> dict[str, str]:
    return {
        HEADER: f"{SERVICE_TYPE} {version}",
        LEGACY_HEADER: str(version),
        "Vary": f"{HEADER}, {LEGACY_HEADER}",
    }


class ComputeVersioning(BaseVersioning):
    """Sets ``request.version`` to an APIVersion."""

    # DRF's stubs type a version as a string; Corral's is a tuple, compared as one.
    def determine_version(self, request: Request, *args: Any, **kwargs: Any) -> APIVersion:  # type: ignore[override]
        return parse_version(requested_version_string(request.headers))


if TYPE_CHECKING:

    class ComputeRequest(Request):
        """A request as a compute API view sees it (for type checking only):
        ComputeVersioning has set ``version`` to an APIVersion."""

        version: APIVersion  # type: ignore[assignment]  # DRF declares it str | None

else:
    ComputeRequest = Request
