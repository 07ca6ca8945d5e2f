"""Resize end to end through HTTP: the new flavor through the scheduler
(its extra specs and the aggregate filters apply), VERIFY_RESIZE showing
the new flavor, the placement allocations as Nova moves them (the
migration's consumer holds the source with the old flavor, the server's
the target with the new one), confirmResize dropping the migration's,
revertResize giving the server its source and old flavor back; Nova's
refusals; a resize no host can take leaving the server as it was."""

import pytest

from aggregates.hosts.models import Service
from aggregates.moves import tasks
from aggregates.moves.models import ServerMigration
from aggregates.servers.models import Server
from tests.plugins.api import ApiClient

from .conftest import ZERO, act, boot, fault, force_down, shown, usages

OLD = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
NEW = {"VCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 20}


@pytest.fixture
def resizable(cloud):
    """Two equal hosts, a small flavor, a bigger one and an image."""
    nodes = {node.host: node for node in cloud.hosts("h1", "h2")}
    small = cloud.flavor("m1.small", vcpus=2, ram=1024, disk=10)
    big = cloud.flavor("m1.big", vcpus=4, ram=2048, disk=20)
    return nodes, small, big, cloud.image()


def held(cloud, consumer):
    """Provider uuid -> the resources ``consumer`` holds there, as placement answers."""
    return {provider: item["resources"] for provider, item in cloud.allocations(consumer).items()}


def resize(api, server, flavor, version="2.100"):
    return act(api, server, {"resize": {"flavorRef": flavor.flavorid}}, version=version)


def action_names(api, server):
    listed = api.get(f"/servers/{server.uuid}/os-instance-actions", version="2.100").json()["instanceActions"]
    return [item["action"] for item in listed]


def events_of(api, server, name):
    listed = api.get(f"/servers/{server.uuid}/os-instance-actions", version="2.100").json()["instanceActions"]
    request_id = next(item["request_id"] for item in listed if item["action"] == name)
    detail = api.get(f"/servers/{server.uuid}/os-instance-actions/{request_id}", version="2.100").json()
    return {event["event"]: event["result"] for event in detail["instanceAction"]["events"]}, detail


def test_resize_then_confirm(resizable, cloud, member_api, admin_api):
    nodes, small, big, image = resizable
    server = boot(member_api, small, image)
    source = server.host
    (target,) = set(nodes) - {source}

    response = resize(member_api, server, big)
    assert response.status_code == 202, response.content
    assert response.content == b""

    after = shown(member_api, server)
    assert after["status"] == "VERIFY_RESIZE"
    assert after["flavor"]["original_name"] == "m1.big" and after["flavor"]["vcpus"] == 4
    assert shown(member_api, server, version="2.1")["flavor"]["id"] == big.flavorid
    assert shown(admin_api, server)["OS-EXT-SRV-ATTR:host"] == target
    migration = ServerMigration.objects.get()
    assert (migration.migration_type, migration.status) == ("resize", "finished")
    assert (migration.old_instance_type_id, migration.new_instance_type_id) == (small.pk, big.pk)
    # The migration's consumer holds the source with the old flavor, the server the target with the new one.
    assert held(cloud, migration.uuid) == {str(nodes[source].uuid): OLD}
    assert held(cloud, server.uuid) == {str(nodes[target].uuid): NEW}
    assert usages(cloud, nodes[source]) == OLD and usages(cloud, nodes[target]) == NEW

    listed = admin_api.get("/os-migrations", version="2.80").json()["migrations"]
    assert [(item["migration_type"], item["status"]) for item in listed] == [("resize", "finished")]
    filtered = admin_api.get("/os-migrations?migration_type=resize", version="2.80").json()["migrations"]
    assert len(filtered) == 1

    # Another resize while it waits to be confirmed: Nova's conflict.
    assert fault(resize(member_api, server, small)) == (
        409,
        "conflictingRequest",
        f"Cannot 'resize' instance {server.uuid} while it is in vm_state resized",
    )

    response = act(member_api, server, {"confirmResize": None})
    assert response.status_code == 204, response.content
    after = shown(member_api, server)
    assert after["status"] == "ACTIVE" and after["flavor"]["original_name"] == "m1.big"
    migration.refresh_from_db()
    assert migration.status == "confirmed"
    assert cloud.allocations(migration.uuid) == {}
    assert usages(cloud, nodes[source]) == ZERO and usages(cloud, nodes[target]) == NEW

    assert action_names(member_api, server) == ["confirmResize", "resize", "create"]
    events, _ = events_of(member_api, server, "resize")
    assert events == {"conductor_migrate_server": "Success", "compute_resize_instance": "Success"}
    events, _ = events_of(member_api, server, "confirmResize")
    assert events == {"compute_confirm_resize": "Success"}


def test_resize_then_revert(resizable, cloud, member_api, admin_api):
    nodes, small, big, image = resizable
    server = boot(member_api, small, image)
    source = server.host
    (target,) = set(nodes) - {source}
    assert resize(member_api, server, big).status_code == 202
    migration = ServerMigration.objects.get()

    response = act(member_api, server, {"revertResize": None})
    assert response.status_code == 202, response.content
    assert response.content == b""
    after = shown(member_api, server)
    assert after["status"] == "ACTIVE" and after["flavor"]["original_name"] == "m1.small"
    assert shown(admin_api, server)["OS-EXT-SRV-ATTR:host"] == source
    migration.refresh_from_db()
    assert migration.status == "reverted"
    # The server holds its source with its old flavor again; the target is free.
    assert held(cloud, server.uuid) == {str(nodes[source].uuid): OLD}
    assert cloud.allocations(migration.uuid) == {}
    assert usages(cloud, nodes[source]) == OLD and usages(cloud, nodes[target]) == ZERO

    assert action_names(member_api, server) == ["revertResize", "resize", "create"]
    events, _ = events_of(member_api, server, "revertResize")
    assert events == {"compute_revert_resize": "Success", "compute_finish_revert_resize": "Success"}

    # Nothing left to revert or confirm.
    assert fault(act(member_api, server, {"revertResize": None})) == (
        409,
        "conflictingRequest",
        f"Cannot 'revertResize' instance {server.uuid} while it is in vm_state active",
    )
    # A server reverted resizes again, to the same target as before if it likes.
    assert resize(member_api, server, big).status_code == 202
    assert shown(member_api, server)["status"] == "VERIFY_RESIZE"


def test_no_host_for_the_new_flavor_leaves_the_server_as_it_was(resizable, cloud, member_api):
    nodes, small, _, image = resizable
    huge = cloud.flavor("m1.huge", vcpus=64, ram=1024, disk=10)
    server = boot(member_api, small, image)
    source = server.host
    before = {host: usages(cloud, node) for host, node in nodes.items()}

    response = resize(member_api, server, huge)
    assert response.status_code == 202, response.content
    after = shown(member_api, server)
    assert after["status"] == "ACTIVE" and after["flavor"]["original_name"] == "m1.small"
    assert Server.objects.get(pk=server.pk).host == source
    migration = ServerMigration.objects.get()
    assert (migration.migration_type, migration.status) == ("resize", "error")
    assert migration.message.startswith("No valid host was found.")
    assert {host: usages(cloud, node) for host, node in nodes.items()} == before
    assert held(cloud, server.uuid) == {str(nodes[source].uuid): OLD}
    assert cloud.allocations(migration.uuid) == {}

    events, detail = events_of(member_api, server, "resize")
    assert events == {"conductor_migrate_server": "Error"}
    assert detail["instanceAction"]["message"] == "Error"


def test_same_host_only_when_allowed(cloud, member_api, settings):
    (node,) = cloud.hosts("solo")
    small = cloud.flavor("m1.small", vcpus=2, ram=1024, disk=10)
    big = cloud.flavor("m1.big", vcpus=4, ram=2048, disk=20)
    server = boot(member_api, small, cloud.image())

    assert resize(member_api, server, big).status_code == 202
    assert shown(member_api, server)["status"] == "ACTIVE"
    assert ServerMigration.objects.get().status == "error"

    settings.ALLOW_RESIZE_TO_SAME_HOST = True
    assert resize(member_api, server, big).status_code == 202
    assert shown(member_api, server)["status"] == "VERIFY_RESIZE"
    migration = ServerMigration.objects.filter(status="finished").get()
    assert (migration.source_compute, migration.dest_compute) == ("solo", "solo")
    # Both flavors are held on the one host until the resize is confirmed.
    assert usages(cloud, node) == {key: OLD[key] + NEW[key] for key in OLD}
    assert act(member_api, server, {"confirmResize": None}).status_code == 204
    assert usages(cloud, node) == NEW


def test_the_new_flavors_extra_specs_and_aggregates_apply(cloud, member_api, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]
    nodes = {node.host: node for node in cloud.hosts("h1", "h2")}
    small = cloud.flavor("m1.small", vcpus=2, ram=1024, disk=10)
    fast = cloud.flavor(
        "m1.fast", vcpus=2, ram=2048, disk=10, extra_specs={"aggregate_instance_extra_specs:ssd": "true"}
    )
    server = boot(member_api, small, cloud.image())
    nodes["h3"] = cloud.host("h3")
    cloud.aggregate("fast", ["h3"], ssd="true")

    assert resize(member_api, server, fast).status_code == 202
    assert Server.objects.get(pk=server.pk).host == "h3"
    assert usages(cloud, nodes["h3"])["MEMORY_MB"] == 2048


def test_refusals(resizable, cloud, member_api, token_for):
    other_member_api = ApiClient(token_for("member", "other-user", "other"))
    nodes, small, big, image = resizable
    server = boot(member_api, small, image)
    unchanged = {host: usages(cloud, node) for host, node in nodes.items()}

    assert fault(resize(member_api, server, small)) == (
        400,
        "badRequest",
        "When resizing, instances must change flavor!",
    )
    assert fault(act(member_api, server, {"resize": {"flavorRef": "nope"}})) == (
        400,
        "badRequest",
        "Flavor nope could not be found.",
    )
    private = cloud.flavor("private", vcpus=1, is_public=False)
    assert fault(act(member_api, server, {"resize": {"flavorRef": private.flavorid}}))[:2] == (400, "badRequest")
    for body in (
        {"resize": {}},
        {"resize": {"flavorRef": ""}},
        {"resize": {"flavorRef": big.flavorid, "OS-DCF:diskConfig": "SOMETIMES"}},
        {"resize": {"flavorRef": big.flavorid, "extra": 1}},
    ):
        assert fault(act(member_api, server, body))[:2] == (400, "badRequest"), body
    assert fault(act(member_api, server, {"revertResize": None})) == (
        409,
        "conflictingRequest",
        f"Cannot 'revertResize' instance {server.uuid} while it is in vm_state active",
    )
    assert fault(resize(other_member_api, server, big))[:2] == (404, "itemNotFound")
    force_down(server.host)
    assert fault(resize(member_api, server, big)) == (409, "conflictingRequest", "Service is unavailable at this time.")
    assert not ServerMigration.objects.exists()
    assert {host: usages(cloud, node) for host, node in nodes.items()} == unchanged

    # With the disk config (AUTO or MANUAL, as Nova takes it) the resize is accepted.
    Service.objects.update(forced_down=False)
    body = {"resize": {"flavorRef": big.flavorid, "OS-DCF:diskConfig": "MANUAL"}}
    assert act(member_api, server, body).status_code == 202


def test_the_confirm_window_confirms_a_resize_too(resizable, cloud, member_api, settings):
    nodes, small, big, image = resizable
    server = boot(member_api, small, image)
    source = server.host
    assert resize(member_api, server, big).status_code == 202
    settings.RESIZE_CONFIRM_WINDOW = 60
    ServerMigration.objects.update(updated_at=ServerMigration.objects.get().updated_at.replace(year=2020))
    assert tasks.confirm_resizes() == 1
    assert shown(member_api, server)["status"] == "ACTIVE"
    assert usages(cloud, nodes[source]) == ZERO
