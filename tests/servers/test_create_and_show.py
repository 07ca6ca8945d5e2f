"""POST /servers with the CLI's body, then GET /servers/{id}: the server is
ACTIVE on a host with its allocation in placement, shown as Nova shows it."""

import re

import pytest

from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

V = "2.100"


def boot(api, body, version=V):
    response = api.post("/servers", body, version=version)
    assert response.status_code == 202, response.content
    return response


def test_cli_create_body_builds_an_active_server_with_its_allocation(cloud, admin_api):
    node = cloud.host("h1")
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    response = boot(admin_api, cli_body(flavor, image))
    created = response.json()["server"]
    assert set(created) == {"id", "links", "OS-DCF:diskConfig", "security_groups", "adminPass"}
    assert created["security_groups"] == [{"name": "default"}]
    assert created["OS-DCF:diskConfig"] == "MANUAL"
    assert response.headers["Location"] == created["links"][0]["href"]
    assert created["links"][0]["href"].endswith(f"/compute/v2.1/servers/{created['id']}")

    server = Server.objects.get()
    assert str(server.uuid) == created["id"]
    assert (server.vm_state, server.task_state, server.power_state) == ("active", None, 1)
    assert (server.host, server.node, server.node_uuid) == ("h1", "h1", str(node.uuid))
    assert server.pinned_availability_zone is None
    allocations = cloud.allocations(server.uuid)
    assert allocations == {
        str(node.uuid): {
            "generation": allocations[str(node.uuid)]["generation"],
            "resources": {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10},
        }
    }

    shown = admin_api.get(f"/servers/{created['id']}", version=V).json()["server"]
    assert shown["status"] == "ACTIVE"
    assert shown["OS-EXT-SRV-ATTR:host"] == "h1"
    assert shown["OS-EXT-SRV-ATTR:hypervisor_hostname"] == "h1"
    assert shown["OS-EXT-AZ:availability_zone"] == "nova"
    assert server.decision.outcome == SchedulingDecision.CHOSEN


def test_show_at_2_100_has_every_field(cloud, admin_api):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    body = cli_body(flavor, image, metadata={"k": "v"}, description="first", tags=["b", "a"], networks="auto")
    body["os:scheduler_hints"] = {"different_host": "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"}
    server_id = boot(admin_api, body).json()["server"]["id"]
    shown = admin_api.get(f"/servers/{server_id}", version=V).json()["server"]
    assert set(shown) == {
        "id",
        "name",
        "status",
        "tenant_id",
        "user_id",
        "created",
        "updated",
        "hostId",
        "links",
        "metadata",
        "addresses",
        "image",
        "flavor",
        "accessIPv4",
        "accessIPv6",
        "OS-DCF:diskConfig",
        "OS-EXT-AZ:availability_zone",
        "config_drive",
        "key_name",
        "OS-SRV-USG:launched_at",
        "OS-SRV-USG:terminated_at",
        "OS-EXT-STS:task_state",
        "OS-EXT-STS:vm_state",
        "OS-EXT-STS:power_state",
        "os-extended-volumes:volumes_attached",
        "progress",
        "OS-EXT-SRV-ATTR:host",
        "OS-EXT-SRV-ATTR:instance_name",
        "OS-EXT-SRV-ATTR:hypervisor_hostname",
        "OS-EXT-SRV-ATTR:hostname",
        "OS-EXT-SRV-ATTR:kernel_id",
        "OS-EXT-SRV-ATTR:launch_index",
        "OS-EXT-SRV-ATTR:ramdisk_id",
        "OS-EXT-SRV-ATTR:reservation_id",
        "OS-EXT-SRV-ATTR:root_device_name",
        "OS-EXT-SRV-ATTR:user_data",
        "locked",
        "host_status",
        "description",
        "tags",
        "trusted_image_certificates",
        "server_groups",
        "locked_reason",
        "pinned_availability_zone",
        "scheduler_hints",
    }
    assert shown["flavor"] == {
        "vcpus": 1,
        "ram": 512,
        "disk": 1,
        "ephemeral": 0,
        "swap": 0,
        "original_name": "m1.small",
        "extra_specs": {},
    }
    assert shown["image"]["id"] == str(image.id)
    assert shown["image"]["links"][0]["rel"] == "bookmark"
    assert shown["metadata"] == {"k": "v"} and shown["description"] == "first"
    assert shown["scheduler_hints"] == {"different_host": ["6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"]}
    assert shown["pinned_availability_zone"] is None
    assert shown["host_status"] == "UP"
    assert (shown["locked"], shown["locked_reason"], shown["tags"]) == (False, None, ["a", "b"])
    assert (shown["OS-EXT-STS:vm_state"], shown["OS-EXT-STS:task_state"], shown["OS-EXT-STS:power_state"]) == (
        "active",
        None,
        1,
    )
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", shown["created"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", shown["OS-SRV-USG:launched_at"])
    assert shown["OS-SRV-USG:terminated_at"] is None
    assert shown["addresses"] == {} and shown["progress"] == 0
    assert len(shown["hostId"]) == 56
    assert shown["tenant_id"] == "admin" or shown["tenant_id"]


def test_show_before_2_47_has_the_flavor_link_and_at_2_1_no_later_fields(cloud, admin_api):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    server_id = boot(admin_api, cli_body(flavor, image)).json()["server"]["id"]
    at_246 = admin_api.get(f"/servers/{server_id}", version="2.46").json()["server"]
    assert at_246["flavor"]["id"] == flavor.flavorid
    assert at_246["flavor"]["links"][0]["href"].endswith(f"/compute/flavors/{flavor.flavorid}")
    at_21 = admin_api.get(f"/servers/{server_id}", version="2.1").json()["server"]
    later = {
        "locked",
        "host_status",
        "description",
        "tags",
        "trusted_image_certificates",
        "locked_reason",
        "pinned_availability_zone",
        "scheduler_hints",
        "OS-EXT-SRV-ATTR:hostname",
        "server_groups",
    }
    assert not later & set(at_21)
    assert at_21["flavor"] == at_246["flavor"]
    assert "OS-EXT-SRV-ATTR:host" in at_21 and "OS-EXT-SRV-ATTR:reservation_id" not in at_21
    at_247 = admin_api.get(f"/servers/{server_id}", version="2.47").json()["server"]
    assert at_247["flavor"]["original_name"] == "m1.small" and "id" not in at_247["flavor"]


# Every microversion the server tests use, and each at which a server body changes.
BODY_VERSIONS = (
    "2.1 2.3 2.9 2.16 2.19 2.22 2.23 2.26 2.27 2.30 2.36 2.42 2.43 2.46 2.47 2.52 2.53 2.56 2.58 2.59 "
    "2.63 2.71 2.73 2.74 2.75 2.79 2.80 2.87 2.88 2.90 2.94 2.95 2.96 2.98 2.100 2.102 2.104"
).split()


def keys_of(value):
    """Every key of every object in a JSON value, however deep."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def test_no_corral_key_in_any_server_body_at_any_microversion(cloud, admin_api, member_api):
    """Nova's server bodies carry nothing of Corral's (clients validate them
    against Nova's schema): not for admins, not for a server whose build
    failed, at no microversion."""
    cloud.host("h1", vcpus=2)
    flavor, huge, image = cloud.flavor(), cloud.flavor("huge", vcpus=64), cloud.image()
    active = boot(admin_api, cli_body(flavor, image, name="active")).json()["server"]["id"]
    failed = boot(admin_api, cli_body(huge, image, name="failed")).json()["server"]["id"]
    members = boot(member_api, cli_body(flavor, image, name="members")).json()["server"]["id"]
    assert Server.objects.filter(decision__isnull=False).count() == 3
    requests = [
        (admin_api, f"/servers/{active}"),
        (admin_api, f"/servers/{failed}"),
        (admin_api, "/servers?all_tenants=1"),
        (admin_api, "/servers/detail?all_tenants=1"),
        (member_api, f"/servers/{members}"),
        (member_api, "/servers"),
        (member_api, "/servers/detail"),
    ]
    for version in BODY_VERSIONS:
        for api, path in requests:
            response = api.get(path, version=version)
            assert response.status_code == 200, (version, path, response.content)
            corral_keys = [key for key in keys_of(response.json()) if key.startswith("corral:")]
            assert corral_keys == [], (version, path)


def test_access_ips_and_config_drive_are_shown_as_given(cloud, admin_api):
    """accessIPv4/accessIPv6 are stored and shown as Nova shows them (its IP
    columns: the address's canonical text); config_drive is Nova's string
    column: "True" when one was asked for, else ""."""
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    body = cli_body(flavor, image, accessIPv4="192.0.2.10", accessIPv6="2001:DB8::0001", config_drive=True)
    created = boot(admin_api, body).json()["server"]
    assert set(created) == {"id", "links", "OS-DCF:diskConfig", "security_groups", "adminPass"}  # as Nova's
    plain = boot(admin_api, cli_body(flavor, image, name="plain")).json()["server"]["id"]
    for version in ("2.1", "2.47", V):
        shown = admin_api.get(f"/servers/{created['id']}", version=version).json()["server"]
        fields = (shown["accessIPv4"], shown["accessIPv6"], shown["config_drive"])
        assert fields == ("192.0.2.10", "2001:db8::1", "True")
        listed = {item["id"]: item for item in admin_api.get("/servers/detail", version=version).json()["servers"]}
        assert (listed[created["id"]]["accessIPv4"], listed[created["id"]]["config_drive"]) == ("192.0.2.10", "True")
        assert listed[created["id"]]["accessIPv6"] == "2001:db8::1"
        assert (listed[plain]["accessIPv4"], listed[plain]["accessIPv6"], listed[plain]["config_drive"]) == ("", "", "")


@pytest.mark.parametrize(
    "given, shown",
    [
        (True, "True"),
        ("true", "True"),
        ("YES", "True"),
        ("1", "True"),
        ("On", "True"),
        (False, ""),
        ("no", ""),
        ("0", ""),
    ],
)
def test_config_drive_values_as_nova_reads_them(cloud, admin_api, given, shown):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    server_id = boot(admin_api, cli_body(flavor, image, config_drive=given)).json()["server"]["id"]
    assert admin_api.get(f"/servers/{server_id}", version=V).json()["server"]["config_drive"] == shown
