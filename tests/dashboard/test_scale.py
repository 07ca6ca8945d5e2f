"""The console with 5,000 hosts and 500 aggregates: every list is paginated on
the server and its number of queries does not grow with the data."""

import pytest

from tests.plugins.big_cloud import AGGREGATES

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


@pytest.fixture
def console(admin_client, big_cloud):
    """The logged-in console over the big cloud, after one page: the first read
    of placement mints the service token (a few queries, once per process,
    whichever test of a process comes first), which no baseline counts."""
    admin_client.get("/")
    return admin_client


def test_list_pages_stay_bounded(console, big_cloud, django_assert_max_num_queries):
    """One data set for every page: building it is the slow part."""
    admin_client = console
    for url, max_queries in LIST_PAGES:
        with django_assert_max_num_queries(max_queries):
            response = admin_client.get(url)
        assert response.status_code == 200, url
    with django_assert_max_num_queries(6):
        response = admin_client.get("/aggregates/?format=csv")
    assert response.content.decode().count("\n") == AGGREGATES + 1


def test_an_aggregate_with_hundreds_of_hosts_shows_a_page_of_them(console, big_cloud, django_assert_max_num_queries):
    admin_client = console
    aggregate = big_cloud[0]
    with django_assert_max_num_queries(25):
        response = admin_client.get(f"/aggregates/{aggregate.id}/?hosts_page=2")
    page = response.context["hosts_page"]
    assert page.paginator.count > 400 and page.number == 2 and len(response.context["host_rows"]) == 50
    assert b"Next" in response.content


def test_the_capacity_page_stays_bounded(admin_client, big_cloud, settings, monkeypatch, django_assert_max_num_queries):
    """Capacity by flavor over 5,000 hosts and 500 aggregates (placement in process): a fixed number of queries."""
    from aggregates.capacity import services
    from tests.plugins.cloud import own_placement

    own_placement(settings, monkeypatch)
    assert services.sample() == AGGREGATES + 5  # 5 zones; the first read of placement mints the service token
    with django_assert_max_num_queries(19):
        response = admin_client.get("/capacity/")
    assert response.status_code == 200 and response.content.count(b"<tr data-scope") == AGGREGATES + 5
