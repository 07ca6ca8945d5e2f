"""Parsing of the query parameters shared by GET /resource_providers and
GET /allocation_candidates: resources, required (traits), member_of,
in_tree, and the request groups and request-wide options built from them."""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from placement import errors

from . import schemas
from .base import PlacementRequest, is_uuid_like

RESOURCES_FORM = "Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024."


def resources(value: str) -> dict[str, int]:
    """ "VCPU:2,MEMORY_MB:1024" -> {"VCPU": 2, "MEMORY_MB": 1024}."""
    if value.strip() == "":
        raise errors.Invalid(f"Badly formed resources parameter. {RESOURCES_FORM} Got: empty string.")
    result = {}
    for item in value.split(","):
        try:
            name, text = item.split(":")
        except ValueError:
            raise errors.Invalid(f"Badly formed resources parameter. {RESOURCES_FORM} Got: {item}.") from None
        try:
            amount = int(text)
        except ValueError:
            raise errors.Invalid(f"Requested resource {name} expected positive integer amount. Got: {text}.") from None
        if amount < 1:
            raise errors.Invalid(f"Requested resource {name} requires amount >= 1. Got: {amount}.")
        result[name] = amount
    return result


def _traits_value(value: str, allow_forbidden: bool, allow_any_of: bool) -> tuple[list[set[str]], set[str]]:
    """One ``required`` value -> (list of any-of sets, set of forbidden names)."""
    prefix = "Invalid query string parameters:"
    if value.startswith("in:"):
        if not allow_any_of:
            raise errors.Invalid(
                f"{prefix} The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion "
                f"1.39. Got: {value}"
            )
        any_of = {name.strip() for name in value[3:].split(",")}
        if not all(any_of):
            raise errors.Invalid(
                f"{prefix} Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. "
                f"Got an empty trait in: {value}"
            )
        if any(name.startswith("!") for name in any_of):
            raise errors.Invalid(
                f"{prefix} The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: {value}"
            )
        return [any_of], set()
    names = [name.strip() for name in value.split(",")]
    # As upstream: any number of leading "!" mean forbidden.
    forbidden = {name.lstrip("!") for name in names if name.startswith("!")}
    if not all(names) or not all(forbidden):
        form = "HW_CPU_X86_VMX,!CUSTOM_MAGIC" if allow_forbidden else "HW_CPU_X86_VMX,CUSTOM_MAGIC"
        raise errors.Invalid(
            f"{prefix} Expected 'required' parameter value of the form: {form}. Got an empty trait in: {value}"
        )
    if forbidden and not allow_forbidden:
        raise errors.Invalid(
            f"{prefix} Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: {value}"
        )
    return [{name} for name in names if not name.startswith("!")], forbidden


def required_traits(request: PlacementRequest, suffix: str = "") -> tuple[list[set[str]], set[str]]:
    """All ``required<suffix>`` values (only the last one before 1.39)."""
    values = request.GET.getlist("required" + suffix)
    if request.version < (1, 39):
        values = values[-1:]
    required: list[set[str]] = []
    forbidden: set[str] = set()
    for value in values:
        any_of, none_of = _traits_value(value, request.version >= (1, 22), request.version >= (1, 39))
        required += any_of
        forbidden |= none_of
    return required, forbidden


def flat_traits(value: str) -> tuple[set[str], set[str]]:
    """A traits value without in: support -> (required names, forbidden names)."""
    any_of, forbidden = _traits_value(value, allow_forbidden=True, allow_any_of=False)
    return {next(iter(s)) for s in any_of}, forbidden


def _member_of_value(value: str) -> tuple[set[str], set[str]]:
    if "," in value and not value.startswith(("in:", "!in:")):
        raise errors.Invalid(
            "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the "
            f"valid microversion. Got: {value}"
        )
    required: set[str]
    forbidden: set[str]
    required = forbidden = set()
    if value.startswith("!in:"):
        forbidden = set(value[4:].split(","))
    elif value.startswith("!"):
        forbidden = {value[1:]}
    elif value.startswith("in:"):
        required = set(value[3:].split(","))
    else:
        required = {value}
    for aggregate in required | forbidden:
        if not is_uuid_like(aggregate):
            raise errors.Invalid(
                "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). "
                f"Got: {aggregate}"
            )
    return required, forbidden


def member_of(request: PlacementRequest, suffix: str = "") -> tuple[list[set[str]], set[str]]:
    """(list of any-of aggregate sets, set of forbidden aggregates)."""
    values = request.GET.getlist("member_of" + suffix)
    if request.version < (1, 24) and len(values) > 1:
        raise errors.Invalid(f"Multiple member_of{suffix} parameters are not supported")
    required: list[set[str]] = []
    forbidden: set[str] = set()
    for value in values:
        any_of, none_of = _member_of_value(value)
        if any_of:
            required.append(any_of)
        if none_of:
            if request.version < (1, 32):
                raise errors.Invalid(
                    f"Forbidden member_of{suffix} parameters are not supported in the specified microversion"
                )
            forbidden |= none_of
    return required, forbidden


def in_tree(value: str) -> str:
    value = value.strip()
    if not is_uuid_like(value):
        raise errors.Invalid(
            f"Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: {value}"
        )
    return value


# --- allocation candidate request groups ----------------------------------------------


@dataclass
class RequestGroup:
    """Resources and filters that one provider (granular, suffixed groups)
    or one tree plus sharing providers (the unsuffixed group) must satisfy."""

    suffix: str = ""
    resources: dict[str, int] = field(default_factory=dict)
    required_traits: list[set[str]] = field(default_factory=list)  # any-of sets of names
    forbidden_traits: set[str] = field(default_factory=set)
    member_of: list[set[str]] = field(default_factory=list)  # any-of sets of aggregate uuids
    forbidden_aggregates: set[str] = field(default_factory=set)
    in_tree: str | None = None

    @property
    def use_same_provider(self) -> bool:
        return bool(self.suffix)


@dataclass
class RequestWideParams:
    limit: int | None = None
    group_policy: str | None = None
    root_required: set[str] = field(default_factory=set)
    root_forbidden: set[str] = field(default_factory=set)
    same_subtrees: list[set[str]] = field(default_factory=list)  # sets of suffixes


_KEY = "^(resources|required|member_of|in_tree)({suffix})?$"
GROUP_KEY = re.compile(_KEY.format(suffix=schemas.GROUP_SUFFIX))
GROUP_KEY_1_33 = re.compile(_KEY.format(suffix=schemas.GROUP_SUFFIX_1_33))


def request_wide_params(request: PlacementRequest) -> RequestWideParams:
    limits = request.GET.getlist("limit")
    policies = request.GET.getlist("group_policy")
    params = RequestWideParams(limit=int(limits[0]) if limits else None, group_policy=policies[0] if policies else None)
    roots = request.GET.getlist("root_required")
    if roots:
        if len(roots) > 1:
            raise errors.Invalid(
                "Query parameter 'root_required' may be specified only once.",
                code=errors.ILLEGAL_DUPLICATE_QUERYPARAM,
            )
        params.root_required, params.root_forbidden = flat_traits(roots[0])
        conflicts = params.root_required & params.root_forbidden
        if conflicts:
            raise errors.Invalid(
                f"Conflicting required and forbidden traits found in root_required: {', '.join(sorted(conflicts))}",
                code=errors.QUERYPARAM_BAD_VALUE,
            )
    for value in request.GET.getlist("same_subtree"):
        suffixes = {s.strip() for s in value.split(",")}
        if "" in suffixes:
            raise errors.Invalid(
                "Empty string (unsuffixed group) can not be specified in `same_subtree` ",
                code=errors.QUERYPARAM_BAD_VALUE,
            )
        params.same_subtrees.append(suffixes)
    return params


def request_groups(request: PlacementRequest, wide: RequestWideParams) -> dict[str, RequestGroup]:
    """{suffix: RequestGroup} from the query string, with upstream's checks."""
    pattern = GROUP_KEY_1_33 if request.version >= (1, 33) else GROUP_KEY
    groups: dict[str, RequestGroup] = {}
    for key in request.GET:
        match = pattern.match(key)
        if not match:
            continue
        kind, suffix = match.group(1), match.group(2) or ""
        group = groups.setdefault(suffix, RequestGroup(suffix=suffix))
        value = request.GET[key]
        if kind == "resources":
            group.resources = resources(value)
        elif kind == "required":
            group.required_traits, group.forbidden_traits = required_traits(request, suffix)
        elif kind == "member_of":
            group.member_of, group.forbidden_aggregates = member_of(request, suffix)
        else:
            group.in_tree = in_tree(value)
    if request.version >= (1, 36):
        _check_resourceless(groups, wide)
    else:
        _check_orphans(groups)
    if request.version >= (1, 22):
        _check_conflicts(groups)
    return groups


def _check_resourceless(groups: Mapping[str, RequestGroup], wide: RequestWideParams) -> None:
    resourceless = [suffix for suffix, group in groups.items() if not group.resources]
    if len(resourceless) == len(groups):
        raise errors.Invalid(
            "There must be at least one resources or resources[$S] parameter.",
            code=errors.QUERYPARAM_MISSING_VALUE,
        )
    in_subtrees = set().union(*wide.same_subtrees)
    bad = [suffix for suffix in resourceless if suffix not in in_subtrees]
    if bad:
        raise errors.Invalid(
            "Resourceless suffixed group request should be specified in `same_subtree` query param: "
            f"bad group(s) - {bad}.",
            code=errors.QUERYPARAM_BAD_VALUE,
        )
    unknown = [suffix for suffix in in_subtrees if suffix not in groups]
    if unknown:
        raise errors.Invalid(
            f"Real suffixes should be specified in `same_subtree`: {unknown} not found in {list(groups)}.",
            code=errors.QUERYPARAM_BAD_VALUE,
        )


def _check_orphans(groups: Mapping[str, RequestGroup]) -> None:
    orphans = [f"required{s}" for s, g in groups.items() if g.required_traits and not g.resources]
    if orphans:
        raise errors.Invalid(
            "All traits parameters must be associated with resources.  Found the following orphaned traits "
            f"keys: {', '.join(orphans)}"
        )
    orphans = [
        f"member_of{s}" for s, g in groups.items() if not g.resources and (g.member_of or g.forbidden_aggregates)
    ]
    if orphans:
        raise errors.Invalid(
            "All member_of parameters must be associated with resources. Found the following orphaned "
            f"member_of keys: {', '.join(orphans)}"
        )
    if not all(g.resources for g in groups.values()):
        raise errors.Invalid("All request groups must specify resources.")
    if not groups:
        raise errors.Invalid("At least one request group (`resources` or `resources{$S}`) is required.")


def _check_conflicts(groups: Mapping[str, RequestGroup]) -> None:
    conflicts = [
        f"required{suffix}: ({', '.join(sorted(any_of))})"
        for suffix, group in groups.items()
        for any_of in group.required_traits
        if all(name in group.forbidden_traits for name in any_of)
    ]
    if conflicts:
        raise errors.Invalid(
            "Conflicting required and forbidden traits found in the following traits keys: "
            + ", ".join(sorted(conflicts))
        )
