"""Maintenance runs on the servers' small cloud (Corral's own placement in
process), with helpers to boot servers onto a host through the API, to
start and stop a host's maintenance and to wait for its job."""

import time

import pytest

from aggregates.hosts.models import Service
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

V = "2.100"
ZERO = {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}


@pytest.fixture(autouse=True)
def maintenance_settings(settings):
    settings.MAINTENANCE_CONCURRENCY = 4
    settings.MAINTENANCE_LEASE_SECONDS = 60
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]


def boot_on(api, flavor, image, host, count=1, name="vm", zone="nova"):
    """``count`` servers forced onto ``host`` (the admin's zone:host form), all active."""
    body = cli_body(flavor, image, name=name, zone=f"{zone}:{host}")
    body["server"]["min_count"] = body["server"]["max_count"] = count
    response = api.post("/servers", body, version=V)
    assert response.status_code == 202, response.content
    servers = list(Server.objects.filter(host=host, name__startswith=name).order_by("launch_index"))
    assert len(servers) >= count and all(s.vm_state == "active" for s in servers), [s.fault for s in servers]
    return servers


def maintenance(api, host, action="start", version=V, **options):
    return api.post(f"/os-hosts/{host}/maintenance", {"maintenance": {"action": action, **options}}, version=version)


def wait_job(api, job_id, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        response = api.get(f"/os-maintenance-jobs/{job_id}", version=V)
        assert response.status_code == 200, response.content
        job = response.json()["job"]
        if job["status"] not in ("queued", "running") or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def started(api, host, **options):
    """Start maintenance and wait for its job to end; the job body."""
    response = maintenance(api, host, "start", **options)
    assert response.status_code == 202, response.content
    assert response.headers["Location"].endswith(f"/compute/v2.1/os-maintenance-jobs/{response.json()['job']['id']}")
    return wait_job(api, response.json()["job"]["id"])


def stopped(api, host, **options):
    response = maintenance(api, host, "stop", **options)
    assert response.status_code == 202, response.content
    return wait_job(api, response.json()["job"]["id"])


def hosts_of(servers):
    return {s.uuid: Server.objects.get(pk=s.pk).host for s in servers}


def usages(cloud, node):
    return {**ZERO, **cloud.usages(node.uuid)}


def disabled(host):
    service = Service.objects.get(host=host, binary="nova-compute")
    return service.disabled, service.disabled_reason


def fault(response):
    body = response.json()
    ((name, detail),) = body.items()
    return response.status_code, name, detail["message"]
