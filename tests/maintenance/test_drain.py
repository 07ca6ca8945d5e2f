"""Draining a host through the API: every server moves (aggregate peers
first), the host stays disabled, placement follows; stop with rebalance
brings them back; constraints of each server hold; what cannot move says
why; a dry run changes nothing."""

from aggregates.audit.models import Event
from aggregates.maintenance.models import MaintenanceItem, MaintenanceJob
from aggregates.moves.models import ServerMigration
from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server

from .conftest import V, boot_on, disabled, fault, hosts_of, maintenance, started, stopped, usages

FLAVOR = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}


def times(n):
    return {rc: amount * n for rc, amount in FLAVOR.items()}


def test_drain_onto_peers_and_back(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("A", "B", "C", "D", "E")}
    cloud.aggregate("rack1", ["A", "B", "C", "D"])
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    servers = boot_on(admin_api, flavor, image, "A", count=12)
    assert usages(cloud, nodes["A"]) == times(12)

    job = started(admin_api, "A", reason="firmware upgrade")
    assert job["status"] == "completed", job
    assert (job["host"], job["action"], job["total"], job["done"], job["percent"]) == ("A", "start", 12, 12, 100)
    assert job["started_at"] and job["finished_at"]
    assert {s["status"] for s in job["servers"]} == {"moved"}
    where = hosts_of(servers)
    assert set(where.values()) <= {"B", "C", "D"}  # peers first: E has room but stays empty
    assert {s["id"]: s["target"] for s in job["servers"]} == {str(k): v for k, v in where.items()}
    assert disabled("A") == (True, "firmware upgrade")
    assert usages(cloud, nodes["A"]) == times(0)
    assert usages(cloud, nodes["E"]) == times(0)
    for host in "BCD":
        count = sum(1 for h in where.values() if h == host)
        assert usages(cloud, nodes[host]) == times(count)
    for server in servers:
        assert list(cloud.allocations(server.uuid)) == [str(nodes[where[server.uuid]].uuid)]
    types = list(Event.objects.filter(object_type="host", object_id="A").values_list("event_type", flat=True))
    assert types.count("compute.maintenance.start") == 1
    assert types.count("compute.maintenance.progress") == 12
    assert types.count("compute.maintenance.end") == 1
    assert ServerMigration.objects.filter(source_compute="A").count() == 12

    # Listed, filtered by host.
    listed = admin_api.get("/os-maintenance-jobs?host=A", version=V).json()["jobs"]
    assert [j["id"] for j in listed] == [job["id"]]

    back = stopped(admin_api, "A", rebalance=True)
    assert back["status"] == "completed", back
    assert (back["action"], back["total"], back["done"]) == ("stop", 12, 12)
    assert set(hosts_of(servers).values()) == {"A"}
    assert disabled("A") == (False, None)
    assert usages(cloud, nodes["A"]) == times(12)
    for host in "BCDE":
        assert usages(cloud, nodes[host]) == times(0)


def test_stop_without_rebalance_only_enables(cloud, admin_api):
    cloud.hosts("A", "B")
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    servers = boot_on(admin_api, flavor, image, "A", count=2)
    assert started(admin_api, "A", strategy="cold")["status"] == "completed"
    assert set(hosts_of(servers).values()) == {"B"}
    assert all(Server.objects.get(pk=s.pk).vm_state == "active" for s in servers)  # cold moves confirmed
    job = stopped(admin_api, "A")
    assert (job["status"], job["total"]) == ("completed", 0)
    assert set(hosts_of(servers).values()) == {"B"}
    assert disabled("A") == (False, None)


def test_pinned_zone_and_ssd_servers_move_only_where_allowed(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("A", "B", "C", "S")}
    cloud.aggregate("z1", ["A", "B"], zone="z1")
    cloud.aggregate("z2", ["C", "S"], zone="z2")
    cloud.aggregate("fast", ["A", "S"], ssd="true")
    cloud.aggregate("rack", ["A", "C"])  # A's peer C is preferred, but the rules come first
    plain = cloud.flavor(name="plain", vcpus=2, ram=1024, disk=10)
    ssd_spec = {"aggregate_instance_extra_specs:ssd": "true"}
    ssd = cloud.flavor(name="ssd", vcpus=2, ram=1024, disk=10, extra_specs=ssd_spec)
    image = cloud.image()
    pinned = boot_on(admin_api, plain, image, "A", count=2, name="pinned", zone="z1")
    fast = boot_on(admin_api, ssd, image, "A", count=2, name="fast", zone="z1")
    Server.objects.filter(pk__in=[s.pk for s in fast]).update(pinned_availability_zone=None)
    assert {s.pinned_availability_zone for s in pinned} == {"z1"}

    job = started(admin_api, "A")
    assert job["status"] == "completed", job
    assert set(hosts_of(pinned).values()) == {"B"}  # its zone, though C is the aggregate peer
    assert set(hosts_of(fast).values()) == {"S"}  # the only other ssd host
    assert usages(cloud, nodes["A"]) == times(0)


def test_a_server_that_cannot_move_is_explained_and_the_host_stays_disabled(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("A", "B")}
    cloud.host("C", vcpus=2, memory_mb=4096, local_gb=100, cpu_allocation_ratio=1.0)  # room for one server
    cloud.aggregate("z1", ["A", "C"], zone="z1")
    cloud.aggregate("z2", ["B"], zone="z2")
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    servers = boot_on(admin_api, flavor, image, "A", count=2, zone="z1")

    job = started(admin_api, "A")
    assert job["status"] == "completed_with_errors", job
    by_status = {s["status"]: s for s in job["servers"]}
    assert set(by_status) == {"moved", "failed"}
    assert by_status["moved"]["target"] == "C"
    failed = by_status["failed"]
    assert failed["target"] is None
    assert "No valid host" in failed["explanation"], failed
    assert failed["decision_id"] and SchedulingDecision.objects.filter(uuid=failed["decision_id"]).exists()
    stuck = next(s for s in servers if str(s.uuid) == failed["id"])
    assert Server.objects.get(pk=stuck.pk).host == "A"
    assert list(cloud.allocations(stuck.uuid)) == [str(nodes["A"].uuid)]
    assert disabled("A")[0] is True
    # Still in maintenance: a second start is refused.
    status, name, message = fault(maintenance(admin_api, "A", "start"))
    assert (status, name) == (409, "conflictingRequest") and "already in maintenance" in message


def snapshot():
    return (
        list(Server.objects.order_by("id").values_list("uuid", "host", "vm_state", "task_state")),
        list(MaintenanceJob.objects.values_list("id")),
        list(MaintenanceItem.objects.values_list("id")),
        ServerMigration.objects.count(),
        list(Event.objects.values_list("id")),
    )


def test_dry_run_plans_and_changes_nothing(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("A", "B", "C")}
    cloud.host("D", vcpus=4, memory_mb=4096, local_gb=100, cpu_allocation_ratio=1.0)  # a peer with room for two
    cloud.aggregate("rack1", ["A", "D"])
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    big = cloud.flavor(name="big", vcpus=64, ram=1024, disk=10)
    servers = boot_on(admin_api, flavor, image, "A", count=3)
    Server.objects.filter(pk=servers[2].pk).update(flavor={**servers[2].flavor, "vcpus": 64})  # fits nowhere
    before = snapshot()
    usage_before = {host: usages(cloud, node) for host, node in nodes.items()}

    response = maintenance(admin_api, "A", "start", dry_run=True)
    assert response.status_code == 200, response.content
    plan = response.json()["plan"]
    assert (plan["host"], plan["action"], plan["dry_run"], plan["total"], plan["movable"]) == ("A", "start", True, 3, 2)
    targets = [s["target"] for s in plan["servers"]]
    assert targets[:2] == ["D", "D"]  # the peer first, as long as it has room (4 VCPU: two servers)
    assert targets[2] is None
    assert plan["servers"][2]["status"] == "would_stay"
    assert "No valid host" in plan["servers"][2]["explanation"]
    assert snapshot() == before
    assert {host: usages(cloud, node) for host, node in nodes.items()} == usage_before
    assert disabled("A") == (False, None)
    assert big  # the flavor row exists; the server's own copy is what counts


def test_legacy_os_hosts_maintenance_mode(cloud, admin_api):
    cloud.hosts("A", "B")
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    servers = boot_on(admin_api, flavor, image, "A", count=2)
    response = admin_api.put("/os-hosts/A", {"maintenance_mode": "enable"}, version="2.42")
    assert response.status_code == 200, response.content
    assert response.json() == {"host": "A", "maintenance_mode": "on_maintenance"}
    job = MaintenanceJob.objects.get(host="A", action="start")
    from .conftest import wait_job

    assert wait_job(admin_api, str(job.uuid))["status"] == "completed"
    assert set(hosts_of(servers).values()) == {"B"}
    response = admin_api.put("/os-hosts/A", {"maintenance_mode": "Disable"}, version="2.1")
    assert response.json() == {"host": "A", "maintenance_mode": "off_maintenance"}
    assert disabled("A") == (False, None)
    response = admin_api.put("/os-hosts/A", {"status": "disable"}, version="2.42")
    assert response.json() == {"host": "A", "status": "disabled"}
    # Gone from 2.43, as in Nova.
    assert fault(admin_api.put("/os-hosts/A", {"maintenance_mode": "enable"}, version="2.43"))[0] == 404


def test_a_live_drain_cold_migrates_a_stopped_server_which_stays_stopped(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("A", "B")}
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    running, shut = boot_on(admin_api, flavor, image, "A", count=2)
    assert admin_api.post(f"/servers/{shut.uuid}/action", {"os-stop": None}, version=V).status_code == 202

    job = started(admin_api, "A")
    assert job["status"] == "completed", job
    assert set(hosts_of([running, shut]).values()) == {"B"}
    kinds = dict(ServerMigration.objects.values_list("server__uuid", "migration_type"))
    assert kinds == {running.uuid: "live-migration", shut.uuid: "migration"}
    assert ServerMigration.objects.get(server__uuid=shut.uuid).status == "confirmed"
    shut.refresh_from_db()
    assert (shut.vm_state, shut.power_state) == (Server.STOPPED, Server.POWER_SHUTDOWN)
    assert list(cloud.allocations(shut.uuid)) == [str(nodes["B"].uuid)]
    assert usages(cloud, nodes["A"]) == times(0)
