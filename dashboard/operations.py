"""Compositions of service functions that the console needs as one
all-or-nothing change. They belong in aggregates.services; until they move
there they live here, each inside one transaction, calling only the
existing service functions (whose own transactions nest as savepoints).

A refusal rolls back everything, the events of the steps included, so it
is recorded again after the rollback as one ``compute.exception`` event."""
from django.db import transaction

from aggregates import services
from aggregates.services import events


def create_aggregate_with_hosts(caller, name, availability_zone, hosts):
    """Create an aggregate and add ``hosts`` to it: all of it or nothing.
    A refused host raises its service error and rolls the aggregate back."""
    with events.failures_recorded(caller, "create_aggregate_with_hosts", "aggregate"):
        with transaction.atomic():
            aggregate = services.create_aggregate(caller, name, availability_zone or None)
            for host in hosts:
                aggregate = services.add_host(caller, aggregate.id, host)
    return aggregate


def add_hosts(caller, aggregate_id, hosts):
    """Add several hosts to an aggregate: all of them or none."""
    with events.failures_recorded(caller, "add_hosts_to_aggregate", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = services.get_aggregate(aggregate_id)
            for host in hosts:
                aggregate = services.add_host(caller, aggregate_id, host)
    return aggregate


def remove_hosts(caller, aggregate_id, hosts):
    """Remove several hosts from an aggregate: all of them or none."""
    with events.failures_recorded(caller, "remove_hosts_from_aggregate", "aggregate", aggregate_id):
        with transaction.atomic():
            aggregate = services.get_aggregate(aggregate_id)
            for host in hosts:
                aggregate = services.remove_host(caller, aggregate_id, host)
    return aggregate
