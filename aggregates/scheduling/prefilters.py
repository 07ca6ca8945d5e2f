"""Placement pre-filters (Nova's ``request_filter``), run in Nova's order before
``GET /allocation_candidates``: each adds to the query exactly as Nova encodes
it, and says, for any host, whether and why its addition keeps the host out,
so that hosts placement never returned get a reason too."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.conf import settings

from aggregates.scheduling.host_state import AggregateInfo, HostState
from aggregates.scheduling.request import RequestSpec

log = logging.getLogger("aggregates.scheduling")

DISABLED_TRAIT = "COMPUTE_STATUS_DISABLED"
TENANT_KEY_PREFIX = "filter_tenant_id"
# Disk formats a host's hypervisor can boot, as COMPUTE_IMAGE_TYPE_* traits.
IMAGE_TYPE_TRAIT_PREFIX = "COMPUTE_IMAGE_TYPE_"


class NoValidHostForRequest(Exception):
    """A pre-filter refused the whole request (e.g. no aggregate for the tenant)."""


@dataclass
class Exclusion:
    """Why one pre-filter keeps a host out: a predicate and its sentence."""

    prefilter: str
    keeps_out: Callable[[HostState], bool]
    reason: Callable[[HostState], str]


@dataclass
class PlacementQuery:
    resources: dict[str, int]
    # Each group is one member_of=in:... (AND-ed between groups).
    member_of: list[list[str]] = field(default_factory=list)
    forbidden_aggregates: list[str] = field(default_factory=list)
    required: set[str] = field(default_factory=set)  # the flavor's and image's traits
    root_required: set[str] = field(default_factory=set)
    root_forbidden: set[str] = field(default_factory=set)
    in_tree: str | None = None
    limit: int | None = None
    exclusions: list[Exclusion] = field(default_factory=list)
    # Notes on the request an operator should know (ignored keys...).
    notes: list[str] = field(default_factory=list)

    def params(self) -> list[tuple[str, str]]:
        params = [("resources", ",".join(f"{rc}:{amount}" for rc, amount in sorted(self.resources.items())))]
        params += [("member_of", "in:" + ",".join(sorted(group))) for group in self.member_of]
        if self.forbidden_aggregates:
            params.append(("member_of", "!in:" + ",".join(sorted(set(self.forbidden_aggregates)))))
        if self.required:
            params.append(("required", ",".join(sorted(self.required))))
        if self.root_required or self.root_forbidden:
            root = sorted(self.root_required) + ["!" + trait for trait in sorted(self.root_forbidden)]
            params.append(("root_required", ",".join(root)))
        if self.in_tree:
            params.append(("in_tree", self.in_tree))
        if self.limit:
            params.append(("limit", str(self.limit)))
        return sorted(params)

    def query_string(self) -> str:
        return urlencode(self.params())

    def excluded_by(self, host: HostState) -> tuple[str, str] | None:
        """(pre-filter, reason) of the first pre-filter that keeps ``host`` out."""
        for exclusion in self.exclusions:
            if exclusion.keeps_out(host):
                return exclusion.prefilter, exclusion.reason(host)
        return None


def _names(aggregates: list[AggregateInfo]) -> str:
    return ", ".join(sorted(a.name for a in aggregates))


def _uuids(host: HostState) -> set[str]:
    return {a.uuid for a in host.aggregates}


def flavor_traits(spec: RequestSpec) -> tuple[set[str], set[str]]:
    """Traits the flavor's (and image's) ``trait:<T>`` specs require and forbid."""
    required: set[str] = set()
    forbidden: set[str] = set()
    specs = dict(spec.image.properties if spec.image else {})
    specs.update(spec.flavor.extra_specs)
    for key, value in specs.items():
        if key.startswith("trait:"):
            trait = key.split(":", 1)[1]
            if value == "required":
                required.add(trait)
            elif value == "forbidden":
                forbidden.add(trait)
    return required, forbidden


def flavor_resources(spec: RequestSpec) -> dict[str, int]:
    """The flavor's resources, with ``resources:<CLASS>=<n>`` extra specs overriding (0 drops a class)."""
    resources = spec.flavor.resources()
    for key, value in spec.flavor.extra_specs.items():
        if key.startswith("resources:"):
            try:
                amount = int(value)
            except ValueError:
                continue
            resource_class = key.split(":", 1)[1]
            if amount > 0:
                resources[resource_class] = amount
            else:
                resources.pop(resource_class, None)
    return resources


def require_tenant_aggregate(spec: RequestSpec, aggregates: list[AggregateInfo], query: PlacementQuery) -> None:
    if not settings.LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE:
        return
    mine = [
        a
        for a in aggregates
        if any(key.startswith(TENANT_KEY_PREFIX) and value == spec.project_id for key, value in a.metadata.items())
    ]
    if not mine:
        if settings.PLACEMENT_AGGREGATE_REQUIRED_FOR_TENANTS:
            raise NoValidHostForRequest(
                f"No hosts available for tenant {spec.project_id}: no aggregate has a filter_tenant_id key equal "
                "to it and PLACEMENT_AGGREGATE_REQUIRED_FOR_TENANTS is on"
            )
        return
    allowed = {a.uuid for a in mine}
    query.member_of.append(sorted(allowed))
    query.exclusions.append(
        Exclusion(
            "require_tenant_aggregate",
            lambda host: not (_uuids(host) & allowed),
            lambda host: (
                f"project {spec.project_id} is confined to aggregate(s) {_names(mine)} (filter_tenant_id with "
                f"LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE on) and host {host.host} is in none of them"
            ),
        )
    )


def map_az_to_placement_aggregate(spec: RequestSpec, aggregates: list[AggregateInfo], query: PlacementQuery) -> None:
    zone = spec.availability_zone
    if not zone:
        return
    zoned = [a for a in aggregates if "availability_zone" in a.metadata]
    named = [a for a in zoned if a.metadata["availability_zone"] == zone]
    if named:
        allowed = {a.uuid for a in named}
        query.member_of.append(sorted(allowed))
        query.exclusions.append(
            Exclusion(
                "map_az_to_placement_aggregate",
                lambda host: not (_uuids(host) & allowed),
                lambda host: (
                    f"zone {zone} was requested and host {host.host} is in zone "
                    f"{host.availability_zone or settings.DEFAULT_AVAILABILITY_ZONE}, not in its aggregate(s) "
                    f"{_names(named)}"
                ),
            )
        )
    elif zone == settings.DEFAULT_AVAILABILITY_ZONE and zoned:
        # Nova adds nothing here, so a boot into the default zone may land in
        # any zone; Corral keeps it to the hosts that are in no zone.
        forbidden = {a.uuid for a in zoned}
        query.forbidden_aggregates.extend(sorted(forbidden))
        query.exclusions.append(
            Exclusion(
                "map_az_to_placement_aggregate",
                lambda host: bool(_uuids(host) & forbidden),
                lambda host: (
                    f"the default zone {zone} was requested and host {host.host} is in zone {host.availability_zone}"
                ),
            )
        )


def require_image_type_support(spec: RequestSpec, aggregates: list[AggregateInfo], query: PlacementQuery) -> None:
    if not settings.QUERY_PLACEMENT_FOR_IMAGE_TYPE_SUPPORT or spec.image is None or not spec.image.disk_format:
        return
    trait = IMAGE_TYPE_TRAIT_PREFIX + spec.image.disk_format.upper()
    query.root_required.add(trait)
    query.exclusions.append(
        Exclusion(
            "require_image_type_support",
            lambda host: spec.image is not None and spec.image.disk_format not in host.image_types,
            lambda host: (
                f"image {spec.image.name if spec.image else ''} is {spec.image.disk_format if spec.image else ''} "
                f"and host {host.host} does not report {trait} (it boots {', '.join(sorted(host.image_types))})"
            ),
        )
    )


def compute_status_filter(spec: RequestSpec, aggregates: list[AggregateInfo], query: PlacementQuery) -> None:
    query.root_forbidden.add(DISABLED_TRAIT)
    query.exclusions.append(
        Exclusion(
            "compute_status_filter",
            lambda host: host.service_disabled,
            lambda host: (
                f"the compute service of host {host.host} is disabled"
                + (f" ({host.disabled_reason})" if host.disabled_reason else "")
                + f"; its provider carries {DISABLED_TRAIT}"
            ),
        )
    )


def isolate_aggregates(spec: RequestSpec, aggregates: list[AggregateInfo], query: PlacementQuery) -> None:
    if not settings.ENABLE_ISOLATED_AGGREGATE_FILTERING:
        return
    required, _ = flavor_traits(spec)
    isolated: dict[str, tuple[AggregateInfo, list[str]]] = {}
    for aggregate in aggregates:
        traits = sorted(
            key.split(":", 1)[1]
            for key, value in aggregate.metadata.items()
            if key.startswith("trait:") and value == "required"
        )
        missing = [trait for trait in traits if trait not in required]
        if missing:
            isolated[aggregate.uuid] = (aggregate, missing)
    if not isolated:
        return
    query.forbidden_aggregates.extend(sorted(isolated))

    def reason(host: HostState) -> str:
        aggregate, missing = next(isolated[a.uuid] for a in host.aggregates if a.uuid in isolated)
        return (
            f"host {host.host} is in aggregate {aggregate.name}, isolated to requests requiring "
            f"{', '.join(missing)} (trait:<T>=required), which flavor {spec.flavor.name} does not require"
        )

    query.exclusions.append(Exclusion("isolate_aggregates", lambda host: bool(_uuids(host) & set(isolated)), reason))


# Nova's order.
PREFILTERS = [
    require_tenant_aggregate,
    map_az_to_placement_aggregate,
    require_image_type_support,
    compute_status_filter,
    isolate_aggregates,
]


def build_query(spec: RequestSpec, aggregates: list[AggregateInfo]) -> PlacementQuery:
    """The allocation-candidates query of ``spec``. Raises
    NoValidHostForRequest when a pre-filter refuses the request outright."""
    required, forbidden = flavor_traits(spec)
    query = PlacementQuery(resources=flavor_resources(spec), required=required)
    if forbidden:
        query.required |= {"!" + trait for trait in forbidden}
    for prefilter in PREFILTERS:
        prefilter(spec, aggregates, query)
    if not (spec.forced_host or spec.forced_node):
        query.limit = settings.MAX_PLACEMENT_RESULTS
    return query
