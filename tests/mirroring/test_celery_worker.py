"""End to end through a real broker: a Corral server, a ``celery -A config
worker`` and upstream Placement, each its own process, sharing a SQLite file
(an in-memory test database, as live_server uses, is invisible to a worker
process). Skipped when Redis does not answer on 127.0.0.1:6379."""

import os
import uuid

import pytest
import requests

from tests.plugins.tiers import many_connections
from tests.plugins.upstream_placement import free_port
from tests.process_stack import VENV_BIN, Processes, redis_answers, serve, wait_until

REDIS_URL = "redis://127.0.0.1:6379/15"


pytestmark = [
    pytest.mark.skipif(not redis_answers(), reason="Redis is not reachable on 127.0.0.1:6379"),
    pytest.mark.processes,
    # Both tests use Redis database 15 (and many database connections): one at a time.
    many_connections,
]


@pytest.fixture
def corral_with_worker(upstream_placement, tmp_path):
    """A Corral server (noauth2) and a Celery worker on Redis db 15; yields the server's URL."""
    port = free_port()
    env = {
        **os.environ,
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "AUTH_STRATEGY": "noauth2",
        "CELERY_BROKER_URL": REDIS_URL,
        "PLACEMENT_URL": upstream_placement.url,
        "PLACEMENT_AUTH_TOKEN": "admin",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)
    processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
    processes.run(str(VENV_BIN / "celery"), "-A", "config", "purge", "-f")
    processes.start("worker", str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-l", "info")
    try:
        url = serve(processes, port)
        yield url, processes
    finally:
        processes.stop_all()
        upstream_placement.delete_all_providers()


def test_registration_and_add_host_reach_placement_through_the_worker(corral_with_worker, upstream_placement):
    url, processes = corral_with_worker
    processes.register_host("h1")
    wait_until(lambda: provider_named(upstream_placement, "h1"), what="the worker to create the provider of h1")
    provider = provider_named(upstream_placement, "h1")["uuid"]
    assert (
        upstream_placement.call("GET", f"/resource_providers/{provider}/inventories")["inventories"]["VCPU"]["total"]
        == 4
    )
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.41"}
    response = requests.post(
        url + "/compute/v2.1/os-aggregates", json={"aggregate": {"name": "agg1"}}, headers=headers, timeout=10
    )
    aggregate = response.json()["aggregate"]
    global_id = f"req-{uuid.uuid4()}"
    response = requests.post(
        url + f"/compute/v2.1/os-aggregates/{aggregate['id']}/action",
        json={"add_host": {"host": "h1"}},
        headers={**headers, "X-OpenStack-Request-ID": global_id},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    wait_until(
        lambda: upstream_placement.aggregates_of(provider) == {aggregate["uuid"]}, what="the worker to mirror add_host"
    )
    worker_log = (processes.workdir / "worker.log").read_text()
    assert "corral.mirroring.apply_provider_request" in worker_log
    assert "corral.mirroring.apply_mirror_request" in worker_log
    # The request's ids crossed the broker in the task's headers: the worker's line names both.
    local_id = response.headers["X-OpenStack-Request-ID"]
    (done,) = [line for line in worker_log.splitlines() if "Placement mirroring done: adding host h1" in line]
    assert f"[{local_id} {global_id} " in done
    # And upstream placement, sent the global id, logged it as its caller's.
    assert global_id in (upstream_placement.workdir / "server.log").read_text()


def provider_named(placement, name):
    providers = placement.call("GET", f"/resource_providers?name={name}")["resource_providers"]
    return providers[0] if providers else None


def compute_call(url, method, path, body=None):
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.41"}
    response = requests.request(method, url + "/compute/v2.1" + path, json=body, headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    return response.json() if response.content else None


def test_remove_delete_and_a_placement_outage_through_the_worker(corral_with_worker, upstream_placement):
    url, processes = corral_with_worker
    processes.register_host("h1")
    wait_until(lambda: provider_named(upstream_placement, "h1"), what="the worker to create the provider of h1")
    provider = provider_named(upstream_placement, "h1")["uuid"]
    keep = compute_call(url, "POST", "/os-aggregates", {"aggregate": {"name": "keep"}})["aggregate"]
    gone = compute_call(url, "POST", "/os-aggregates", {"aggregate": {"name": "gone"}})["aggregate"]
    for aggregate in (keep, gone):
        compute_call(url, "POST", f"/os-aggregates/{aggregate['id']}/action", {"add_host": {"host": "h1"}})
    wait_until(
        lambda: upstream_placement.aggregates_of(provider) == {keep["uuid"], gone["uuid"]},
        what="both aggregates on the provider",
    )

    # remove_host, then delete: the worker takes the association off again.
    compute_call(url, "POST", f"/os-aggregates/{gone['id']}/action", {"remove_host": {"host": "h1"}})
    compute_call(url, "DELETE", f"/os-aggregates/{gone['id']}")
    wait_until(
        lambda: upstream_placement.aggregates_of(provider) == {keep["uuid"]}, what="the worker to mirror remove_host"
    )

    # Placement stops: the operator's add_host still succeeds; the worker
    # retries with backoff and applies it once placement is back.
    late = compute_call(url, "POST", "/os-aggregates", {"aggregate": {"name": "late"}})["aggregate"]
    upstream_placement.stop()
    try:
        body = compute_call(url, "POST", f"/os-aggregates/{late['id']}/action", {"add_host": {"host": "h1"}})
        assert body["aggregate"]["hosts"] == ["h1"]
        wait_until(
            lambda: "Placement mirroring failed" in (processes.workdir / "worker.log").read_text(),
            what="the worker's warning",
        )
    finally:
        upstream_placement.start()
    wait_until(
        lambda: upstream_placement.aggregates_of(provider) == {keep["uuid"], late["uuid"]},
        timeout=90,
        what="the worker's retry after placement came back",
    )
