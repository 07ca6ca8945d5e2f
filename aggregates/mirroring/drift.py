"""Drift: what placement has versus what Corral says, per aggregate."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aggregates import placement_client
from aggregates.host_aggregates.models import Aggregate, AggregateHost
from aggregates.hosts.models import ComputeNode
from aggregates.placement_client import PlacementClient

# A resource provider as placement lists it (uuid, name, generation...): parsed JSON.
ProviderRecord = dict[str, Any]

# --- drift: what placement has versus what Corral says -----------------------


@dataclass
class Association:
    """A (host's compute node provider, aggregate) pair."""

    host: str
    node: str
    provider_uuid: str


@dataclass
class AggregateDrift:
    aggregate: Aggregate
    in_sync: list[Association] = field(default_factory=list)  # present in both
    missing: list[Association] = field(default_factory=list)  # member hosts' providers lacking the aggregate
    stale: list[Association] = field(default_factory=list)  # providers of non-member Corral hosts having it
    unknown_providers: list[dict[str, str]] = field(default_factory=list)  # {"uuid", "name"}: no Corral compute node
    hosts_without_provider: list[tuple[str, str]] = field(default_factory=list)  # (host, node uuid)
    hosts_without_node: list[str] = field(default_factory=list)  # host names

    @property
    def drifted(self) -> bool:
        return bool(self.missing or self.stale)


@dataclass
class DriftReport:
    aggregates: list[AggregateDrift]  # in aggregate id order
    placement_requests: int


class ProviderMatcher:
    """Which of placement's providers stand for Corral's compute nodes: the
    one with the node's uuid, else the only one named like the node."""

    def __init__(self, providers: Sequence[ProviderRecord], nodes: Sequence[ComputeNode]) -> None:
        uuids = {p["uuid"] for p in providers}
        by_name: dict[str, list[str]] = {}
        for provider in providers:
            by_name.setdefault(provider["name"], []).append(provider["uuid"])
        self.of_node: dict[int, str] = {}  # node pk -> provider uuid
        for node in nodes:
            if str(node.uuid) in uuids:
                self.of_node[node.pk] = str(node.uuid)
            elif len(by_name.get(node.hypervisor_hostname, [])) == 1:
                self.of_node[node.pk] = by_name[node.hypervisor_hostname][0]
        node_by_pk = {node.pk: node for node in nodes}
        self.owner = {uuid: node_by_pk[pk] for pk, uuid in self.of_node.items()}  # provider uuid -> node


def drift_report(
    placement: PlacementClient | None = None, provider_listing: Sequence[ProviderRecord] | None = None
) -> DriftReport:
    """Per aggregate: associations in sync, missing in placement, stale
    (a Corral host's provider keeps an aggregate the host left), unknown
    providers (in the aggregate, but no compute node of Corral), and member
    hosts without compute node or provider.

    Reads placement 1 + (number of aggregates) times, whatever the number of
    hosts: one listing of every provider (unless ``provider_listing`` is
    that listing already), one member_of listing per aggregate. Raises
    PlacementError when a read fails."""
    placement = placement or placement_client.client()
    before = placement.requests_made
    nodes = list(ComputeNode.objects.order_by("id"))
    nodes_of_host: dict[str, list[ComputeNode]] = {}
    for node in nodes:
        nodes_of_host.setdefault(node.host, []).append(node)
    providers = ProviderMatcher(placement.list_providers() if provider_listing is None else provider_listing, nodes)
    members: dict[int, list[str]] = {}
    for aggregate_id, host in AggregateHost.objects.order_by("id").values_list("aggregate_id", "host"):
        members.setdefault(aggregate_id, []).append(host)
    report = []
    for aggregate in Aggregate.objects.order_by("id"):
        in_placement = {p["uuid"]: p["name"] for p in placement.list_providers(member_of=aggregate.uuid)}
        report.append(
            _aggregate_drift(aggregate, members.get(aggregate.id, []), in_placement, nodes_of_host, providers)
        )
    return DriftReport(report, placement.requests_made - before)


def _aggregate_drift(
    aggregate: Aggregate,
    member_hosts: list[str],
    in_placement: dict[str, str],
    nodes_of_host: dict[str, list[ComputeNode]],
    providers: ProviderMatcher,
) -> AggregateDrift:
    """Compare one aggregate's member hosts with the providers placement
    associates with it (``in_placement``: uuid -> name)."""
    drift = AggregateDrift(aggregate)
    wanted = set()
    for host in member_hosts:
        if host not in nodes_of_host:
            drift.hosts_without_node.append(host)
        for node in nodes_of_host.get(host, []):
            provider_uuid = providers.of_node.get(node.pk)
            if provider_uuid is None:
                drift.hosts_without_provider.append((host, str(node.uuid)))
                continue
            wanted.add(provider_uuid)
            association = Association(host, node.hypervisor_hostname, provider_uuid)
            (drift.in_sync if provider_uuid in in_placement else drift.missing).append(association)
    for provider_uuid, name in in_placement.items():
        if provider_uuid in wanted:
            continue
        owner = providers.owner.get(provider_uuid)
        if owner is None:
            drift.unknown_providers.append({"uuid": provider_uuid, "name": name})
        else:
            drift.stale.append(Association(owner.host, owner.hypervisor_hostname, provider_uuid))
    return drift
