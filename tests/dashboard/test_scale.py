"""The console with 5,000 hosts and 500 aggregates: every list is paginated on
the server and its number of queries does not grow with the data."""

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


LIST_PAGES = [
    ("/", 14),
    ("/aggregates/", 8),
    ("/aggregates/?sort=-hosts&zone=az1&key=ssd&page=2", 8),
    ("/aggregates/?host=cmp-0001", 8),
    ("/hosts/", 12),
    ("/hosts/?state=disabled&zone=az3&sort=-host", 12),
    ("/zones/", 10),
    ("/events/?object_type=aggregate", 8),
    ("/resource-providers/", 10),
]


def test_list_pages_stay_bounded(admin_client, big_cloud, django_assert_max_num_queries):
    """One data set for every page: building it is the slow part."""
    for url, max_queries in LIST_PAGES:
        with django_assert_max_num_queries(max_queries):
            response = admin_client.get(url)
        assert response.status_code == 200, url
    with django_assert_max_num_queries(6):
        response = admin_client.get("/aggregates/?format=csv")
    assert response.content.decode().count("\n") == AGGREGATES + 1


def test_an_aggregate_with_hundreds_of_hosts_shows_a_page_of_them(
    admin_client, big_cloud, django_assert_max_num_queries
):
    aggregate = big_cloud[0]
    with django_assert_max_num_queries(25):
        response = admin_client.get(f"/aggregates/{aggregate.id}/?hosts_page=2")
    page = response.context["hosts_page"]
    assert page.paginator.count > 400 and page.number == 2 and len(response.context["host_rows"]) == 50
    assert b"Next" in response.content
