"""Console test fixtures: logged-in clients for each kind of console user."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from aggregates.identity import services as identity


def _client_for(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin_client(db):
    user = get_user_model().objects.create_user("console-admin", password="pw", is_staff=True, is_superuser=True)
    return _client_for(user)


@pytest.fixture
def reader_client(db):
    user = get_user_model().objects.create_user("console-reader", password="pw", is_staff=True)
    identity.grant(user, identity.ensure_project("admin"), "reader")
    return _client_for(user)


@pytest.fixture
def non_staff_client(db):
    return _client_for(get_user_model().objects.create_user("plain", password="pw"))


@pytest.fixture
def demo(db):
    from aggregates.demo import seed as demo_data

    demo_data.seed(out=lambda line: None)
    demo_data.heartbeat()


@pytest.fixture
def hosts(make_host):
    """Three registered compute hosts, node1 to node3."""
    for name in ("node1", "node2", "node3"):
        make_host(name)


@pytest.fixture
def other_zone(system, hosts):
    """node3 is in zone az2 (aggregate az2-general)."""
    from aggregates.host_aggregates import services

    aggregate = services.create_aggregate(system, "az2-general", "az2")
    services.add_host(system, aggregate.id, "node3")
    return aggregate
