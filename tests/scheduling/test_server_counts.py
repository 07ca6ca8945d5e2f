"""The servers a decision counts on each host (Nova's num_instances and
num_io_ops): read for the hosts a filter or weigher reading them gets to,
and what they read is the live servers on the node, busy or not, as booted
through the API. A decision that never reads them does not count them."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from aggregates import placement_client
from aggregates.scheduling import engine, services
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

V = "2.100"


def boot_on(api, flavor, image, host, name="vm"):
    """A server forced onto ``host`` (the admin's zone:host form skips the filters)."""
    response = api.post("/servers", cli_body(flavor, image, name=name, zone=f"nova:{host}"), version=V)
    assert response.status_code == 202, response.content
    server_id = response.json()["server"]["id"]
    assert Server.objects.get(uuid=server_id).host == host
    return server_id


def explain(api, flavor):
    response = api.post("/os-scheduler-explain", {"explain": {"flavorRef": flavor.flavorid}})
    assert response.status_code == 200, response.content
    explanation = response.json()["explanation"]
    return explanation, {row["host"]: row for row in explanation["hosts"]}


@pytest.fixture
def small(cloud):
    return cloud.flavor(), cloud.image()


def test_the_count_filters_judge_the_servers_booted_on_each_host(cloud, admin_api, small, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateIoOpsFilter", "AggregateNumInstancesFilter"]
    cloud.hosts("c1", "c2", "c3")
    cloud.aggregate("two-a-host", ["c1"], max_instances_per_host="2")
    cloud.aggregate("quiet", ["c2"], max_io_ops_per_host="1")
    flavor, image = small
    boot_on(admin_api, flavor, image, "c1", "a")
    boot_on(admin_api, flavor, image, "c1", "b")
    gone = boot_on(admin_api, flavor, image, "c1", "c")
    assert admin_api.delete(f"/servers/{gone}").status_code == 204  # deleted: not counted
    busy = boot_on(admin_api, flavor, image, "c2", "d")
    Server.objects.filter(uuid=busy).update(task_state="rebooting")  # an operation in progress on c2

    explanation, rows = explain(admin_api, flavor)

    assert explanation["chosen"] == ["c3"]
    assert rows["c1"]["filter"] == "AggregateNumInstancesFilter"
    assert "has 2 servers, at or over its limit of 2" in rows["c1"]["reason"]
    assert rows["c2"]["filter"] == "AggregateIoOpsFilter"
    assert "has 1 I/O-heavy operations in progress, at or over its limit of 1" in rows["c2"]["reason"]
    # The explanation lists the rejected hosts in the hosts' order, not the filters'.
    rejected = [row["host"] for row in explanation["hosts"] if row["result"] == "rejected"]
    assert rejected == ["c1", "c2"]


def test_several_servers_of_one_request_count_those_placed_before(cloud, admin_api, small, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "NumInstancesFilter"]
    settings.MAX_INSTANCES_PER_HOST = 1
    # Stacking: the fuller r1 weighs most.
    settings.RAM_WEIGHT_MULTIPLIER, settings.CPU_WEIGHT_MULTIPLIER, settings.DISK_WEIGHT_MULTIPLIER = -1.0, 0.0, 0.0
    cloud.hosts("r1", "r2", "r3")
    flavor, image = small
    boot_on(admin_api, flavor, image, "r1", "there-first")
    body = cli_body(flavor, image, name="pair", min_count=2, max_count=2)
    assert admin_api.post("/servers", body, version=V).status_code == 202
    placed = sorted(Server.objects.filter(name__startswith="pair").values_list("host", flat=True))
    assert placed == ["r2", "r3"]  # not r1, which had one already; not twice on one host


def test_the_weighers_read_the_counts_when_their_multiplier_is_not_zero(cloud, admin_api, small, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter"]
    settings.NUM_INSTANCES_WEIGHT_MULTIPLIER = -1.0  # prefer the emptier host
    settings.IO_OPS_WEIGHT_MULTIPLIER = -2.0
    cloud.hosts("w1", "w2")
    flavor, image = small
    boot_on(admin_api, flavor, image, "w1", "a")
    busy = boot_on(admin_api, flavor, image, "w1", "b")
    Server.objects.filter(uuid=busy).update(task_state="rebooting")

    explanation, rows = explain(admin_api, flavor)

    assert rows["w1"]["weights"]["NumInstancesWeigher"] == -1.0
    assert rows["w1"]["weights"]["IoOpsWeigher"] == -2.0
    assert rows["w2"]["weights"]["NumInstancesWeigher"] == 0.0
    assert rows["w2"]["weights"]["IoOpsWeigher"] == 0.0
    assert explanation["chosen"] == ["w2"]

    # The setting's multiplier zero, an aggregate's not: counted all the same.
    settings.NUM_INSTANCES_WEIGHT_MULTIPLIER, settings.IO_OPS_WEIGHT_MULTIPLIER = 0.0, 0.0
    cloud.aggregate("spread", ["w1", "w2"], num_instances_weight_multiplier="-3.0")
    explanation, rows = explain(admin_api, flavor)
    assert rows["w1"]["weights"]["NumInstancesWeigher"] == -3.0
    assert rows["w1"]["weights"]["IoOpsWeigher"] == 0.0
    assert explanation["chosen"] == ["w2"]


def _count_queries(queries):
    table = Server._meta.db_table
    return [q["sql"] for q in queries.captured_queries if f'FROM "{table}"' in q["sql"] and "COUNT(" in q["sql"]]


def test_a_decision_counts_only_what_its_filters_and_weighers_read(cloud, admin_api, small, settings):
    cloud.hosts("q1", "q2", "q3")
    cloud.aggregate("ssd", ["q1"], ssd="true")
    flavor, image = small
    ssd = cloud.flavor("ssd.small", extra_specs={"aggregate_instance_extra_specs:ssd": "true"})
    for host in ("q1", "q2", "q3"):
        boot_on(admin_api, flavor, image, host, f"on-{host}")
    placement = placement_client.client()

    # No filter reads a count, the I/O weigher's multiplier is zero, so is
    # the instances weigher's (its default): nothing is counted.
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]
    settings.IO_OPS_WEIGHT_MULTIPLIER = 0.0
    spec = services.request_spec_for(ssd, None, "demo", "demo")
    with CaptureQueriesContext(connection) as queries:
        decision = engine.decide(spec, placement, full=False)
    assert [w.host.host for w in decision.ordered] == ["q1"]
    assert _count_queries(queries) == []

    # A count filter after the extra-specs filter: only the host that passed
    # that one is counted (one query, for q1 alone).
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter", "NumInstancesFilter"]
    with CaptureQueriesContext(connection) as queries:
        decision = engine.decide(spec, placement, full=False)
    assert [w.host.host for w in decision.ordered] == ["q1"]
    assert decision.ordered[0].host.num_instances == 1
    (counted,) = _count_queries(queries)
    node_uuids = {str(n) for n in Server.objects.values_list("node_uuid", flat=True)}
    q1 = Server.objects.get(name="on-q1").node_uuid
    assert q1 in counted and not any(other in counted for other in node_uuids - {q1})
