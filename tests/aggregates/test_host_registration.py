"""How a compute host enters Corral: POST /os-host-registrations (its agent)
and ``manage.py register_host`` (an operator)."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.hosts.models import ComputeNode, Service
from aggregates.mirroring.models import ProviderSyncRequest
from tests.helpers import fault

MINIMAL = {"host": "node1", "vcpus": 16, "memory_mb": 65536, "local_gb": 1000}


def register(api, **fields):
    return api.post("/os-host-registrations", {"registration": {**MINIMAL, **fields}})


def state():
    """Everything a registration could change."""
    return (
        sorted(Service.objects.values_list("id", "host", "binary", "report_count", "last_seen_up")),
        sorted(
            ComputeNode.objects.values_list(
                "id", "host", "hypervisor_hostname", "vcpus", "memory_mb", "local_gb", "hypervisor_type", "host_ip"
            )
        ),
    )


# --- POST /os-host-registrations -----------------------------------------------


def test_first_registration_creates_service_and_node(admin_api):
    response = register(admin_api, hypervisor_type="ironic", hypervisor_version=1, host_ip="192.0.2.7", running_vms=0)
    assert response.status_code == 201
    service = Service.objects.get()
    node = ComputeNode.objects.get()
    assert response.json() == {
        "registration": {
            "host": "node1",
            "hypervisor_hostname": "node1",
            "service_uuid": str(service.uuid),
            "compute_node_uuid": str(node.uuid),
            "created": True,
        }
    }
    assert (service.host, service.binary, service.topic, service.report_count) == (
        "node1",
        "nova-compute",
        "compute",
        1,
    )
    assert service.is_up and not service.disabled
    assert (node.host, node.hypervisor_hostname, node.service_id) == ("node1", "node1", service.id)
    assert (node.vcpus, node.memory_mb, node.local_gb, node.disk_available_least) == (16, 65536, 1000, 1000)
    assert (node.hypervisor_type, node.hypervisor_version, node.host_ip) == ("ironic", 1, "192.0.2.7")


def test_new_nodes_get_defaults_for_what_is_not_reported(admin_api):
    register(admin_api)
    node = ComputeNode.objects.get()
    assert (node.hypervisor_type, node.hypervisor_version, node.host_ip, node.running_vms) == ("QEMU", 0, None, 0)


def test_first_registration_records_events(admin_api):
    body = register(admin_api).json()["registration"]
    service_event = Event.objects.get(event_type="service.create")
    assert (service_event.object_type, service_event.object_uuid) == ("service", body["service_uuid"])
    node_event = Event.objects.get(event_type="compute_node.register")
    assert (node_event.object_type, node_event.object_uuid) == ("compute_node", body["compute_node_uuid"])
    assert node_event.payload["vcpus"] == 16 and node_event.username == "admin-user"


def test_registering_again_updates_the_node_and_is_a_heartbeat(admin_api):
    first = register(admin_api, host_ip="192.0.2.7").json()["registration"]
    stale = timezone.now() - timedelta(days=1)
    Service.objects.update(last_seen_up=stale)
    assert Service.objects.get().is_up is False

    response = register(admin_api, vcpus=32, memory_mb=1024, local_gb=10, running_vms=3)
    assert response.status_code == 200
    assert response.json()["registration"] == {**first, "created": False}
    service = Service.objects.get()
    node = ComputeNode.objects.get()
    assert service.report_count == 2 and service.last_seen_up > stale and service.is_up
    assert (node.vcpus, node.memory_mb, node.local_gb, node.running_vms) == (32, 1024, 10, 3)
    assert Event.objects.filter(event_type="compute_node.update").count() == 1
    assert Event.objects.filter(event_type="service.create").count() == 1


def test_registering_again_keeps_what_is_not_reported(admin_api):
    register(admin_api, hypervisor_type="ironic", hypervisor_version=7, host_ip="2001:db8::7", running_vms=2)
    register(admin_api)
    node = ComputeNode.objects.get()
    assert (node.hypervisor_type, node.hypervisor_version, node.host_ip, node.running_vms) == (
        "ironic",
        7,
        "2001:db8::7",
        2,
    )


def test_registering_again_keeps_the_operator_settings(admin_api):
    register(admin_api)
    Service.objects.update(disabled=True, disabled_reason="maintenance", forced_down=True)
    register(admin_api)
    service = Service.objects.get()
    assert (service.disabled, service.disabled_reason, service.forced_down) == (True, "maintenance", True)


def test_another_node_name_adds_a_node_to_the_host(admin_api):
    first = register(admin_api, hypervisor_hostname="node-a").json()["registration"]
    response = register(admin_api, hypervisor_hostname="node-b")
    assert response.status_code == 201
    second = response.json()["registration"]
    assert second["service_uuid"] == first["service_uuid"]
    assert second["compute_node_uuid"] != first["compute_node_uuid"]
    assert Service.objects.count() == 1
    assert sorted(ComputeNode.objects.values_list("hypervisor_hostname", flat=True)) == ["node-a", "node-b"]


def test_a_node_name_belongs_to_one_host(admin_api):
    register(admin_api, hypervisor_hostname="shared")
    before = state()
    message = fault(register(admin_api, host="node2", hypervisor_hostname="shared"), 409, "conflictingRequest")
    assert message.startswith("Compute node shared is already registered by host node1.")
    assert state() == before


def test_cpu_info_and_uptime_reach_the_hypervisor_api(admin_api):
    cpu_info = {"arch": "aarch64", "vendor": "ARM"}
    register(admin_api, cpu_info=cpu_info, uptime=" 09:00:00 up 1 day")
    node = ComputeNode.objects.get()
    detail = admin_api.get(f"/os-hypervisors/{node.id}", version="2.28").json()["hypervisor"]
    assert detail["cpu_info"] == cpu_info
    assert admin_api.get(f"/os-hypervisors/{node.uuid}", version="2.88").json()["hypervisor"]["uptime"] == (
        " 09:00:00 up 1 day"
    )


def test_registered_host_can_join_an_aggregate(admin_api):
    register(admin_api)
    aggregate = admin_api.post("/os-aggregates", {"aggregate": {"name": "rack1"}}).json()["aggregate"]
    response = admin_api.post(f"/os-aggregates/{aggregate['id']}/action", {"add_host": {"host": "node1"}})
    assert response.status_code == 200
    assert response.json()["aggregate"]["hosts"] == ["node1"]


@pytest.mark.parametrize("host_ip", ["10.1.2.3", "2001:db8::1", "::1"])
def test_ipv4_and_ipv6_addresses_are_accepted(admin_api, host_ip):
    assert register(admin_api, host_ip=host_ip).status_code == 201
    assert ComputeNode.objects.get().host_ip == host_ip


@pytest.mark.parametrize("value", [0, 2147483647])
def test_resource_bounds_are_accepted(admin_api, value):
    assert register(admin_api, vcpus=value, memory_mb=value, local_gb=value).status_code == 201


@pytest.mark.parametrize(
    "body, expected",
    [
        ({}, "'registration' is a required property"),
        ({"registration": MINIMAL, "extra": 1}, "'extra' was unexpected"),
        ({"registration": [MINIMAL]}, "is not of type 'object'"),
        ({"registration": {**MINIMAL, "vcpus": -1}}, "Invalid input for field/attribute vcpus"),
        ({"registration": {**MINIMAL, "vcpus": "16"}}, "Invalid input for field/attribute vcpus"),
        ({"registration": {**MINIMAL, "vcpus": 1.5}}, "Invalid input for field/attribute vcpus"),
        ({"registration": {**MINIMAL, "vcpus": True}}, "Invalid input for field/attribute vcpus"),
        ({"registration": {**MINIMAL, "memory_mb": 2147483648}}, "Invalid input for field/attribute memory_mb"),
        ({"registration": {**MINIMAL, "local_gb": None}}, "Invalid input for field/attribute local_gb"),
        ({"registration": {**MINIMAL, "running_vms": -2}}, "Invalid input for field/attribute running_vms"),
        (
            {"registration": {**MINIMAL, "hypervisor_version": "8.2"}},
            "Invalid input for field/attribute hypervisor_version",
        ),
        ({"registration": {**MINIMAL, "host": ""}}, "Invalid input for field/attribute host"),
        ({"registration": {**MINIMAL, "host": "node 1"}}, "Invalid input for field/attribute host"),
        ({"registration": {**MINIMAL, "host": "node/1"}}, "Invalid input for field/attribute host"),
        ({"registration": {**MINIMAL, "host": "n" * 256}}, "Invalid input for field/attribute host"),
        (
            {"registration": {**MINIMAL, "hypervisor_hostname": "a:b"}},
            "Invalid input for field/attribute hypervisor_hostname",
        ),
        ({"registration": {**MINIMAL, "hypervisor_type": ""}}, "Invalid input for field/attribute hypervisor_type"),
        (
            {"registration": {**MINIMAL, "hypervisor_type": " QEMU"}},
            "Invalid input for field/attribute hypervisor_type",
        ),
        ({"registration": {**MINIMAL, "host_ip": "300.1.1.1"}}, "Invalid input for field/attribute host_ip"),
        ({"registration": {**MINIMAL, "host_ip": "node1"}}, "Invalid input for field/attribute host_ip"),
        ({"registration": {**MINIMAL, "host_ip": 10}}, "Invalid input for field/attribute host_ip"),
        ({"registration": {**MINIMAL, "cpu_info": "x86"}}, "Invalid input for field/attribute cpu_info"),
        ({"registration": {**MINIMAL, "uptime": "u" * 256}}, "Invalid input for field/attribute uptime"),
        ({"registration": {**MINIMAL, "binary": "nova-scheduler"}}, "'binary' was unexpected"),
        (
            {"registration": {**MINIMAL, "cpu_allocation_ratio": 0}},
            "Invalid input for field/attribute cpu_allocation_ratio",
        ),
        (
            {"registration": {**MINIMAL, "ram_allocation_ratio": -1.5}},
            "Invalid input for field/attribute ram_allocation_ratio",
        ),
        (
            {"registration": {**MINIMAL, "disk_allocation_ratio": "2.0"}},
            "Invalid input for field/attribute disk_allocation_ratio",
        ),
        (
            {"registration": {**MINIMAL, "cpu_allocation_ratio": True}},
            "Invalid input for field/attribute cpu_allocation_ratio",
        ),
        (
            {"registration": {**MINIMAL, "reserved_host_memory_mb": -1}},
            "Invalid input for field/attribute reserved_host_memory_mb",
        ),
        (
            {"registration": {**MINIMAL, "reserved_host_cpus": 0.5}},
            "Invalid input for field/attribute reserved_host_cpus",
        ),
        (
            {"registration": {**MINIMAL, "reserved_host_disk_mb": 2147483648}},
            "Invalid input for field/attribute reserved_host_disk_mb",
        ),
    ]
    + [
        ({"registration": {k: v for k, v in MINIMAL.items() if k != missing}}, f"'{missing}' is a required property")
        for missing in MINIMAL
    ],
)
def test_bad_input_is_400_and_changes_nothing(admin_api, body, expected):
    register(admin_api, host="existing")
    before = state()
    message = fault(admin_api.post("/os-host-registrations", body), 400, "badRequest")
    assert expected in message
    assert state() == before


def test_placement_settings_of_a_host_are_kept_until_reported_again(admin_api):
    overrides = {
        "cpu_allocation_ratio": 2.5,
        "ram_allocation_ratio": 1.5,
        "disk_allocation_ratio": 1.0,
        "reserved_host_cpus": 2,
        "reserved_host_memory_mb": 4096,
        "reserved_host_disk_mb": 10240,
    }
    assert register(admin_api, **overrides).status_code == 201
    assert register(admin_api, memory_mb=131072, reserved_host_cpus=4).status_code == 200
    node = ComputeNode.objects.values(*overrides).get()
    assert node == {**overrides, "reserved_host_cpus": 4}


def test_registration_writes_a_provider_sync_row(admin_api):
    register(admin_api)
    register(admin_api, memory_mb=131072)
    node = ComputeNode.objects.get()
    rows = list(ProviderSyncRequest.objects.values_list("node_uuid", "hypervisor_hostname", "action", "status"))
    assert rows == [(node.uuid, "node1", "sync", "pending")] * 2  # the test's transaction never commits


def test_malformed_json_is_400(admin_api):
    fault(admin_api.post("/os-host-registrations", raw='{"registration": '), 400, "badRequest")
    assert not Service.objects.exists()


@pytest.mark.parametrize("api_name", ["reader_api", "member_api"])
def test_only_admins_register(request, api_name):
    api = request.getfixturevalue(api_name)
    message = fault(register(api), 403, "forbidden")
    assert "os_compute_api:os-host-registrations:create" in message
    assert not Service.objects.exists()


def test_registering_needs_a_token(anon_api):
    fault(register(anon_api), 401, "unauthorized")
    assert not Service.objects.exists()


def test_registrations_are_not_listed_or_shown(admin_api):
    fault(admin_api.get("/os-host-registrations"), 405, "badMethod")


# --- manage.py register_host ---------------------------------------------------


def run(*args):
    out = StringIO()
    call_command("register_host", *args, stdout=out)
    return out.getvalue()


def test_command_registers_a_new_host(db):
    output = run(
        "node1",
        "--vcpus",
        "8",
        "--memory-mb",
        "16384",
        "--disk-gb",
        "200",
        "--hypervisor-type",
        "QEMU",
        "--host-ip",
        "192.0.2.1",
    )
    node = ComputeNode.objects.get()
    assert output.startswith("Registered new compute node node1 of host node1")
    assert str(node.uuid) in output
    assert (node.vcpus, node.memory_mb, node.local_gb, node.host_ip) == (8, 16384, 200, "192.0.2.1")
    assert Service.objects.get().is_up
    assert Event.objects.get(event_type="compute_node.register").username == "manage.py register_host"


def test_command_sets_the_placement_settings_of_the_host(db):
    run(
        "node1",
        "--vcpus",
        "8",
        "--memory-mb",
        "16384",
        "--disk-gb",
        "200",
        "--cpu-allocation-ratio",
        "16",
        "--reserved-host-memory-mb",
        "2048",
        "--reserved-host-disk-mb",
        "0",
    )
    node = ComputeNode.objects.get()
    assert (
        node.cpu_allocation_ratio,
        node.ram_allocation_ratio,
        node.reserved_host_memory_mb,
        node.reserved_host_disk_mb,
        node.reserved_host_cpus,
    ) == (16.0, None, 2048, 0, None)


def test_command_updates_a_known_host(db):
    run("node1", "--vcpus", "8", "--memory-mb", "16384", "--disk-gb", "200")
    uuid_before = ComputeNode.objects.get().uuid
    output = run("node1", "--vcpus", "16", "--memory-mb", "16384", "--disk-gb", "200")
    assert output.startswith("Updated compute node node1 of host node1")
    node = ComputeNode.objects.get()
    assert node.uuid == uuid_before and node.vcpus == 16
    assert Service.objects.get().report_count == 2


def test_command_node_option_adds_a_node(db):
    run("ironic", "--node", "bm-1", "--vcpus", "8", "--memory-mb", "1024", "--disk-gb", "10")
    output = run("ironic", "--node", "bm-2", "--vcpus", "8", "--memory-mb", "1024", "--disk-gb", "10")
    assert output.startswith("Registered new compute node bm-2 of host ironic")
    assert ComputeNode.objects.filter(host="ironic").count() == 2
    assert Service.objects.count() == 1


@pytest.mark.parametrize(
    "args, expected",
    [
        (["node1", "--memory-mb", "1", "--disk-gb", "1"], "--vcpus"),
        (["--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1"], "host"),
        (["node1", "--vcpus", "four", "--memory-mb", "1", "--disk-gb", "1"], "invalid int value"),
        (["node1", "--vcpus", "-1", "--memory-mb", "1", "--disk-gb", "1"], "vcpus"),
        (["node1", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "99999999999"], "local_gb"),
        (["bad host", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1"], "host"),
        (["node1", "--node", "a:b", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1"], "hypervisor_hostname"),
        (["node1", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1", "--host-ip", "10.0.0"], "host_ip"),
        (["node1", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1", "--hypervisor-type", ""], "hypervisor_type"),
        (
            ["node1", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1", "--ram-allocation-ratio", "0"],
            "ram_allocation_ratio",
        ),
        (
            ["node1", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1", "--reserved-host-cpus", "-1"],
            "reserved_host_cpus",
        ),
    ],
)
def test_command_rejects_bad_arguments(db, args, expected):
    with pytest.raises(CommandError) as error:
        run(*args)
    assert expected in str(error.value)
    assert not Service.objects.exists()


def test_command_reports_a_node_name_owned_by_another_host(db):
    run("node1", "--node", "shared", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1")
    with pytest.raises(CommandError, match="already registered by host node1"):
        run("node2", "--node", "shared", "--vcpus", "1", "--memory-mb", "1", "--disk-gb", "1")
    assert list(Service.objects.values_list("host", flat=True)) == ["node1"]


def test_heartbeat_brings_a_silent_host_back_up(admin_api, make_host):
    from datetime import timedelta

    from django.utils import timezone

    from aggregates.hosts import services as hosts
    from aggregates.hosts.models import Service

    make_host("quiet")
    make_host("other")
    Service.objects.update(last_seen_up=timezone.now() - timedelta(hours=1))
    states = lambda: {s["host"]: s["state"] for s in admin_api.get("/os-services").json()["services"]}  # noqa: E731
    assert states() == {"quiet": "down", "other": "down"}
    assert hosts.heartbeat(["quiet"]) == 1
    assert states() == {"quiet": "up", "other": "down"}
