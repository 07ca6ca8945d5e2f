"""SCHEDULER_DECISION_REUSE_SECONDS: a burst of boots of one request reuses
one decision, accounting for the servers placed since; the host about to be
claimed is re-checked as it is now (disabled, moved out of the zone, its
aggregate's metadata changed), and when no kept host may take the server a
fresh decision is made, whose refusal is explained as always."""

from collections import Counter

import pytest

from aggregates.host_aggregates import services as aggregate_services
from aggregates.scheduling import engine, reuse
from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

V = "2.100"


@pytest.fixture
def decisions(settings, monkeypatch):
    """Reuse on (a minute's window), and a count of the placement queries made."""
    settings.SCHEDULER_DECISION_REUSE_SECONDS = 60
    reuse.forget_all()
    queries = []
    real = engine.query_candidates

    def counted(placement, query):
        queries.append(query.query_string())
        return real(placement, query)

    monkeypatch.setattr(engine, "query_candidates", counted)
    yield queries
    reuse.forget_all()


def boot(api, body):
    response = api.post("/servers", body, version=V)
    assert response.status_code == 202, response.content
    return Server.objects.get(uuid=response.json()["server"]["id"])


def test_a_burst_of_boots_reuses_one_decision_and_spreads_as_fresh_ones_would(cloud, admin_api, decisions):
    cloud.hosts("h1", "h2", "h3", vcpus=16, memory_mb=8192 + 512, local_gb=100)
    flavor, image = cloud.flavor("m1.small", ram=1024), cloud.image()
    servers = [boot(admin_api, cli_body(flavor, image, f"vm{i}")) for i in range(6)]
    assert [s.vm_state for s in servers] == ["active"] * 6
    assert len(decisions) == 1  # one placement query for six boots
    # The RAM weigher spreads them as six fresh decisions would: two a host.
    assert Counter(s.host for s in servers) == {"h1": 2, "h2": 2, "h3": 2}
    for node in Server.objects.values_list("node_uuid", flat=True).distinct():
        assert cloud.usages(node)["MEMORY_MB"] == 2 * 1024
    later = servers[-1].decision
    assert later.outcome == SchedulingDecision.CHOSEN
    assert [row["host"] for row in later.explanation["hosts"] if row["result"] == "chosen"] == [servers[-1].host]
    assert any(note.startswith("decision reused:") for note in later.explanation["notes"])
    assert not any(note.startswith("decision reused:") for note in servers[0].decision.explanation["notes"])


def test_with_the_window_at_zero_every_boot_decides_afresh(cloud, admin_api, decisions, settings):
    settings.SCHEDULER_DECISION_REUSE_SECONDS = 0
    cloud.hosts("h1", "h2")
    flavor, image = cloud.flavor(), cloud.image()
    for i in range(3):
        boot(admin_api, cli_body(flavor, image, f"vm{i}"))
    assert len(decisions) == 3


def test_a_host_disabled_since_is_not_claimed_and_none_left_is_a_fresh_no_valid_host(cloud, admin_api, decisions):
    cloud.hosts("h1", "h2", vcpus=16, memory_mb=8192 + 512, local_gb=100)
    flavor, image = cloud.flavor(ram=1024), cloud.image()
    first = boot(admin_api, cli_body(flavor, image, "vm1"))
    other = "h2" if first.host == "h1" else "h1"
    cloud.disable(other, reason="bad disk")  # the kept decision's best host now
    second = boot(admin_api, cli_body(flavor, image, "vm2"))
    assert (second.vm_state, second.host) == ("active", first.host)
    assert len(decisions) == 1
    # A successful boot's explanation counts its rejections per filter.
    assert second.decision.explanation["rejected_by"] == {"compute_status_filter": 1}
    assert cloud.allocations(str(second.uuid)).keys() == {str(first.node_uuid)}

    cloud.disable(first.host)
    third = boot(admin_api, cli_body(flavor, image, "vm3"))
    assert third.vm_state == "error" and third.fault["message"].startswith("No valid host was found.")
    assert len(decisions) == 3  # the kept decision ran dry: a fresh one, then the full explanation
    assert third.decision.outcome == SchedulingDecision.NO_VALID_HOST
    assert {row["host"] for row in third.decision.explanation["hosts"]} == {"h1", "h2"}
    assert cloud.allocations(str(third.uuid)) == {}


def test_a_host_taken_out_of_the_zone_since_is_not_claimed(cloud, admin_api, decisions, system):
    cloud.hosts("h1", "h2", vcpus=16, memory_mb=8192 + 512, local_gb=100)
    zone = cloud.zone("az1", "h1", "h2")
    flavor, image = cloud.flavor(ram=1024), cloud.image()
    first = boot(admin_api, cli_body(flavor, image, "vm1", "az1"))
    other = "h2" if first.host == "h1" else "h1"
    aggregate_services.remove_hosts(system, zone.id, [other])
    for i in range(3):
        server = boot(admin_api, cli_body(flavor, image, f"vm{i + 2}", "az1"))
        assert (server.vm_state, server.host, server.availability_zone) == ("active", first.host, "az1")
    assert len(decisions) == 1


def test_an_aggregate_whose_metadata_changed_since_takes_no_more(cloud, admin_api, decisions, system, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]
    cloud.hosts("h1", "h2", vcpus=16, memory_mb=8192 + 512, local_gb=100)
    fast = cloud.aggregate("fast", ["h1", "h2"], ssd="true")
    flavor = cloud.flavor("ssd.large", ram=1024, extra_specs={"aggregate_instance_extra_specs:ssd": "true"})
    image = cloud.image()
    assert boot(admin_api, cli_body(flavor, image, "vm1")).vm_state == "active"
    aggregate_services.set_metadata(system, fast.id, {"ssd": "false"})
    refused = boot(admin_api, cli_body(flavor, image, "vm2"))
    assert refused.vm_state == "error"
    rows = {row["host"]: row for row in refused.decision.explanation["hosts"]}
    assert {row["filter"] for row in rows.values()} == {"AggregateInstanceExtraSpecsFilter"}
    assert cloud.allocations(str(refused.uuid)) == {}


def test_moves_and_multi_server_boots_never_reuse(cloud, admin_api, decisions):
    cloud.hosts("h1", "h2", "h3", vcpus=16, memory_mb=8192 + 512, local_gb=100)
    flavor, image = cloud.flavor(ram=1024), cloud.image()
    for _ in range(2):
        response = admin_api.post("/servers", cli_body(flavor, image, "many", min_count=2, max_count=2), version=V)
        assert response.status_code == 202, response.content
    assert len(decisions) == 2
    assert Server.objects.filter(vm_state="active").count() == 4


def test_a_kept_decision_keeps_its_best_hosts_and_decides_afresh_when_they_are_full(
    cloud, admin_api, decisions, monkeypatch
):
    monkeypatch.setattr(reuse, "HOSTS_KEPT", 2)
    # Room for one server of the flavor on each host.
    cloud.hosts("h1", "h2", "h3", "h4", vcpus=16, memory_mb=512 + 1024, local_gb=100)
    flavor, image = cloud.flavor(ram=1024), cloud.image()
    servers = [boot(admin_api, cli_body(flavor, image, f"vm{i}")) for i in range(4)]
    assert [s.vm_state for s in servers] == ["active"] * 4
    assert sorted(s.host for s in servers) == ["h1", "h2", "h3", "h4"]
    # The first boot decided and kept two hosts, the next two used them, the last decided afresh.
    assert len(decisions) == 2
    refused = boot(admin_api, cli_body(flavor, image, "vm5"))
    assert refused.vm_state == "error" and cloud.allocations(str(refused.uuid)) == {}
