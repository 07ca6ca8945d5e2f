"""Compute nodes become placement resource providers (the resource tracker),
against upstream Placement and against Corral's own (``any_placement``)."""

import logging
import uuid

import pytest
from django.db import transaction

from aggregates.hosts import services as host_services
from aggregates.hosts.models import ComputeNode, Service
from aggregates.mirroring import applier, outbox, reconciler
from aggregates.mirroring.models import ProviderSyncRequest, ReconciliationRun
from tests.mirroring.conftest import make_due

Row = ProviderSyncRequest
pytestmark = pytest.mark.django_db(transaction=True)

REGISTRATION = {"host": "h1", "vcpus": 16, "memory_mb": 65536, "local_gb": 1000}


def register(api, **fields):
    return api.post("/os-host-registrations", {"registration": {**REGISTRATION, **fields}})


def inventory(total, reserved=0, allocation_ratio=1.0):
    return {
        "total": total,
        "reserved": reserved,
        "min_unit": 1,
        "max_unit": total,
        "step_size": 1,
        "allocation_ratio": allocation_ratio,
    }


def default_inventories(vcpus=16, memory_mb=65536, local_gb=1000):
    """With the settings' defaults: CPU ratio 4.0, 512 MiB reserved."""
    return {
        "VCPU": inventory(vcpus, allocation_ratio=4.0),
        "MEMORY_MB": inventory(memory_mb, reserved=512),
        "DISK_GB": inventory(local_gb),
    }


def node(host="h1"):
    return ComputeNode.objects.get(host=host)


def rows(action=Row.SYNC):
    return list(Row.objects.filter(action=action).order_by("id"))


# --- registration ---------------------------------------------------------------


def test_registration_creates_the_provider_with_its_inventories(admin_api, any_placement):
    response = register(admin_api, hypervisor_hostname="h1.example.org")
    assert response.status_code == 201
    provider = any_placement.call("GET", f"/resource_providers/{node().uuid}")
    assert provider["name"] == "h1.example.org"
    assert any_placement.inventories_of(node().uuid) == default_inventories()
    assert any_placement.traits_of(node().uuid) == set()
    [row] = rows()
    assert (row.status, row.node_uuid, row.hypervisor_hostname, row.host) == (
        Row.DONE,
        node().uuid,
        "h1.example.org",
        "h1",
    )
    assert node().provider_generation == provider["generation"]


def test_per_host_settings_replace_the_defaults(admin_api, any_placement, settings):
    settings.RESERVED_HOST_CPUS = 1
    response = register(
        admin_api,
        cpu_allocation_ratio=16.0,
        ram_allocation_ratio=1.5,
        disk_allocation_ratio=2.0,
        reserved_host_memory_mb=4096,
        reserved_host_disk_mb=1500,
    )
    assert response.status_code == 201
    assert any_placement.inventories_of(node().uuid) == {
        "VCPU": inventory(16, reserved=1, allocation_ratio=16.0),
        "MEMORY_MB": inventory(65536, reserved=4096, allocation_ratio=1.5),
        "DISK_GB": inventory(1000, reserved=2, allocation_ratio=2.0),  # 1500 MiB, rounded up to GiB
    }


def test_re_registration_updates_the_inventories(admin_api, any_placement):
    register(admin_api)
    generation = any_placement.call("GET", f"/resource_providers/{node().uuid}")["generation"]
    response = register(admin_api, memory_mb=131072, local_gb=0)
    assert response.status_code == 200
    inventories = any_placement.inventories_of(node().uuid)
    assert inventories["MEMORY_MB"] == inventory(131072, reserved=512)
    assert "DISK_GB" not in inventories  # placement wants a total of at least 1
    assert any_placement.call("GET", f"/resource_providers/{node().uuid}")["generation"] > generation
    assert [row.status for row in rows()] == [Row.DONE, Row.DONE]


def test_re_registration_keeps_other_resource_classes(admin_api, any_placement):
    register(admin_api)
    any_placement.call("PUT", "/resource_classes/CUSTOM_GPU")
    inventories = {**any_placement.inventories_of(node().uuid), "CUSTOM_GPU": inventory(2)}
    generation = any_placement.call("GET", f"/resource_providers/{node().uuid}")["generation"]
    any_placement.call(
        "PUT",
        f"/resource_providers/{node().uuid}/inventories",
        {"inventories": inventories, "resource_provider_generation": generation},
    )
    register(admin_api, vcpus=32)
    inventories = any_placement.inventories_of(node().uuid)
    assert (inventories["VCPU"]["total"], inventories["CUSTOM_GPU"]) == (32, inventory(2))


def test_lowering_an_allocated_inventory_away_fails_the_row(admin_api, any_placement, caplog):
    register(admin_api)
    consumer = str(uuid.uuid4())
    any_placement.call(
        "PUT",
        f"/allocations/{consumer}",
        {
            "allocations": {str(node().uuid): {"resources": {"DISK_GB": 100}}},
            "project_id": str(uuid.uuid4()),
            "user_id": str(uuid.uuid4()),
            "consumer_generation": None,
            "consumer_type": "INSTANCE",
        },
    )
    with caplog.at_level(logging.WARNING, logger="aggregates.mirroring"):
        response = register(admin_api, local_gb=0)
    assert response.status_code == 200  # the agent is not failed
    row = rows()[-1]
    assert (row.status, row.attempts) == (Row.FAILED, 1)
    assert "HTTP 409" in row.last_error and "DISK_GB" in row.last_error
    assert "creating or updating the resource provider of compute node h1" in caplog.text and "gave up" in caplog.text
    assert any_placement.inventories_of(node().uuid)["DISK_GB"]["total"] == 1000


# --- enabling and disabling -------------------------------------------------------


def test_disabling_adds_the_trait_and_enabling_removes_it(admin_api, any_placement):
    register(admin_api)
    service = node().service
    other_trait = "HW_CPU_X86_AVX2"
    any_placement.call(
        "PUT",
        f"/resource_providers/{node().uuid}/traits",
        {
            "traits": [other_trait],
            "resource_provider_generation": any_placement.call("GET", f"/resource_providers/{node().uuid}")[
                "generation"
            ],
        },
    )
    response = admin_api.put(f"/os-services/{service.uuid}", {"status": "disabled"}, version="2.53")
    assert response.status_code == 200
    assert any_placement.traits_of(node().uuid) == {"COMPUTE_STATUS_DISABLED", other_trait}
    response = admin_api.put("/os-services/enable", {"host": "h1", "binary": "nova-compute"})
    assert response.status_code == 200
    assert any_placement.traits_of(node().uuid) == {other_trait}
    assert [row.status for row in rows()] == [Row.DONE] * 3


def test_a_disabled_host_registering_again_keeps_the_trait(admin_api, any_placement):
    register(admin_api)
    admin_api.put("/os-services/disable", {"host": "h1", "binary": "nova-compute"})
    register(admin_api, memory_mb=131072)
    assert any_placement.traits_of(node().uuid) == {"COMPUTE_STATUS_DISABLED"}


# --- placement down ------------------------------------------------------------------


def test_placement_down_during_registration(admin_api, any_placement, caplog):
    any_placement.stop()
    with caplog.at_level(logging.WARNING, logger="aggregates.mirroring"):
        response = register(admin_api)
    assert response.status_code == 201
    warning = next(r for r in caplog.records if r.name == "aggregates.mirroring")
    assert "creating or updating the resource provider of compute node h1" in warning.getMessage()
    assert "Unable to communicate with the Placement API" in warning.getMessage()
    [row] = rows()
    assert (row.status, row.attempts) == (Row.PENDING, 1)

    any_placement.start()
    make_due(row)
    assert applier.drain_pending()[Row.DONE] == 1
    row.refresh_from_db()
    assert (row.status, row.last_error) == (Row.DONE, "")
    assert any_placement.inventories_of(node().uuid) == default_inventories()


def test_a_batch_failing_logs_one_summary_line(system, any_placement, caplog):
    """Seeding many hosts while placement is not up yet: one line, not one per row."""
    any_placement.stop()
    with caplog.at_level(logging.WARNING, logger="aggregates.mirroring"), transaction.atomic():
        for index in range(5):
            host_services.register_host(system, f"h{index}", vcpus=4, memory_mb=8192, local_gb=100)
    warnings = [r.getMessage() for r in caplog.records if r.name == "aggregates.mirroring"]
    assert len(warnings) == 1
    assert "5 of 5 request(s) not applied (5 will be retried, 0 given up)" in warnings[0]
    assert sorted(row.attempts for row in rows()) == [0, 0, 0, 0, 1]  # stopped at the first unreachable

    caplog.clear()
    any_placement.start()
    with caplog.at_level(logging.WARNING, logger="aggregates.mirroring"):
        assert applier.drain_pending(due_only=False)[Row.DONE] == 5
    assert not caplog.records
    assert all(any_placement.provider_exists(n.uuid) for n in ComputeNode.objects.all())


def test_rows_left_to_the_drain_are_not_applied_on_commit(system, any_placement, caplog):
    """serve_demo seeds this way, before placement is served; its drain thread applies the rows."""
    any_placement.stop()
    with caplog.at_level(logging.WARNING, logger="aggregates.mirroring"):
        with outbox.left_to_the_drain():
            for index in range(3):  # one transaction each
                host_services.register_host(system, f"h{index}", vcpus=4, memory_mb=8192, local_gb=100)
        assert not caplog.records
        assert [(row.status, row.attempts) for row in rows()] == [(Row.PENDING, 0)] * 3
        applier.drain_pending()
    assert len(caplog.records) == 1 and "3 of 3 request(s) not applied" in caplog.records[0].getMessage()

    any_placement.start()
    assert applier.drain_pending(due_only=False)[Row.DONE] == 3
    host_services.register_host(system, "h9", vcpus=4, memory_mb=8192, local_gb=100)  # outside: applied on commit
    assert rows()[-1].status == Row.DONE


# --- deletion ----------------------------------------------------------------------


def test_deleting_the_compute_service_deletes_its_providers(admin_api, any_placement):
    register(admin_api)
    register(admin_api, hypervisor_hostname="h1-b")
    doomed = [str(n.uuid) for n in ComputeNode.objects.all()]
    assert all(any_placement.provider_exists(provider) for provider in doomed)
    response = admin_api.delete(f"/os-services/{Service.objects.get().uuid}", version="2.53")
    assert response.status_code == 204
    assert [row.status for row in rows(Row.DELETE)] == [Row.DONE, Row.DONE]
    assert not any(any_placement.provider_exists(provider) for provider in doomed)


# --- reconciliation ---------------------------------------------------------------


def test_reconcile_creates_the_missing_provider(admin_api, any_placement):
    register(admin_api)
    any_placement.call("DELETE", f"/resource_providers/{node().uuid}")
    result = reconciler.reconcile(ReconciliationRun.COMMAND)
    run = result.run
    assert (run.providers_created, run.inventories_updated, run.traits_updated, run.exit_code) == (1, 0, 0, 0)
    assert any_placement.inventories_of(node().uuid) == default_inventories()
    assert "Placement resource providers: 1 created, 0 inventories updated, 0 disabled traits changed." in run.messages


def test_reconcile_repairs_inventories_and_the_trait(admin_api, any_placement):
    register(admin_api)
    register(admin_api, host="h2")
    admin_api.put("/os-services/disable", {"host": "h2", "binary": "nova-compute"})
    h1, h2 = node("h1"), node("h2")
    generation = any_placement.call("GET", f"/resource_providers/{h1.uuid}")["generation"]
    any_placement.call(
        "PUT",
        f"/resource_providers/{h1.uuid}/inventories",
        {"inventories": {"VCPU": inventory(1)}, "resource_provider_generation": generation},
    )
    generation = any_placement.call("GET", f"/resource_providers/{h2.uuid}")["generation"]
    any_placement.call(
        "PUT", f"/resource_providers/{h2.uuid}/traits", {"traits": [], "resource_provider_generation": generation}
    )

    run = reconciler.reconcile(ReconciliationRun.COMMAND).run
    assert (run.providers_created, run.inventories_updated, run.traits_updated, run.exit_code) == (0, 1, 1, 0)
    assert any_placement.inventories_of(h1.uuid) == default_inventories()
    assert any_placement.traits_of(h2.uuid) == {"COMPUTE_STATUS_DISABLED"}

    in_sync = reconciler.reconcile(ReconciliationRun.COMMAND).run
    assert (in_sync.inventories_updated, in_sync.traits_updated, in_sync.placement_requests) == (0, 0, 1)


def test_reconcile_drains_pending_provider_rows_first(admin_api, any_placement):
    any_placement.stop()
    register(admin_api)
    any_placement.start()
    run = reconciler.reconcile(ReconciliationRun.COMMAND).run
    assert rows()[0].status == Row.DONE
    assert "Applied pending placement mirror requests: 1 done, 0 still pending, 0 failed." in run.messages
    assert run.providers_created == 0 and run.exit_code == 0
