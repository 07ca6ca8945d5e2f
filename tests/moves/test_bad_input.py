"""Moves refused with Nova's 4xx, and nothing changed: no migration row, the
server as it was, its allocation where it was."""

import pytest

from aggregates.moves.models import ServerMigration
from aggregates.servers.models import Server

from .conftest import ZERO, act, boot, fault, force_down, shown, usages

USED = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}


@pytest.fixture
def placed(two_hosts, cloud, admin_api):
    nodes, flavor, image = two_hosts
    server = boot(admin_api, flavor, image)
    return server, nodes


def unchanged(cloud, server, nodes, admin_api, status="ACTIVE"):
    assert not ServerMigration.objects.exists()
    after = shown(admin_api, server)
    assert after["status"] == status and after["OS-EXT-SRV-ATTR:host"] == server.host
    assert usages(cloud, nodes[server.host]) == USED
    assert all(usages(cloud, node) == ZERO for host, node in nodes.items() if host != server.host)


def test_moving_to_its_own_host(placed, cloud, admin_api):
    server, nodes = placed
    host = server.host
    assert fault(act(admin_api, server, {"os-migrateLive": {"host": host, "block_migration": "auto"}}, "2.30")) == (
        400,
        "badRequest",
        f"Unable to migrate instance ({server.uuid}) to current host ({host}).",
    )
    assert fault(act(admin_api, server, {"migrate": {"host": host}}, "2.56")) == (
        400,
        "badRequest",
        "Cannot migrate to the host where the server exists.",
    )
    force_down(host)
    assert fault(act(admin_api, server, {"evacuate": {"host": host}}, "2.29")) == (
        400,
        "badRequest",
        "The target host can't be the same one.",
    )
    unchanged(cloud, server, nodes, admin_api)


def test_unknown_hosts(placed, cloud, admin_api):
    server, nodes = placed
    assert fault(act(admin_api, server, {"os-migrateLive": {"host": "nowhere", "block_migration": True}}, "2.30")) == (
        400,
        "badRequest",
        "Compute host nowhere could not be found.",
    )
    assert fault(act(admin_api, server, {"migrate": {"host": "nowhere"}}, "2.56")) == (
        400,
        "badRequest",
        "Compute host nowhere could not be found.",
    )
    force_down(server.host)
    assert fault(act(admin_api, server, {"evacuate": {"host": "nowhere"}}, "2.29")) == (
        404,
        "itemNotFound",
        "Compute host nowhere not found.",
    )
    unchanged(cloud, server, nodes, admin_api)


def test_evacuating_a_server_whose_host_is_up(placed, cloud, admin_api):
    server, nodes = placed
    assert fault(act(admin_api, server, {"evacuate": {}}, "2.14")) == (
        400,
        "badRequest",
        f"Compute service of {server.host} is still in use.",
    )
    unchanged(cloud, server, nodes, admin_api)


def test_live_migrating_off_a_down_host_and_cold_migrating_one(placed, cloud, admin_api):
    server, nodes = placed
    force_down(server.host)
    assert fault(act(admin_api, server, {"os-migrateLive": {"host": None, "block_migration": "auto"}}, "2.30")) == (
        400,
        "badRequest",
        f"Compute service of {server.host} is unavailable at this time.",
    )
    assert fault(act(admin_api, server, {"migrate": None})) == (
        409,
        "conflictingRequest",
        "Service is unavailable at this time.",
    )
    unchanged(cloud, server, nodes, admin_api)


def test_wrong_states(placed, cloud, admin_api):
    server, nodes = placed
    assert fault(act(admin_api, server, {"confirmResize": None})) == (
        409,
        "conflictingRequest",
        f"Cannot 'confirmResize' instance {server.uuid} while it is in vm_state active",
    )
    Server.objects.filter(pk=server.pk).update(task_state="migrating")
    assert fault(act(admin_api, server, {"migrate": None})) == (
        409,
        "conflictingRequest",
        f"Cannot 'migrate' instance {server.uuid} while it is in task_state migrating",
    )
    Server.objects.filter(pk=server.pk).update(task_state=None, vm_state="resized")
    assert fault(act(admin_api, server, {"os-migrateLive": {"host": None, "block_migration": "auto"}}, "2.30")) == (
        409,
        "conflictingRequest",
        f"Cannot 'os-migrateLive' instance {server.uuid} while it is in vm_state resized",
    )
    # Resized without a finished migration: Nova's 400.
    assert fault(act(admin_api, server, {"confirmResize": None})) == (
        400,
        "badRequest",
        "Instance has not been resized.",
    )
    Server.objects.filter(pk=server.pk).update(vm_state="active")
    unchanged(cloud, server, nodes, admin_api)


def test_members_may_not_move_servers(placed, cloud, member_api, admin_api):
    server, nodes = placed
    for body, policy in [
        ({"migrate": None}, "os_compute_api:os-migrate-server:migrate"),
        ({"os-migrateLive": {"host": None, "block_migration": "auto"}}, "os-migrate-server:migrate_live "),
        ({"os-migrateLive": {"host": "h1", "block_migration": "auto"}}, "os-migrate-server:migrate_live:host"),
        ({"evacuate": {}}, "os_compute_api:os-evacuate"),
    ]:
        status, name, message = fault(act(member_api, server, body, "2.30"))
        assert (status, name) == (403, "forbidden") and policy in message, message
    assert member_api.get("/os-migrations").status_code == 403
    assert member_api.get(f"/servers/{server.uuid}/migrations", version="2.23").status_code == 403
    unchanged(cloud, server, nodes, admin_api)


def test_other_projects_servers_are_not_found(placed, token_for, admin_api, cloud):
    from tests.plugins.api import ApiClient

    server, nodes = placed
    stranger = ApiClient(token_for("member", "stranger", project_name="other"))
    status, name, _ = fault(act(stranger, server, {"migrate": None}))
    assert (status, name) == (404, "itemNotFound")
    unchanged(cloud, server, nodes, admin_api)


BAD_BODIES = [
    # (version, body, part of Nova's message)
    ("2.1", {"os-migrateLive": {"host": None, "block_migration": False}}, "'disk_over_commit' is a required property"),
    ("2.25", {"os-migrateLive": {"host": None}}, "'block_migration' is a required property"),
    ("2.25", {"os-migrateLive": {"block_migration": "auto"}}, "'host' is a required property"),
    ("2.24", {"os-migrateLive": {"host": None, "block_migration": "auto", "disk_over_commit": False}}, "auto"),
    ("2.25", {"os-migrateLive": {"host": None, "block_migration": "auto", "force": False}}, "'force' was unexpected"),
    ("2.68", {"os-migrateLive": {"host": "h1", "block_migration": "auto", "force": True}}, "'force' was unexpected"),
    ("2.30", {"os-migrateLive": {"host": None, "block_migration": "auto", "force": True}}, "Can't force to a non-"),
    ("2.30", {"os-migrateLive": {"host": None, "block_migration": "auto", "disk_over_commit": 1}}, "unexpected"),
    ("2.30", {"os-migrateLive": {"host": "bad host!", "block_migration": "auto"}}, "host"),
    ("2.56", {"migrate": {"host": 1}}, "host"),
    ("2.56", {"migrate": {"flavor": "x"}}, "'flavor' was unexpected"),
    ("2.56", {"migrate": []}, "migrate"),
    ("2.1", {"evacuate": {}}, "'onSharedStorage' is a required property"),
    ("2.14", {"evacuate": {"onSharedStorage": False}}, "'onSharedStorage' was unexpected"),
    ("2.28", {"evacuate": {"force": True, "host": "h1"}}, "'force' was unexpected"),
    ("2.29", {"evacuate": {"force": True}}, "Can't force to a non-provided destination"),
    ("2.68", {"evacuate": {"force": False}}, "'force' was unexpected"),
    ("2.1", {"evacuate": {"onSharedStorage": True, "adminPass": "x"}}, "admin password can't be changed"),
    ("2.100", {"resize": {}}, "'flavorRef' is a required property"),
    ("2.100", {"resize": {"flavorRef": ""}}, "flavorRef"),
    ("2.100", {"resize": {"flavorRef": "x", "OS-DCF:diskConfig": "SOMETIMES"}}, "OS-DCF:diskConfig"),
    ("2.100", {"resize": {"flavorRef": "x", "host": "h1"}}, "'host' was unexpected"),
    ("2.100", {"resize": None}, "resize"),
    ("2.100", {"revertResize": None, "other": 1}, "Malformed request body"),
    ("2.100", {"confirmResize": None, "other": 1}, "Malformed request body"),
    ("2.100", {"reboot-ish": None}, "There is no such action: reboot-ish"),
    ("2.100", ["migrate"], "Malformed request body"),
]


@pytest.mark.parametrize(("version", "body", "expected"), BAD_BODIES)
def test_bad_bodies(placed, cloud, admin_api, version, body, expected):
    server, nodes = placed
    if "evacuate" in body:
        force_down(server.host)
    status, name, message = fault(act(admin_api, server, body, version))
    assert (status, name) == (400, "badRequest"), message
    assert expected in message, message
    unchanged(cloud, server, nodes, admin_api)


def test_migrate_body_is_not_checked_before_2_56(placed, cloud, admin_api):
    server, nodes = placed
    response = act(admin_api, server, {"migrate": {"host": server.host}}, "2.55")  # host ignored: a plain migrate
    assert response.status_code == 202
    assert shown(admin_api, server)["status"] == "VERIFY_RESIZE"
