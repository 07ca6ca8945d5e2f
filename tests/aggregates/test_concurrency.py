"""Races between operators: the one-zone-per-host rule holds under concurrency (on PostgreSQL
and on SQLite, whose writers wait their turn)."""

import pytest

from aggregates.host_aggregates.models import AggregateHost
from tests.helpers import run_together
from tests.plugins.api import ApiClient
from tests.plugins.tiers import many_connections

pytestmark = [pytest.mark.django_db(transaction=True), many_connections]


def test_racing_add_host_into_two_zones_lets_exactly_one_win(token_for, make_host):
    token = token_for("admin")
    api = ApiClient(token)
    a = api.post("/os-aggregates", {"aggregate": {"name": "a", "availability_zone": "az1"}}).json()["aggregate"]
    b = api.post("/os-aggregates", {"aggregate": {"name": "b", "availability_zone": "az2"}}).json()["aggregate"]
    hosts = [f"race{i}" for i in range(8)]
    for host in hosts:
        make_host(host)
    for host in hosts:
        statuses = sorted(
            response.status_code
            for response in run_together(
                lambda: ApiClient(token).post(f"/os-aggregates/{a['id']}/action", {"add_host": {"host": host}}),
                lambda: ApiClient(token).post(f"/os-aggregates/{b['id']}/action", {"add_host": {"host": host}}),
            )
        )
        assert statuses == [200, 409], host
        assert AggregateHost.objects.filter(host=host).count() == 1


def test_racing_zone_change_and_add_host_never_split_a_host(token_for, make_host):
    token = token_for("admin")
    api = ApiClient(token)
    for i in range(6):
        make_host(f"h{i}")
        a = api.post("/os-aggregates", {"aggregate": {"name": f"a{i}"}}).json()["aggregate"]
        b = api.post("/os-aggregates", {"aggregate": {"name": f"b{i}", "availability_zone": "az1"}}).json()["aggregate"]
        api.post(f"/os-aggregates/{a['id']}/action", {"add_host": {"host": f"h{i}"}})
        run_together(
            lambda: ApiClient(token).put(f"/os-aggregates/{a['id']}", {"aggregate": {"availability_zone": "az2"}}),
            lambda: ApiClient(token).post(f"/os-aggregates/{b['id']}/action", {"add_host": {"host": f"h{i}"}}),
        )
        zones = set(
            AggregateHost.objects.filter(host=f"h{i}", aggregate__metadata_items__key="availability_zone").values_list(
                "aggregate__metadata_items__value", flat=True
            )
        )
        assert len(zones) <= 1, zones
