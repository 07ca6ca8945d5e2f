"""Each move end to end through HTTP: the statuses the CLI's --wait sees
during and after, the placement usages of source and target (exact), the
migration record, confirm releasing the source, and a move with no target
leaving the server where it was with the explanation."""

from aggregates.moves import services as moves
from aggregates.moves import tasks
from aggregates.moves.models import ServerMigration
from aggregates.scheduling import services as scheduling
from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server
from tests.plugins.api import ApiClient

from .conftest import ZERO, act, boot, fault, force_down, shown, usages

USED = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
LIVE_BODY = {"os-migrateLive": {"host": None, "block_migration": "auto"}}


def spy_on_moves(monkeypatch, api, server):
    """Record what the API shows while the scheduler moves the server."""
    seen = []
    real = scheduling.schedule_move

    def spy(spec, server_uuid, hold_source_as=None, side=None):
        seen.append(
            {
                "status": shown(api, server)["status"],
                "migrations": api.get(f"/servers/{server.uuid}/migrations", version="2.80").json()["migrations"],
                "spec_ignores": set(spec.ignore_hosts),
            }
        )
        return real(spec, server_uuid, hold_source_as=hold_source_as, side=side)

    monkeypatch.setattr(scheduling, "schedule_move", spy)
    return seen


def test_live_migration_moves_the_allocation_and_the_server(two_hosts, cloud, admin_api, monkeypatch):
    nodes, flavor, image = two_hosts
    server = boot(admin_api, flavor, image)
    source = server.host
    (target,) = set(nodes) - {source}
    seen = spy_on_moves(monkeypatch, admin_api, server)

    response = act(admin_api, server, LIVE_BODY, version="2.30")
    assert response.status_code == 202, response.content
    assert response.content == b""

    (during,) = seen
    assert during["status"] == "MIGRATING"
    assert during["spec_ignores"] == {source}
    (in_progress,) = during["migrations"]
    assert in_progress["status"] == "running" and in_progress["source_compute"] == source
    after = shown(admin_api, server)
    assert after["status"] == "ACTIVE" and after["OS-EXT-STS:task_state"] is None
    assert after["OS-EXT-SRV-ATTR:host"] == target and after["OS-EXT-SRV-ATTR:hypervisor_hostname"] == target
    assert usages(cloud, nodes[source]) == ZERO
    assert usages(cloud, nodes[target]) == USED
    assert list(cloud.allocations(server.uuid)) == [str(nodes[target].uuid)]

    migration = ServerMigration.objects.get()
    assert (migration.migration_type, migration.status) == ("live-migration", "completed")
    assert (migration.source_compute, migration.dest_compute, migration.dest_node) == (source, target, target)
    assert migration.decision.outcome == SchedulingDecision.CHOSEN
    assert admin_api.get(f"/servers/{server.uuid}/migrations", version="2.80").json() == {"migrations": []}


def test_live_migration_to_a_named_host(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("h1", "h2", "h3")}
    server = boot(admin_api, cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image())
    target = sorted(set(nodes) - {server.host})[-1]
    response = act(admin_api, server, {"os-migrateLive": {"host": target, "block_migration": "auto"}}, "2.30")
    assert response.status_code == 202, response.content
    assert shown(admin_api, server)["OS-EXT-SRV-ATTR:host"] == target
    assert usages(cloud, nodes[target]) == USED
    assert sum(usages(cloud, node)["VCPU"] for node in nodes.values()) == 2


def test_cold_migration_holds_the_source_until_confirmed(two_hosts, cloud, admin_api, monkeypatch):
    nodes, flavor, image = two_hosts
    server = boot(admin_api, flavor, image)
    source = server.host
    (target,) = set(nodes) - {source}
    seen = spy_on_moves(monkeypatch, admin_api, server)

    response = act(admin_api, server, {"migrate": None})
    assert response.status_code == 202, response.content
    assert seen[0]["status"] == "RESIZE" and seen[0]["migrations"] == []

    after = shown(admin_api, server)
    assert after["status"] == "VERIFY_RESIZE" and after["OS-EXT-STS:vm_state"] == "resized"
    assert after["OS-EXT-SRV-ATTR:host"] == target
    migration = ServerMigration.objects.get()
    assert (migration.migration_type, migration.status) == ("migration", "finished")
    # The source is held by the migration's consumer, the target by the server's.
    assert list(cloud.allocations(migration.uuid)) == [str(nodes[source].uuid)]
    assert list(cloud.allocations(server.uuid)) == [str(nodes[target].uuid)]
    assert usages(cloud, nodes[source]) == USED
    assert usages(cloud, nodes[target]) == USED

    response = act(admin_api, server, {"confirmResize": None})
    assert response.status_code == 204, response.content
    assert shown(admin_api, server)["status"] == "ACTIVE"
    migration.refresh_from_db()
    assert migration.status == "confirmed"
    assert cloud.allocations(migration.uuid) == {}
    assert usages(cloud, nodes[source]) == ZERO
    assert usages(cloud, nodes[target]) == USED

    # Confirmed once: nothing left to confirm.
    assert fault(act(admin_api, server, {"confirmResize": None})) == (
        409,
        "conflictingRequest",
        f"Cannot 'confirmResize' instance {server.uuid} while it is in vm_state active",
    )


def test_a_projects_manager_moves_its_servers_without_naming_a_host(two_hosts, token_for, admin_api):
    """Keystone's manager role (granted through the identity API, as Tempest's
    dynamic credentials do): Nova's project_manager_or_admin moves; a member's is a 403."""
    nodes, flavor, image = two_hosts
    manager_api, member_api = ApiClient(token_for("manager")), ApiClient(token_for("member"))
    server = boot(manager_api, flavor, image)
    status, name, _ = fault(act(member_api, server, {"migrate": None}))
    assert (status, name) == (403, "forbidden")
    response = act(manager_api, server, {"migrate": None})
    assert response.status_code == 202, response.content
    assert shown(admin_api, server)["status"] == "VERIFY_RESIZE"
    assert act(manager_api, server, {"confirmResize": None}).status_code == 204


def test_cold_migration_to_a_named_host_at_2_56(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("h1", "h2", "h3")}
    server = boot(admin_api, cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image())
    target = sorted(set(nodes) - {server.host})[0]
    response = act(admin_api, server, {"migrate": {"host": target}}, version="2.56")
    assert response.status_code == 202, response.content
    assert shown(admin_api, server)["OS-EXT-SRV-ATTR:host"] == target


def test_evacuation_off_a_down_host(two_hosts, cloud, admin_api, monkeypatch):
    nodes, flavor, image = two_hosts
    server = boot(admin_api, flavor, image)
    source = server.host
    (target,) = set(nodes) - {source}
    force_down(source)
    seen = spy_on_moves(monkeypatch, admin_api, server)

    response = act(admin_api, server, {"evacuate": {}}, version="2.94")
    assert response.status_code == 200, response.content
    assert response.content == b""
    assert seen[0]["status"] == "REBUILD"
    after = shown(admin_api, server)
    assert after["status"] == "ACTIVE" and after["OS-EXT-SRV-ATTR:host"] == target
    assert usages(cloud, nodes[source]) == ZERO
    assert usages(cloud, nodes[target]) == USED
    migration = ServerMigration.objects.get()
    assert (migration.migration_type, migration.status) == ("evacuation", "done")


def test_evacuation_at_2_95_stops_the_server_and_before_2_14_returns_a_password(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("h1", "h2", "h3")}
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    server = boot(admin_api, flavor, image)
    force_down(server.host)
    assert act(admin_api, server, {"evacuate": {}}, version="2.95").status_code == 200
    after = shown(admin_api, server)
    assert after["status"] == "SHUTOFF" and after["OS-EXT-STS:power_state"] == 4

    other = boot(admin_api, flavor, image, name="vm2")
    Server.objects.filter(pk=other.pk).update(host=server.host)  # both on a host that is down now
    response = act(admin_api, other, {"evacuate": {"onSharedStorage": False, "adminPass": "s3cret"}}, "2.1")
    assert response.status_code == 200 and response.json() == {"adminPass": "s3cret"}
    assert sum(usages(cloud, node)["VCPU"] for node in nodes.values()) == 4


def test_no_target_leaves_the_server_on_its_source_with_the_explanation(cloud, admin_api):
    big = cloud.host("big", vcpus=4)
    small = cloud.host("small", vcpus=1)
    server = boot(admin_api, cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image())
    assert server.host == "big"

    response = act(admin_api, server, {"migrate": None})
    assert response.status_code == 202, response.content
    after = shown(admin_api, server)
    assert after["status"] == "ACTIVE" and after["OS-EXT-SRV-ATTR:host"] == "big"
    migration = ServerMigration.objects.get()
    assert migration.status == "error"
    assert migration.message.startswith("No valid host was found.")
    assert migration.decision.outcome == SchedulingDecision.NO_VALID_HOST
    fates = {row["host"]: row for row in migration.decision.explanation["hosts"]}
    assert fates["big"]["filter"] == "ignore_hosts"
    assert fates["small"]["result"] == "rejected"
    assert usages(cloud, big) == USED and usages(cloud, small) == ZERO
    assert list(cloud.allocations(server.uuid)) == [str(big.uuid)]

    # Below 2.34 a live migration's pre-checks are synchronous: NoValidHost is a 400.
    status, name, message = fault(act(admin_api, server, LIVE_BODY, version="2.30"))
    assert (status, name) == (400, "badRequest") and message.startswith("No valid host was found.")
    assert shown(admin_api, server)["status"] == "ACTIVE"
    assert list(ServerMigration.objects.order_by("id").values_list("status", flat=True)) == ["error", "error"]
    assert usages(cloud, big) == USED and usages(cloud, small) == ZERO


def test_a_pinned_server_never_leaves_its_zone(cloud, admin_api):
    nodes = {node.host: node for node in cloud.hosts("a1", "a2", "b1")}
    cloud.zone("az1", "a1", "a2")
    cloud.zone("az2", "b1")
    server = boot(admin_api, cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image(), zone="az1")
    first = server.host
    assert act(admin_api, server, LIVE_BODY, version="2.30").status_code == 202
    after = shown(admin_api, server)
    assert after["OS-EXT-SRV-ATTR:host"] == ({"a1", "a2"} - {first}).pop()
    assert after["OS-EXT-AZ:availability_zone"] == "az1"

    cloud.disable(first)  # the only other host of az1 is closed: no move, never to b1
    response = act(admin_api, server, {"migrate": None})
    assert response.status_code == 202
    assert shown(admin_api, server)["OS-EXT-SRV-ATTR:host"] != "b1"
    assert ServerMigration.objects.filter(status="error").count() == 1
    assert usages(cloud, nodes["b1"]) == ZERO


def test_move_server_is_synchronous_and_can_confirm_at_once(two_hosts, cloud, system, admin_api):
    nodes, flavor, image = two_hosts
    server = boot(admin_api, flavor, image)
    source = server.host
    outcome = moves.move_server(system, str(server.uuid), "migration", confirm=True, initiator="maintenance")
    assert outcome.moved and outcome.source == source and outcome.target != source
    assert outcome.decision_uuid and outcome.message == ""
    migration = ServerMigration.objects.get(uuid=outcome.migration_uuid)
    assert migration.status == "confirmed" and migration.request["initiator"] == "maintenance"
    assert shown(admin_api, server)["status"] == "ACTIVE"
    assert cloud.allocations(migration.uuid) == {}
    assert usages(cloud, nodes[source]) == ZERO and usages(cloud, nodes[outcome.target]) == USED

    outcome = moves.move_server(system, str(server.uuid), "live-migration", requested_host=source)
    assert outcome.moved and outcome.target == source
    assert usages(cloud, nodes[source]) == USED


def test_move_server_without_a_target_says_why(cloud, system, admin_api):
    cloud.host("only")
    server = boot(admin_api, cloud.flavor(), cloud.image())
    outcome = moves.move_server(system, str(server.uuid), "live-migration")
    assert not outcome.moved and outcome.target is None
    assert outcome.message.startswith("No valid host was found.") and outcome.decision_uuid
    assert Server.objects.get(pk=server.pk).task_state is None


def test_resize_confirm_window(two_hosts, cloud, admin_api, settings):
    nodes, flavor, image = two_hosts
    server = boot(admin_api, flavor, image)
    source = server.host
    assert act(admin_api, server, {"migrate": None}).status_code == 202
    assert tasks.confirm_resizes() == 0  # RESIZE_CONFIRM_WINDOW 0: never
    settings.RESIZE_CONFIRM_WINDOW = 60
    assert tasks.confirm_resizes() == 0  # not old enough
    ServerMigration.objects.update(updated_at=ServerMigration.objects.get().updated_at.replace(year=2020))
    assert tasks.confirm_resizes() == 1
    assert shown(admin_api, server)["status"] == "ACTIVE"
    assert ServerMigration.objects.get().status == "confirmed"
    assert usages(cloud, nodes[source]) == ZERO


def test_deleting_a_resized_server_releases_the_source_it_held(two_hosts, cloud, admin_api):
    nodes, flavor, image = two_hosts
    server = boot(admin_api, flavor, image)
    assert act(admin_api, server, {"migrate": None}).status_code == 202
    assert admin_api.delete(f"/servers/{server.uuid}", version="2.100").status_code == 204
    tasks.confirm_resizes()
    assert all(usages(cloud, node) == ZERO for node in nodes.values())
