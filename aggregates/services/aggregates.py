"""Host aggregates and the availability-zone rules, as Nova enforces them.

Each function owns its transaction: the change and its ``.end`` event commit
together or not at all. ``.start`` events are written before the checks (as
Nova sends them), so a refused request leaves a start, a ``compute.exception``
event, and no change.
"""
from django.db import IntegrityError, transaction
from django.db.models import Prefetch, Sum
from django.utils import timezone

from aggregates import mirroring
from aggregates.models import Aggregate, AggregateHost, AggregateMetadata, ComputeNode, PlacementMirrorRequest, Service

from . import events
from .exceptions import Conflict, Invalid, NotFound
from .zones import AZ_KEY

# --- reading ---------------------------------------------------------------


def aggregates_with_details():
    return Aggregate.objects.prefetch_related(
        Prefetch("metadata_items", queryset=AggregateMetadata.objects.order_by("key")),
        Prefetch("host_items", queryset=AggregateHost.objects.order_by("id")),
    )


def get_aggregate(aggregate_id):
    try:
        return aggregates_with_details().get(pk=aggregate_id)
    except Aggregate.DoesNotExist:
        raise NotFound(f"Aggregate {aggregate_id} could not be found.")


def list_aggregates():
    return list(aggregates_with_details().order_by("id"))


def metadata_of(aggregate):
    return {item.key: item.value for item in aggregate.metadata_items.all()}


def hosts_of(aggregate):
    return [item.host for item in aggregate.host_items.all()]


def availability_zone_of(aggregate):
    return metadata_of(aggregate).get(AZ_KEY)


def snapshot(aggregate, with_hosts=True, with_metadata=True):
    """The AggregatePayload of a notification."""
    return {
        "id": aggregate.id,
        "uuid": str(aggregate.uuid),
        "name": aggregate.name,
        "hosts": hosts_of(aggregate) if with_hosts else None,
        "metadata": metadata_of(aggregate) if with_metadata else None,
    }


def _record(caller, event_type, aggregate, payload=None):
    events.record(
        caller,
        event_type,
        object_type="aggregate",
        object_id=aggregate.id if aggregate.id else "",
        object_uuid=aggregate.uuid,
        payload=payload if payload is not None else snapshot(aggregate),
    )


def _locked(aggregate_id):
    """Re-read the aggregate under a row lock, for the rest of the transaction."""
    try:
        Aggregate.objects.select_for_update().get(pk=aggregate_id)
    except Aggregate.DoesNotExist:
        raise NotFound(f"Aggregate {aggregate_id} could not be found.")
    return get_aggregate(aggregate_id)


def _lock_hosts(hosts):
    """Serialise changes touching the same hosts (their compute service rows)."""
    list(Service.objects.select_for_update().filter(host__in=list(hosts)).order_by("id").values_list("id"))


def _touch(aggregate):
    aggregate.updated_at = timezone.now()
    Aggregate.objects.filter(pk=aggregate.pk).update(updated_at=aggregate.updated_at)


def _instances_on(hosts):
    return ComputeNode.objects.filter(host__in=list(hosts)).aggregate(n=Sum("running_vms"))["n"] or 0


def _zones_elsewhere(aggregate, hosts):
    """AZ names that ``hosts`` get from aggregates other than ``aggregate``."""
    return set(
        AggregateMetadata.objects.filter(key=AZ_KEY, aggregate__host_items__host__in=list(hosts))
        .exclude(aggregate=aggregate)
        .values_list("value", flat=True)
    )


def _check_zone_change(aggregate, new_zone):
    """Nova's rules for giving an aggregate a (new) AZ; returns the reason it
    is refused, or None."""
    if new_zone is None or new_zone == "":
        return (f"Aggregate {aggregate.name} does not support empty named availability zone. "
                "An availability zone can be renamed but not removed")
    hosts = hosts_of(aggregate)
    if not hosts:
        return None
    _lock_hosts(hosts)
    conflicts = sorted(_zones_elsewhere(aggregate, hosts) - {new_zone})
    if conflicts:
        return (f"One or more hosts already in availability zone(s) {conflicts}. "
                "A host can be in only one availability zone: remove the hosts from the aggregates "
                "of the other zone first")
    if new_zone != availability_zone_of(aggregate):
        instances = _instances_on(hosts)
        if instances:
            return (f"One or more hosts contain instances in this zone ({instances} instance(s)). "
                    "Move or delete the instances before changing the zone")
    return None


# --- writing ---------------------------------------------------------------


def create_aggregate(caller, name, availability_zone=None):
    name = name.strip()
    if availability_zone is not None:
        availability_zone = availability_zone.strip()
    start = Aggregate(name=name)
    start_payload = {"id": None, "uuid": str(start.uuid), "name": name, "hosts": None,
                     "metadata": {AZ_KEY: availability_zone} if availability_zone else None}
    _record(caller, "aggregate.create.start", start, start_payload)
    with events.failures_recorded(caller, "create_aggregate", "aggregate"):
        try:
            with transaction.atomic():
                if Aggregate.objects.filter(name=name).exists():
                    raise Conflict(f"Aggregate {name} already exists. Choose another name.")
                start.save()
                if availability_zone:
                    AggregateMetadata.objects.create(aggregate=start, key=AZ_KEY, value=availability_zone)
                aggregate = get_aggregate(start.pk)
                _record(caller, "aggregate.create.end", aggregate)
        except IntegrityError:
            raise Conflict(f"Aggregate {name} already exists. Choose another name.")
    return aggregate


def update_aggregate(caller, aggregate_id, name=None, availability_zone=None, set_zone=False):
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
                        raise Conflict(f"Aggregate {name} already exists. Choose another name.")
                    aggregate.name = name
                    aggregate.save(update_fields=["name"])
                    _touch(aggregate)
                    _record(caller, "aggregate.update_prop.end", aggregate)
                if set_zone:
                    reason = _check_zone_change(aggregate, availability_zone)
                    if reason:
                        raise Invalid(f"Cannot update aggregate {aggregate_id}. Reason: {reason}.")
                    AggregateMetadata.objects.update_or_create(
                        aggregate=aggregate, key=AZ_KEY, defaults={"value": availability_zone})
                    _touch(aggregate)
                    aggregate = get_aggregate(aggregate_id)
                    _record(caller, "aggregate.update_metadata.end", aggregate)
        except IntegrityError:
            raise Conflict(f"Aggregate {name} already exists. Choose another name.")
    return get_aggregate(aggregate_id)


def set_metadata(caller, aggregate_id, metadata):
    """Merge ``metadata`` into the aggregate's: a None value deletes its key."""
    _record(caller, "aggregate.update_metadata.start", get_aggregate(aggregate_id))
    with events.failures_recorded(caller, "update_aggregate_metadata", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = _locked(aggregate_id)
            if AZ_KEY in metadata:
                reason = _check_zone_change(aggregate, metadata[AZ_KEY])
                if reason:
                    raise Invalid(f"Cannot update metadata of aggregate {aggregate_id}. Reason: {reason}.")
            for key, value in metadata.items():
                if value is None:
                    AggregateMetadata.objects.filter(aggregate=aggregate, key=key).delete()
                else:
                    AggregateMetadata.objects.update_or_create(aggregate=aggregate, key=key,
                                                               defaults={"value": value})
            _touch(aggregate)
            aggregate = get_aggregate(aggregate_id)
            _record(caller, "aggregate.update_metadata.end", aggregate)
    return aggregate


def delete_aggregate(caller, aggregate_id):
    _record(caller, "aggregate.delete.start", get_aggregate(aggregate_id))
    with events.failures_recorded(caller, "delete_aggregate", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = _locked(aggregate_id)
            hosts = hosts_of(aggregate)
            if hosts:
                raise Invalid(
                    f"Cannot remove host from aggregate {aggregate_id}. Reason: Host aggregate is not empty. "
                    f"Remove its {len(hosts)} host(s) first: {', '.join(hosts)}."
                )
            payload = snapshot(aggregate)
            mirroring.record(aggregate, PlacementMirrorRequest.DELETE)
            aggregate.delete()
            _record(caller, "aggregate.delete.end", Aggregate(id=aggregate_id, uuid=payload["uuid"]), payload)


def _compute_service(host, not_found_message):
    service = Service.objects.filter(host=host, binary=Service.COMPUTE).first()
    # The equality check guards databases whose collation ignores case.
    if service is None or service.host != host:
        raise NotFound(not_found_message)
    return service


def add_host(caller, aggregate_id, host):
    with events.failures_recorded(caller, "add_host_to_aggregate", "aggregate", aggregate_id):
        _compute_service(host, f"Compute host {host} could not be found. Register the host first.")
        aggregate = get_aggregate(aggregate_id)
        _record(caller, "aggregate.add_host.start", aggregate)
        with transaction.atomic():
            aggregate = _locked(aggregate_id)
            _lock_hosts([host])
            zone = availability_zone_of(aggregate)
            if zone is not None:
                elsewhere = _zones_elsewhere(aggregate, [host])
                current = sorted(elsewhere - {zone})
                if current:
                    raise Conflict(
                        f"Cannot add host to aggregate {aggregate_id}. Reason: One or more hosts already in "
                        f"availability zone(s) {current}. Host {host} can be in only one availability zone: "
                        f"remove it from the aggregates of zone(s) {', '.join(current)} first."
                    )
                instances = _instances_on([host])
                now_in = zone if elsewhere else None
                if instances and now_in != zone and host not in hosts_of(aggregate):
                    raise Conflict(
                        f"Cannot add host to aggregate {aggregate_id}. Reason: The availability zone of host "
                        f"{host} would change from '{now_in}' to '{zone}' but the host already has "
                        f"{instances} instance(s). Move the instances off the host first."
                    )
            if host in hosts_of(aggregate):
                raise Conflict(f"Aggregate {aggregate_id} already has host {host}.")
            AggregateHost.objects.create(aggregate=aggregate, host=host)
            mirroring.record(aggregate, PlacementMirrorRequest.ADD, host)
            _touch(aggregate)
            aggregate = get_aggregate(aggregate_id)
            _record(caller, "aggregate.add_host.end", aggregate)
    return aggregate


def remove_host(caller, aggregate_id, host):
    not_found = f"Cannot remove host {host} in aggregate {aggregate_id}"
    with events.failures_recorded(caller, "remove_host_from_aggregate", "aggregate", aggregate_id):
        _compute_service(host, f"{not_found}: no compute host of that name is registered.")
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
                        f"the host has {instances} instance(s). Move the instances off the host first."
                    )
            deleted, _ = AggregateHost.objects.filter(aggregate=aggregate, host=host).delete()
            if not deleted:
                raise NotFound(f"{not_found}: the host is not a member of it.")
            mirroring.record(aggregate, PlacementMirrorRequest.REMOVE, host)
            _touch(aggregate)
            aggregate = get_aggregate(aggregate_id)
            _record(caller, "aggregate.remove_host.end", aggregate)
    return aggregate


# --- several changes as one -------------------------------------------------
# A refusal rolls back every step, the steps' events included, so it is
# recorded again after the rollback as one ``compute.exception`` event.


def create_aggregate_with_hosts(caller, name, availability_zone, hosts):
    """Create an aggregate and add ``hosts`` to it: all of it or nothing."""
    with events.failures_recorded(caller, "create_aggregate_with_hosts", "aggregate"):
        with transaction.atomic():
            aggregate = create_aggregate(caller, name, availability_zone or None)
            for host in hosts:
                aggregate = add_host(caller, aggregate.id, host)
    return aggregate


def add_hosts(caller, aggregate_id, hosts):
    """Add several hosts to an aggregate: all of them or none."""
    with events.failures_recorded(caller, "add_hosts_to_aggregate", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = get_aggregate(aggregate_id)
            for host in hosts:
                aggregate = add_host(caller, aggregate_id, host)
    return aggregate


def remove_hosts(caller, aggregate_id, hosts):
    """Remove several hosts from an aggregate: all of them or none."""
    with events.failures_recorded(caller, "remove_hosts_from_aggregate", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = get_aggregate(aggregate_id)
            for host in hosts:
                aggregate = remove_host(caller, aggregate_id, host)
    return aggregate
