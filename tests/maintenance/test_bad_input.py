"""Every bad maintenance request is a Nova-style 4xx and changes nothing:
unknown host (404 before anything else), bad bodies, the wrong role, start
twice, stop without start, stop while the drain runs; jobs that do not
exist; the legacy os-hosts update's refusals."""

import pytest

from aggregates.audit.models import Event
from aggregates.hosts.models import Service
from aggregates.maintenance import running
from aggregates.maintenance.models import MaintenanceItem, MaintenanceJob
from aggregates.servers.models import Server

from .conftest import V, boot_on, fault, maintenance, started


def state():
    return (
        list(Server.objects.order_by("id").values_list("uuid", "host", "vm_state")),
        list(Service.objects.order_by("id").values_list("host", "disabled", "disabled_reason")),
        MaintenanceJob.objects.count(),
        MaintenanceItem.objects.count(),
        Event.objects.exclude(event_type="compute.exception").count(),
    )


@pytest.fixture
def small(cloud, admin_api):
    cloud.hosts("A", "B")
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    return boot_on(admin_api, flavor, image, "A", count=2)


BAD_BODIES = [
    {},
    {"maintenance": {}},
    {"maintenance": {"action": "pause"}},
    {"maintenance": {"action": "start", "strategy": "teleport"}},
    {"maintenance": {"action": "start", "reason": "x" * 256}},
    {"maintenance": {"action": "start", "dry_run": "yes"}},
    {"maintenance": {"action": "start", "rebalance": 1}},
    {"maintenance": {"action": "start", "prefer_aggregate_peers": None}},
    {"maintenance": {"action": "start", "color": "red"}},
    {"maintenance": {"action": "start"}, "extra": True},
    {"maintenance": "start"},
]


def test_bad_bodies_are_400_and_change_nothing(small, admin_api):
    before = state()
    for body in BAD_BODIES:
        response = admin_api.post("/os-hosts/A/maintenance", body, version=V)
        status, name, _ = fault(response)
        assert (status, name) == (400, "badRequest"), body
    assert state() == before


def test_unknown_host_is_404_before_anything_else(small, admin_api):
    before = state()
    for body in ({"maintenance": {"action": "start"}}, {"maintenance": {"action": "pause"}}, {}):
        status, name, message = fault(admin_api.post("/os-hosts/nope/maintenance", body, version=V))
        assert (status, name, message) == (404, "itemNotFound", "Compute host nope could not be found.")
    assert fault(admin_api.post("/os-hosts/a/maintenance", {"maintenance": {"action": "start"}}, version=V))[0] == 404
    assert state() == before


def test_only_admins(small, member_api, reader_api):
    before = state()
    for api in (member_api, reader_api):
        status, _, message = fault(maintenance(api, "A", "start"))
        assert (status, message) == (403, "Policy doesn't allow corral:os-hosts:maintenance to be performed.")
        assert fault(api.get("/os-maintenance-jobs", version=V))[0] == 403
        assert fault(api.put("/os-hosts/A", {"maintenance_mode": "enable"}, version="2.1"))[0] == 403
    assert state() == before


def test_start_twice_stop_without_start_stop_twice(small, admin_api):
    before = state()
    status, name, message = fault(maintenance(admin_api, "A", "stop"))
    assert (status, name, message) == (409, "conflictingRequest", "Host A is not in maintenance.")
    status, _, _ = fault(maintenance(admin_api, "A", "stop", dry_run=True))
    assert status == 409
    assert state() == before
    assert started(admin_api, "A")["status"] == "completed"
    after_start = state()
    for options in ({}, {"dry_run": True}):
        status, _, message = fault(maintenance(admin_api, "A", "start", **options))
        assert status == 409 and message == "Host A is already in maintenance: stop its maintenance first."
    assert state() == after_start
    assert maintenance(admin_api, "A", "stop").status_code == 202
    assert fault(maintenance(admin_api, "A", "stop"))[0] == 409


def test_stop_while_the_drain_runs_is_409(small, admin_api, monkeypatch):
    monkeypatch.setattr(running, "dispatch", lambda job_pk: None)  # the job stays queued
    assert maintenance(admin_api, "A", "start").status_code == 202
    before = state()
    status, _, message = fault(maintenance(admin_api, "A", "stop", rebalance=True))
    assert status == 409 and "still moving its servers" in message
    assert state() == before


def test_jobs_that_do_not_exist(small, admin_api):
    for job_id in ("nope", "6b7ee1a4-1f57-4a5b-9c55-3b4d9f7bb0b1"):
        status, name, message = fault(admin_api.get(f"/os-maintenance-jobs/{job_id}", version=V))
        assert (status, name, message) == (404, "itemNotFound", f"Maintenance job {job_id} could not be found.")
    for query in ("status=done", "limit=x", "color=red"):
        assert fault(admin_api.get(f"/os-maintenance-jobs?{query}", version=V))[0] == 400


def test_legacy_os_hosts_refusals(small, admin_api):
    before = state()
    for body in ({}, {"maintenance_mode": "on"}, {"status": "up"}, {"maintenance_mode": "enable", "x": 1}):
        assert fault(admin_api.put("/os-hosts/A", body, version="2.1"))[:2] == (400, "badRequest"), body
    status, _, message = fault(admin_api.put("/os-hosts/nope", {"maintenance_mode": "enable"}, version="2.1"))
    assert (status, message) == (404, "Compute host nope could not be found.")
    assert fault(admin_api.put("/os-hosts/A", {"maintenance_mode": "disable"}, version="2.1"))[0] == 409
    assert state() == before
