"""Host aggregates and the availability-zone rules, as Nova enforces them.

Each function owns its transaction: the change and its ``.end`` event commit
together or not at all. ``.start`` events are written before the checks (as
Nova sends them), so a refused request leaves a start, a ``compute.exception``
event, and no change.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Prefetch, QuerySet
from django.dispatch import Signal
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Conflict, Invalid, NotFound, ServiceError
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts.models import Service
from aggregates.identity.caller import Caller
from aggregates.mirroring import outbox
from aggregates.mirroring.models import PlacementMirrorRequest
from aggregates.servers.models import instances_by_host
from aggregates.zones.services import AZ_KEY, zone_memberships, zoned_hosts

log = logging.getLogger(__name__)

# Nova's disabled_reason of a service registered while enable_new_services is
# false (ENABLE_NEW_SERVICES); with ENABLE_HOSTS_ON_AGGREGATE_JOIN such a host
# is enabled when it joins its first aggregate.
NEW_SERVICE_DISABLED_REASON = "New service disabled due to config option."

# Sent by ``add_host`` inside its transaction once the host is a member
# (keywords ``aggregate``, ``host``, ``caller``): what follows a host into an
# aggregate (its pinned images, ``precache.pins``) is written in the same
# transaction, so it commits with the join or not at all.
host_joined = Signal()

# --- reading ---------------------------------------------------------------


def aggregates_with_details() -> QuerySet[Aggregate]:
    return Aggregate.objects.prefetch_related(
        Prefetch("metadata_items", queryset=AggregateMetadata.objects.order_by("key")),
        Prefetch("host_items", queryset=AggregateHost.objects.order_by("id")),
    )


def get_aggregate(aggregate_id: int) -> Aggregate:
    try:
        return aggregates_with_details().get(pk=aggregate_id)
    except Aggregate.DoesNotExist:
        raise NotFound(f"Aggregate {aggregate_id} could not be found.")


def list_aggregates() -> list[Aggregate]:
    return list(aggregates_with_details().order_by("id"))


def metadata_of(aggregate: Aggregate) -> dict[str, str]:
    return {item.key: item.value for item in aggregate.metadata_items.all()}


def hosts_of(aggregate: Aggregate) -> list[str]:
    """The aggregate's hosts, in the order they joined."""
    return [item.host for item in aggregate.host_items.all()]


def availability_zone_of(aggregate: Aggregate) -> str | None:
    return metadata_of(aggregate).get(AZ_KEY)


def snapshot(aggregate: Aggregate, with_hosts: bool = True, with_metadata: bool = True) -> dict[str, Any]:
    """The AggregatePayload of a notification."""
    return {
        "id": aggregate.id,
        "uuid": str(aggregate.uuid),
        "name": aggregate.name,
        "hosts": hosts_of(aggregate) if with_hosts else None,
        "metadata": metadata_of(aggregate) if with_metadata else None,
    }


def _record(caller: Caller, event_type: str, aggregate: Aggregate, payload: dict[str, Any] | None = None) -> None:
    events.record(
        caller,
        event_type,
        object_type="aggregate",
        object_id=aggregate.id if aggregate.id else "",
        object_uuid=aggregate.uuid,
        payload=payload if payload is not None else snapshot(aggregate),
    )


def _locked(aggregate_id: int) -> Aggregate:
    """Re-read the aggregate under a row lock, for the rest of the transaction."""
    try:
        Aggregate.objects.select_for_update().get(pk=aggregate_id)
    except Aggregate.DoesNotExist:
        raise NotFound(f"Aggregate {aggregate_id} could not be found.")
    return get_aggregate(aggregate_id)


def _lock_hosts(hosts: Iterable[str]) -> None:
    """Serialise changes touching the same hosts (their compute service rows):
    the one-zone-per-host checks read other aggregates' rows, so two requests
    placing a host in two zones must not both pass them."""
    list(Service.objects.select_for_update().filter(host__in=list(hosts)).order_by("id").values_list("id"))


def _touch(aggregate: Aggregate) -> None:
    aggregate.updated_at = timezone.now()
    Aggregate.objects.filter(pk=aggregate.pk).update(updated_at=aggregate.updated_at)


def _instances_on(hosts: Iterable[str]) -> int:
    return sum(instances_by_host(hosts).values())


def _zones_elsewhere(aggregate: Aggregate, hosts: Iterable[str]) -> set[str]:
    """AZ names that ``hosts`` get from aggregates other than ``aggregate``."""
    return {zone for names in _zones_elsewhere_by_host(aggregate, hosts).values() for zone in names}


def _zones_elsewhere_by_host(aggregate: Aggregate, hosts: Iterable[str]) -> dict[str, set[str]]:
    """host -> the AZ names it gets from aggregates other than ``aggregate``."""
    return {
        host: {source.zone for source in sources}
        for host, sources in zone_memberships(hosts, excluding=aggregate).items()
    }


def hosts_held_by_other_zones(aggregate: Aggregate) -> QuerySet[AggregateHost, str]:
    """A subquery (of ``host`` values) of the hosts that an aggregate with
    another zone than ``aggregate``'s holds: those that cannot join it (see
    ``add_host_refusals``). None of them when the aggregate has no zone."""
    zone = availability_zone_of(aggregate)
    if zone is None:
        return AggregateHost.objects.none().values_list("host", flat=True)
    return zoned_hosts(other_than=zone)


def _check_zone_change(aggregate: Aggregate, new_zone: str | None) -> str | None:
    """Nova's rules for giving an aggregate a (new) AZ; returns the reason it
    is refused, or None."""
    if new_zone is None or new_zone == "":
        return (
            f"Aggregate {aggregate.name} does not support empty named availability zone. "
            "An availability zone can be renamed but not removed"
        )
    hosts = hosts_of(aggregate)
    if not hosts:
        return None
    _lock_hosts(hosts)
    conflicts = sorted(_zones_elsewhere(aggregate, hosts) - {new_zone})
    if conflicts:
        return (
            f"One or more hosts already in availability zone(s) {conflicts}. "
            "A host can be in only one availability zone: remove the hosts from the aggregates "
            "of the other zone first"
        )
    if new_zone != availability_zone_of(aggregate):
        instances = _instances_on(hosts)
        if instances:
            return (
                f"One or more hosts contain instances in this zone ({instances} instance(s)). "
                "Move or delete the instances before changing the zone"
            )
    return None


# --- which hosts may join an aggregate ----------------------------------------


@dataclass(frozen=True)
class HostRefusal:
    """Why a host cannot join an aggregate. ``error`` is exactly what
    ``add_host`` raises for it; ``other_zones`` are the zones that other
    aggregates give the host (when that is the reason) and ``instances`` the
    instances whose zone would change (when that is), for surfaces that
    explain the refusal before the request is made."""

    error: ServiceError
    other_zones: tuple[str, ...] = ()
    instances: int = 0


def _unregistered_refusals(hosts: Sequence[str]) -> dict[str, HostRefusal]:
    """The hosts that are not registered compute hosts. Names match exactly:
    the equality test guards databases whose collation ignores case."""
    registered = set(
        Service.objects.filter(host__in=list(hosts), binary=Service.COMPUTE).values_list("host", flat=True)
    )
    return {
        host: HostRefusal(NotFound(f"Compute host {host} could not be found. Register the host first.", field="hosts"))
        for host in hosts
        if host not in registered
    }


def add_host_refusals(aggregate: Aggregate, hosts: Iterable[str]) -> dict[str, HostRefusal]:
    """Nova's rules for adding hosts to ``aggregate``: host -> why adding it is
    refused, for each of ``hosts`` that would be (the first reason that
    applies, in this order):

    - it is not a registered compute host (404);
    - the aggregate has a zone and other aggregates put the host in another
      one: a host is in one availability zone only (409);
    - the aggregate has a zone, the host is in the default zone and runs
      instances, whose zone would change (409);
    - it is a member already (409).

    ``add_host`` and ``add_hosts`` refuse with it (under their row locks);
    the console's host picker explains with it before the request is made.
    A fixed number of queries, whatever the number of hosts."""
    hosts = list(dict.fromkeys(hosts))
    if not hosts:
        return {}
    refusals = _unregistered_refusals(hosts)
    members = set(hosts_of(aggregate))
    zone = availability_zone_of(aggregate)
    elsewhere = _zones_elsewhere_by_host(aggregate, hosts) if zone is not None else {}
    instances_of = instances_by_host(hosts) if zone is not None else {}
    refused = f"Cannot add host to aggregate {aggregate.id}. Reason:"
    for host in hosts:
        if host in refusals:
            continue
        if zone is not None:
            zones = elsewhere.get(host, set())
            current = sorted(zones - {zone})
            if current:
                refusals[host] = HostRefusal(
                    Conflict(
                        f"{refused} One or more hosts already in availability zone(s) {current}. Host {host} can "
                        f"be in only one availability zone: remove it from the aggregates of zone(s) "
                        f"{', '.join(current)} first.",
                        field="hosts",
                    ),
                    other_zones=tuple(current),
                )
                continue
            instances = instances_of.get(host, 0)
            now_in = zone if zones else None
            if instances and now_in != zone and host not in members:
                refusals[host] = HostRefusal(
                    Conflict(
                        f"{refused} The availability zone of host {host} would change from '{now_in}' to "
                        f"'{zone}' but the host already has {instances} instance(s). Move the instances off the "
                        "host first.",
                        field="hosts",
                    ),
                    instances=instances,
                )
                continue
        if host in members:
            refusals[host] = HostRefusal(Conflict(f"Aggregate {aggregate.id} already has host {host}.", field="hosts"))
    return refusals


def _refuse(refusals: dict[str, HostRefusal], hosts: Iterable[str]) -> None:
    """Raise the refusal of the first of ``hosts`` that has one."""
    for host in hosts:
        if host in refusals:
            raise refusals[host].error


# --- writing ---------------------------------------------------------------


def _name_taken(name: str) -> Conflict:
    return Conflict(f"Aggregate {name} already exists. Choose another name.", field="name")


def create_aggregate(caller: Caller, name: str, availability_zone: str | None = None) -> Aggregate:
    name = name.strip()
    if availability_zone is not None:
        availability_zone = availability_zone.strip()
    start = Aggregate(name=name)
    start_payload = {
        "id": None,
        "uuid": str(start.uuid),
        "name": name,
        "hosts": None,
        "metadata": {AZ_KEY: availability_zone} if availability_zone else None,
    }
    _record(caller, "aggregate.create.start", start, start_payload)
    with events.failures_recorded(caller, "create_aggregate", "aggregate"):
        try:
            with transaction.atomic():
                if Aggregate.objects.filter(name=name).exists():
                    raise _name_taken(name)
                start.save()
                if availability_zone:
                    AggregateMetadata.objects.create(aggregate=start, key=AZ_KEY, value=availability_zone)
                aggregate = get_aggregate(start.pk)
                _record(caller, "aggregate.create.end", aggregate)
        except IntegrityError:
            raise _name_taken(name)
    return aggregate


def update_aggregate(
    caller: Caller,
    aggregate_id: int,
    name: str | None = None,
    availability_zone: str | None = None,
    set_zone: bool = False,
) -> Aggregate:
    """Rename and/or re-zone an aggregate, atomically (Nova saves the name
    even when the zone check then fails; Corral changes nothing)."""
    aggregate = get_aggregate(aggregate_id)
    if name is not None:
        name = name.strip()
        _record(caller, "aggregate.update_prop.start", aggregate, {**snapshot(aggregate), "name": name})
    if set_zone:
        _record(caller, "aggregate.update_metadata.start", aggregate)
    with events.failures_recorded(caller, "update_aggregate", "aggregate", aggregate_id):
        try:
            with transaction.atomic():
                aggregate = _locked(aggregate_id)
                if name is not None:
                    if Aggregate.objects.filter(name=name).exclude(pk=aggregate.pk).exists():
                        raise _name_taken(name)
                    aggregate.name = name
                    aggregate.save(update_fields=["name"])
                    _touch(aggregate)
                    _record(caller, "aggregate.update_prop.end", aggregate)
                if set_zone:
                    reason = _check_zone_change(aggregate, availability_zone)
                    if reason or availability_zone is None:  # (the check refuses None)
                        raise Invalid(
                            f"Cannot update aggregate {aggregate_id}. Reason: {reason}.", field="availability_zone"
                        )
                    AggregateMetadata.objects.update_or_create(
                        aggregate=aggregate, key=AZ_KEY, defaults={"value": availability_zone}
                    )
                    _touch(aggregate)
                    aggregate = get_aggregate(aggregate_id)
                    _record(caller, "aggregate.update_metadata.end", aggregate)
        except IntegrityError:
            raise _name_taken(str(name))
    return get_aggregate(aggregate_id)


def set_metadata(caller: Caller, aggregate_id: int, metadata: Mapping[str, str | None]) -> Aggregate:
    """Merge ``metadata`` into the aggregate's: a None value deletes its key."""
    _record(caller, "aggregate.update_metadata.start", get_aggregate(aggregate_id))
    with events.failures_recorded(caller, "update_aggregate_metadata", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = _locked(aggregate_id)
            if AZ_KEY in metadata:
                reason = _check_zone_change(aggregate, metadata[AZ_KEY])
                if reason:
                    raise Invalid(
                        f"Cannot update metadata of aggregate {aggregate_id}. Reason: {reason}.", field="metadata"
                    )
            for key, value in metadata.items():
                if value is None:
                    AggregateMetadata.objects.filter(aggregate=aggregate, key=key).delete()
                else:
                    AggregateMetadata.objects.update_or_create(aggregate=aggregate, key=key, defaults={"value": value})
            _touch(aggregate)
            aggregate = get_aggregate(aggregate_id)
            _record(caller, "aggregate.update_metadata.end", aggregate)
    return aggregate


def delete_aggregate(caller: Caller, aggregate_id: int) -> None:
    _record(caller, "aggregate.delete.start", get_aggregate(aggregate_id))
    with events.failures_recorded(caller, "delete_aggregate", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = _locked(aggregate_id)
            hosts = hosts_of(aggregate)
            if hosts:
                raise Invalid(
                    f"Cannot remove host from aggregate {aggregate_id}. Reason: Host aggregate is not empty. "
                    f"Remove its {len(hosts)} host(s) first: {', '.join(hosts)}.",
                    field="hosts",
                )
            payload = snapshot(aggregate)
            outbox.record(aggregate, PlacementMirrorRequest.DELETE)
            aggregate.delete()
            _record(caller, "aggregate.delete.end", Aggregate(id=aggregate_id, uuid=payload["uuid"]), payload)


def add_host(caller: Caller, aggregate_id: int, host: str) -> Aggregate:
    """Add ``host`` to the aggregate, unless ``add_host_refusals`` refuses it.
    The host's service row stays locked from the check to the commit."""
    with events.failures_recorded(caller, "add_host_to_aggregate", "aggregate", aggregate_id):
        # An unknown host is refused before the aggregate is read (and before
        # the start event), as Nova does.
        _refuse(_unregistered_refusals([host]), [host])
        aggregate = get_aggregate(aggregate_id)
        _record(caller, "aggregate.add_host.start", aggregate)
        with transaction.atomic():
            aggregate = _locked(aggregate_id)
            _lock_hosts([host])
            _refuse(add_host_refusals(aggregate, [host]), [host])
            AggregateHost.objects.create(aggregate=aggregate, host=host)
            outbox.record(aggregate, PlacementMirrorRequest.ADD, host)
            _touch(aggregate)
            aggregate = get_aggregate(aggregate_id)
            _record(caller, "aggregate.add_host.end", aggregate)
            _enable_on_first_join(caller, host)
            host_joined.send(sender=Aggregate, aggregate=aggregate, host=host, caller=caller)
    log.info("Added host %s to aggregate %s (%s)", host, aggregate.name, aggregate.uuid)
    return aggregate


def _enable_on_first_join(caller: Caller, host: str) -> None:
    """With ENABLE_HOSTS_ON_AGGREGATE_JOIN: a host that came up disabled
    because of ENABLE_NEW_SERVICES is enabled when it joins its first
    aggregate (a host disabled for any other reason stays as it is)."""
    if not settings.ENABLE_HOSTS_ON_AGGREGATE_JOIN or AggregateHost.objects.filter(host=host).count() != 1:
        return
    service = Service.objects.select_for_update().filter(host=host, binary=Service.COMPUTE).first()
    if service is None or not service.disabled or service.disabled_reason != NEW_SERVICE_DISABLED_REASON:
        return
    service.disabled, service.disabled_reason, service.updated_at = False, None, timezone.now()
    service.save(update_fields=["disabled", "disabled_reason", "updated_at"])
    events.record(
        caller,
        "service.update",
        object_type="service",
        object_id=service.id,
        object_uuid=service.uuid,
        payload={
            "uuid": str(service.uuid),
            "host": service.host,
            "binary": service.binary,
            "disabled": False,
            "disabled_reason": None,
            "forced_down": service.forced_down,
            "enabled_because": "the host joined its first aggregate (ENABLE_HOSTS_ON_AGGREGATE_JOIN)",
        },
    )
    for compute_node in service.compute_nodes.order_by("id"):
        outbox.record_provider_sync(compute_node)


def remove_host(caller: Caller, aggregate_id: int, host: str) -> Aggregate:
    not_found = f"Cannot remove host {host} in aggregate {aggregate_id}"
    with events.failures_recorded(caller, "remove_host_from_aggregate", "aggregate", aggregate_id):
        if Service.objects.compute_of(host) is None:
            raise NotFound(f"{not_found}: no compute host of that name is registered.", field="hosts")
        try:
            aggregate = get_aggregate(aggregate_id)
        except NotFound:
            raise NotFound(f"{not_found}: the aggregate does not exist.")
        _record(caller, "aggregate.remove_host.start", aggregate)
        with transaction.atomic():
            aggregate = _locked(aggregate_id)
            _lock_hosts([host])
            zone = availability_zone_of(aggregate)
            if zone is not None:
                instances = _instances_on([host])
                after = ",".join(sorted(_zones_elsewhere(aggregate, [host]))) or None
                if instances and after != zone:
                    raise Conflict(
                        f"Cannot remove host from aggregate {aggregate_id}. Reason: The host cannot be removed "
                        f"as the availability zone of host {host} would change from '{zone}' to '{after}' but "
                        f"the host has {instances} instance(s). Move the instances off the host first.",
                        field="hosts",
                    )
            deleted, _ = AggregateHost.objects.filter(aggregate=aggregate, host=host).delete()
            if not deleted:
                raise NotFound(f"{not_found}: the host is not a member of it.", field="hosts")
            outbox.record(aggregate, PlacementMirrorRequest.REMOVE, host)
            _touch(aggregate)
            aggregate = get_aggregate(aggregate_id)
            _record(caller, "aggregate.remove_host.end", aggregate)
    return aggregate


# --- several changes as one -------------------------------------------------
# A refusal rolls back every step, the steps' events included, so it is
# recorded again after the rollback as one ``compute.exception`` event.


def create_aggregate_with_hosts(
    caller: Caller,
    name: str,
    availability_zone: str | None,
    hosts: Sequence[str],
    metadata: dict[str, str] | None = None,
) -> Aggregate:
    """Create an aggregate, set its ``metadata`` (``set_metadata``'s rules)
    and add ``hosts`` to it: all of it or nothing."""
    with events.failures_recorded(caller, "create_aggregate_with_hosts", "aggregate"):
        with transaction.atomic():
            aggregate = create_aggregate(caller, name, availability_zone or None)
            if metadata:
                aggregate = set_metadata(caller, aggregate.id, dict(metadata))
            if hosts:
                aggregate = add_hosts(caller, aggregate.id, hosts)
    return aggregate


def delete_aggregates(caller: Caller, aggregate_ids: Sequence[int]) -> list[str]:
    """Delete several aggregates (``delete_aggregate`` each): all of them or
    none. Any that still has hosts refuses the whole request, and the refusal
    names every such aggregate. Returns the names of the deleted aggregates."""
    with events.failures_recorded(caller, "delete_aggregates", "aggregate"):
        with transaction.atomic():
            aggregates = [_locked(aggregate_id) for aggregate_id in dict.fromkeys(aggregate_ids)]
            not_empty = [a for a in aggregates if hosts_of(a)]
            if not_empty:
                described = ", ".join(f"{a.name} ({len(hosts_of(a))} host(s))" for a in not_empty)
                raise Invalid(
                    f"Cannot delete {described}: "
                    f"{'it still has' if len(not_empty) == 1 else 'they still have'} hosts. "
                    "Remove the hosts first. Nothing was deleted.",
                    field="hosts",
                )
            for aggregate in aggregates:
                delete_aggregate(caller, aggregate.id)
    return [aggregate.name for aggregate in aggregates]


def add_hosts(caller: Caller, aggregate_id: int, hosts: Sequence[str]) -> Aggregate:
    """Add several hosts to an aggregate: all of them or none. Every host is
    checked (``add_host_refusals``, under the locks) before any is added; the
    first refused one, in the given order, refuses the whole request."""
    with events.failures_recorded(caller, "add_hosts_to_aggregate", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = _locked(aggregate_id)
            _lock_hosts(hosts)
            _refuse(add_host_refusals(aggregate, hosts), hosts)
            for host in hosts:
                aggregate = add_host(caller, aggregate_id, host)
    return aggregate


def remove_hosts(caller: Caller, aggregate_id: int, hosts: Sequence[str]) -> Aggregate:
    """Remove several hosts from an aggregate: all of them or none."""
    with events.failures_recorded(caller, "remove_hosts_from_aggregate", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = get_aggregate(aggregate_id)
            for host in hosts:
                aggregate = remove_host(caller, aggregate_id, host)
    return aggregate
