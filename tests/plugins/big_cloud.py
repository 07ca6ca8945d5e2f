"""A cloud of NetBox's habit for query-count baselines: 5,000 hosts in 500
aggregates (zones az0..az4), written in bulk, so that a list endpoint or page
whose number of queries grows with the data (an N+1) fails its test."""

import pytest
from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts.models import ComputeNode, Service

HOSTS = 5000
AGGREGATES = 500


@pytest.fixture
def big_cloud(db):
    now = timezone.now()
    services = Service.objects.bulk_create(
        Service(host=f"cmp-{n:05d}", binary=Service.COMPUTE, last_seen_up=now, disabled=n % 50 == 0)
        for n in range(HOSTS)
    )
    ComputeNode.objects.bulk_create(
        ComputeNode(service=s, host=s.host, hypervisor_hostname=s.host, vcpus=64, memory_mb=262144, local_gb=2000)
        for s in services
    )
    aggregates = Aggregate.objects.bulk_create(Aggregate(name=f"agg-{n:03d}") for n in range(AGGREGATES))
    AggregateMetadata.objects.bulk_create(
        AggregateMetadata(aggregate=a, key="availability_zone", value=f"az{n % 5}") for n, a in enumerate(aggregates)
    )
    AggregateMetadata.objects.bulk_create(AggregateMetadata(aggregate=a, key="ssd", value="true") for a in aggregates)
    # Each host in one aggregate; the first aggregate also holds 400 hosts of its zone.
    AggregateHost.objects.bulk_create(
        AggregateHost(aggregate=aggregates[n % AGGREGATES], host=s.host) for n, s in enumerate(services)
    )
    AggregateHost.objects.bulk_create(
        AggregateHost(aggregate=aggregates[0], host=s.host)
        for n, s in enumerate(services)
        if n % 5 == 0 and n % AGGREGATES != 0 and n < 2000 * 5
    )
    Event.objects.bulk_create(
        Event(event_type="aggregate.add_host.end", object_type="aggregate", object_id=str(a.id)) for a in aggregates
    )
    return aggregates
