"""Moving a server (the scheduler's part of migrations and drains): never to
its own host, within its pinned zone, through its flavor's aggregate extra
specs, the allocation moved in one POST /allocations (held by a migration
consumer when asked), and nothing moved when no host fits."""

import uuid

from aggregates.hosts.models import ComputeNode
from aggregates.scheduling import services
from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body


def boot(cloud, api, flavor, image, zone=None, name="vm"):
    response = api.post("/servers", cli_body(flavor, image, name=name, zone=zone), version="2.100")
    assert response.status_code == 202, response.content
    return Server.objects.get(uuid=response.json()["server"]["id"])


def test_a_move_leaves_the_host_and_moves_the_allocation(cloud, admin_api):
    nodes = {n.host: n for n in cloud.hosts("m1", "m2")}
    server = boot(cloud, admin_api, cloud.flavor(vcpus=2, ram=1024), cloud.image())
    source = server.host
    result = services.schedule_move(services.spec_for_server(server), str(server.uuid))
    assert result.target is not None and result.target.host != source
    allocations = cloud.allocations(server.uuid)
    assert list(allocations) == [str(nodes[result.target.host].uuid)]
    assert cloud.usages(nodes[source].uuid).get("VCPU", 0) == 0
    assert cloud.usages(nodes[result.target.host].uuid)["VCPU"] == 2


def test_a_cold_move_holds_the_source_under_the_migration(cloud, admin_api):
    nodes = {n.host: n for n in cloud.hosts("m1", "m2")}
    server = boot(cloud, admin_api, cloud.flavor(vcpus=2, ram=1024), cloud.image())
    source, migration = server.host, str(uuid.uuid4())
    result = services.schedule_move(services.spec_for_server(server), str(server.uuid), hold_source_as=migration)
    assert list(cloud.allocations(migration)) == [str(nodes[source].uuid)]
    assert list(cloud.allocations(server.uuid)) == [str(nodes[result.target.host].uuid)]
    services.release(migration)  # the confirm
    assert cloud.usages(nodes[source].uuid).get("VCPU", 0) == 0


def test_a_pinned_server_stays_in_its_zone(cloud, admin_api):
    cloud.hosts("a1", "a2", "b1")
    cloud.zone("az1", "a1", "a2")
    cloud.zone("az2", "b1")
    server = boot(cloud, admin_api, cloud.flavor(), cloud.image(), zone="az1")
    result = services.schedule_move(services.spec_for_server(server), str(server.uuid))
    assert result.target.host in {"a1", "a2"} - {server.host}
    result = services.schedule_move(services.spec_for_server(Server.objects.get(pk=server.pk)), str(server.uuid))
    assert result.target.host in {"a1", "a2"}


def test_an_ssd_server_moves_only_to_ssd_hosts_or_not_at_all(cloud, admin_api, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]
    cloud.hosts("s1", "s2", "plain")
    cloud.aggregate("fast", ["s1", "s2"], ssd="true")
    ssd = cloud.flavor("ssd.large", extra_specs={"aggregate_instance_extra_specs:ssd": "true"})
    cloud.disable("s2")
    server = boot(cloud, admin_api, ssd, cloud.image(name="other"), name="ssd-vm")
    assert server.host == "s1"
    result = services.schedule_move(services.spec_for_server(server), str(server.uuid))
    assert result.target is None and result.fault_message.startswith("No valid host was found.")
    fates = {row["host"]: row for row in result.decision.explanation["hosts"]}
    assert result.decision.outcome == SchedulingDecision.NO_VALID_HOST
    assert fates["s1"]["filter"] == "ignore_hosts"
    assert fates["s2"]["filter"] == "compute_status_filter"
    assert fates["plain"]["filter"] == "AggregateInstanceExtraSpecsFilter"
    assert list(cloud.allocations(server.uuid)) == [str(ComputeNode.objects.get(host="s1").uuid)]  # not moved


def test_peers_of_the_source_are_preferred(cloud, admin_api, settings):
    settings.RAM_WEIGHT_MULTIPLIER = 100.0  # the stranger has far more free RAM
    cloud.hosts("p1", "p2", memory_mb=8192)
    cloud.hosts("stranger", memory_mb=65536)
    rack = cloud.aggregate("rack1", ["p1", "p2"])
    server = boot(cloud, admin_api, cloud.flavor(), cloud.image(), name="x")
    server = Server.objects.get(pk=server.pk)
    if server.host == "stranger":  # boot it on a peer for the test
        result = services.schedule_move(services.spec_for_server(server, requested_host="p1"), str(server.uuid))
        server.host = result.target.host
        server.save()
    spec = services.spec_for_server(server, preferred_aggregates=frozenset({str(rack.uuid)}))
    result = services.schedule_move(spec, str(server.uuid))
    assert result.target.host in {"p1", "p2"} - {server.host}
