"""Nova's host weighers: each turns a host into a raw number (free RAM, I/O
operations, ...), the numbers are normalised across the candidate hosts to
0..1, and each host adds multiplier * normalised value per weigher. The
multiplier is a setting that an aggregate may override with the setting's
name as a metadata key (the smallest value over the host's aggregates wins,
an unreadable one falls back to the setting). The heaviest host wins."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from django.conf import settings

from aggregates.scheduling import metadata
from aggregates.scheduling.host_state import HostState
from aggregates.scheduling.request import RequestSpec


class Weigher:
    """One criterion for preferring a host."""

    name: ClassVar[str]  # Nova's class name
    key: ClassVar[str]  # Nova's option name: the aggregate metadata key, upper-cased the setting
    # Raw values below this are raised to it, and normalisation then runs from
    # it (not from the smallest raw value) to the largest; None: the smallest.
    minval: ClassVar[float | None] = None
    # The HostState counter of servers it reads (host_state.COUNTERS), if any.
    counter: ClassVar[str] = ""

    def default_multiplier(self) -> float:
        return float(getattr(settings, self.key.upper()))

    def multiplier(self, host: HostState, default: float | None = None) -> float:
        """The host's multiplier: the setting (``default``, when the caller
        read it already), unless the host's aggregates override it."""
        if default is None:
            default = self.default_multiplier()
        cached = host.multiplier_cache.get((self.key, default))
        if cached is None:
            cached = metadata.numeric_value(host, self.key, default, cast=float)
            host.multiplier_cache[(self.key, default)] = cached
        return cached

    def applies(self, spec: RequestSpec) -> bool:
        """Whether the weigher has anything to say about ``spec`` (one that
        has not weighs nothing and is left out of the explanation)."""
        return True

    def raw(self, host: HostState, spec: RequestSpec) -> float:
        raise NotImplementedError


class RAMWeigher(Weigher):
    """More free RAM weighs more (spreading); a negative multiplier stacks."""

    name = "RAMWeigher"
    key = "ram_weight_multiplier"
    minval = 0.0

    def raw(self, host: HostState, spec: RequestSpec) -> float:
        return host.free_ram_mb


class CPUWeigher(Weigher):
    """More free VCPUs weigh more."""

    name = "CPUWeigher"
    key = "cpu_weight_multiplier"
    minval = 0.0

    def raw(self, host: HostState, spec: RequestSpec) -> float:
        return host.free_vcpus


class DiskWeigher(Weigher):
    """More free disk weighs more."""

    name = "DiskWeigher"
    key = "disk_weight_multiplier"
    minval = 0.0

    def raw(self, host: HostState, spec: RequestSpec) -> float:
        return host.free_disk_mb


class IoOpsWeigher(Weigher):
    """More I/O-heavy operations in progress weigh more; the default negative
    multiplier turns that into a preference for quiet hosts."""

    name = "IoOpsWeigher"
    key = "io_ops_weight_multiplier"
    minval = 0.0
    counter = "num_io_ops"

    def raw(self, host: HostState, spec: RequestSpec) -> float:
        return float(host.num_io_ops)


class NumInstancesWeigher(Weigher):
    """More servers weigh more; the default multiplier 0 ignores it."""

    name = "NumInstancesWeigher"
    key = "num_instances_weight_multiplier"
    counter = "num_instances"

    def raw(self, host: HostState, spec: RequestSpec) -> float:
        return float(host.num_instances)


class ServerGroupSoftAffinityWeigher(Weigher):
    """For a soft-affinity group: more of its members on a host weigh more."""

    name = "ServerGroupSoftAffinityWeigher"
    key = "soft_affinity_weight_multiplier"
    policy = "soft-affinity"
    sign = 1.0

    def applies(self, spec: RequestSpec) -> bool:
        return spec.group is not None and spec.group.policy == self.policy

    def raw(self, host: HostState, spec: RequestSpec) -> float:
        members = len(spec.group.members_on(host.host)) if spec.group is not None else 0
        return self.sign * members


class ServerGroupSoftAntiAffinityWeigher(ServerGroupSoftAffinityWeigher):
    """For a soft-anti-affinity group: fewer of its members on a host weigh more."""

    name = "ServerGroupSoftAntiAffinityWeigher"
    key = "soft_anti_affinity_weight_multiplier"
    policy = "soft-anti-affinity"
    sign = -1.0


WEIGHERS: list[Weigher] = [
    RAMWeigher(),
    CPUWeigher(),
    DiskWeigher(),
    IoOpsWeigher(),
    NumInstancesWeigher(),
    ServerGroupSoftAffinityWeigher(),
    ServerGroupSoftAntiAffinityWeigher(),
]


def normalize(values: Sequence[float], minval: float | None = None) -> list[float]:
    """Values scaled to 0..1 between ``minval`` (default: the smallest) and
    the largest; all 0.0 when that range is empty."""
    if not values:
        return []
    low = min(values) if minval is None else minval
    high = max(values)
    if low == high:
        return [0.0] * len(values)
    return [(value - low) / (high - low) for value in values]


@dataclass
class WeighedHost:
    host: HostState
    weight: float
    # Per weigher name: multiplier * normalised raw value.
    weights: dict[str, float]


def weigh_hosts(
    hosts: list[HostState], spec: RequestSpec, weighers: Sequence[Weigher] | None = None
) -> list[WeighedHost]:
    """The hosts with their weights, heaviest first (ties keep input order).
    A lone host is not weighed at all (weight 0.0, no per-weigher scores),
    as in Nova: there is nothing to compare it with."""
    weighed = [WeighedHost(host, 0.0, {}) for host in hosts]
    if len(weighed) <= 1:
        return weighed
    # The keys the hosts' aggregates set: a weigher whose key none sets has
    # the setting's multiplier on every host.
    overridden = {key for aggregate in metadata.aggregates_of(hosts) for key in aggregate.metadata}
    for weigher in WEIGHERS if weighers is None else weighers:
        if not weigher.applies(spec):
            continue
        raws = [weigher.raw(host, spec) for host in hosts]
        if weigher.minval is not None:
            raws = [max(raw, weigher.minval) for raw in raws]
        default = weigher.default_multiplier()
        by_host = weigher.key in overridden
        name = weigher.name
        for entry, normalized in zip(weighed, normalize(raws, weigher.minval), strict=True):
            multiplier = weigher.multiplier(entry.host, default) if by_host else default
            # "+ 0.0" turns -0.0 (a negative multiplier times 0) into 0.0.
            score = multiplier * normalized + 0.0
            entry.weights[name] = score
            entry.weight += score
    return sorted(weighed, key=lambda entry: entry.weight, reverse=True)
