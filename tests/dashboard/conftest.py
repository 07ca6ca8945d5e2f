"""Console test fixtures (the logged-in clients are tests/plugins/console_clients.py's)."""

import pytest


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
