"""Reading a host's aggregate metadata the way Nova's filters and weighers
do: one key's raw values, every key's comma-split values, and a number
resolved across aggregates (the smallest wins, unreadable -> the default)."""

import logging
from collections.abc import Callable, Iterable

from aggregates.scheduling.host_state import AggregateInfo, HostState

LOG = logging.getLogger("aggregates.scheduling")


def values_from_key(host: HostState, key: str) -> set[str]:
    """The raw values of ``key`` over the host's aggregates, not split on commas."""
    return {aggregate.metadata[key] for aggregate in host.aggregates if key in aggregate.metadata}


def metadata_by_host(host: HostState) -> dict[str, set[str]]:
    """Every key of the host's aggregates mapped to the union of its values,
    each value split on ',' and stripped ("a, b" gives {"a", "b"}). Worked
    out once per host state (several filters ask); callers must not change it."""
    if host.metadata_cache is not None:
        return host.metadata_cache
    merged: dict[str, set[str]] = {}
    for aggregate in host.aggregates:
        for key, values in aggregate.split_metadata.items():
            if key in merged:
                merged[key].update(values)
            else:
                merged[key] = set(values)
    host.metadata_cache = merged
    return merged


def aggregates_of(hosts: Iterable[HostState]) -> list[AggregateInfo]:
    """The aggregates of ``hosts``, each once (hosts share them: a decision's
    1,000 candidates have 3,000 memberships of 200 aggregates)."""
    return list({id(aggregate): aggregate for host in hosts for aggregate in host.aggregates}.values())


def aggregates_with_key(host: HostState, key: str) -> list[str]:
    """Names of the host's aggregates that set ``key``, in the host's order
    (for saying where a value came from)."""
    return [aggregate.name for aggregate in host.aggregates if key in aggregate.metadata]


def numeric_value(host: HostState, key: str, default: float, cast: Callable[[str], float] = float) -> float:
    """``key`` read as a number: the minimum over the host's aggregates, the
    default when none sets it, and the default (with a warning) when any value
    does not cast, e.g. "5,10" or "abc"."""
    values = values_from_key(host, key)
    if not values:
        return default
    try:
        return min(cast(value) for value in values)
    except ValueError as error:
        LOG.warning(
            "Host %s: cannot read %s from its aggregates %s (values %s): %s; using the default %s",
            host.host,
            key,
            ", ".join(aggregates_with_key(host, key)),
            ", ".join(repr(value) for value in sorted(values)),
            error,
            default,
        )
        return default
