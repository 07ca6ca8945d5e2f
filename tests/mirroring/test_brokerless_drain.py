"""Without a broker (Celery eager, gunicorn alone: no beat, no drain thread),
the rows that failed are still drained: after a later commit's rows are
applied, the same after-commit hook drains the due rows, rate-limited, in
process (PLACEMENT_URL empty)."""

import os
import time
from datetime import timedelta

import pytest
import requests
from django.utils import timezone

from aggregates import after_commit
from aggregates.mirroring import outbox
from aggregates.mirroring.models import PlacementMirrorRequest
from aggregates.placement_client import PlacementClient
from tests.plugins.api import add_host, create_aggregate
from tests.plugins.upstream_placement import free_port
from tests.process_stack import VENV_BIN, Processes, serve, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def in_process(settings, monkeypatch):
    """Corral's own placement, in process; a fresh rate limit."""
    settings.PLACEMENT_URL = ""
    monkeypatch.setattr(outbox.DRAIN_WITHOUT_BROKER, "last", float("-inf"))
    assert after_commit.without_broker()
    return PlacementClient()


def aggregates_of(client, node):
    return client.provider_aggregates(node.uuid)[0]


def _failed_row(admin_api, settings, aggregate, host):
    """Add ``host`` while placement is unreachable: the row stays pending."""
    settings.PLACEMENT_URL = f"http://127.0.0.1:{free_port()}"
    add_host(admin_api, aggregate, host)
    row = PlacementMirrorRequest.objects.get(host=host)
    assert row.status == PlacementMirrorRequest.PENDING and row.attempts == 1
    settings.PLACEMENT_URL = ""
    return row


def test_a_later_write_drains_the_rows_that_failed(admin_api, make_host, settings, in_process):
    node1, _node2 = make_host("h1"), make_host("h2")
    aggregate = create_aggregate(admin_api, "agg1")
    row = _failed_row(admin_api, settings, aggregate, "h1")
    PlacementMirrorRequest.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    outbox.DRAIN_WITHOUT_BROKER.reset()

    add_host(admin_api, aggregate, "h2")  # its own row, then the drain

    row.refresh_from_db()
    assert row.status == PlacementMirrorRequest.DONE
    assert not PlacementMirrorRequest.objects.filter(status=PlacementMirrorRequest.PENDING).exists()
    assert aggregates_of(in_process, node1) == {aggregate["uuid"]}


def test_the_drain_is_rate_limited_and_waits_for_the_backoff(admin_api, make_host, settings, in_process):
    make_host("h1"), make_host("h2"), make_host("h3")
    aggregate = create_aggregate(admin_api, "agg1")
    row = _failed_row(admin_api, settings, aggregate, "h1")
    # Not due yet (backoff): a write leaves it pending.
    outbox.DRAIN_WITHOUT_BROKER.reset()
    add_host(admin_api, aggregate, "h2")
    row.refresh_from_db()
    assert row.status == PlacementMirrorRequest.PENDING
    # Due, but this process drained a moment ago: still pending.
    PlacementMirrorRequest.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    outbox.DRAIN_WITHOUT_BROKER.last = time.monotonic()
    add_host(admin_api, aggregate, "h3")
    row.refresh_from_db()
    assert row.status == PlacementMirrorRequest.PENDING
    # Once the interval is over, it is drained.
    later = outbox.DRAIN_WITHOUT_BROKER.last + outbox.EAGER_DRAIN_INTERVAL + 1
    assert outbox.DRAIN_WITHOUT_BROKER.run_if_due(now=later) is not None
    row.refresh_from_db()
    assert row.status == PlacementMirrorRequest.DONE


def test_no_drain_with_a_broker(admin_api, make_host, settings, in_process, monkeypatch):
    make_host("h1")
    aggregate = create_aggregate(admin_api, "agg1")
    row = _failed_row(admin_api, settings, aggregate, "h1")
    PlacementMirrorRequest.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    monkeypatch.setattr(after_commit, "without_broker", lambda: False)
    assert outbox.DRAIN_WITHOUT_BROKER.run_if_due() is None  # the beat's periodic drain does it there
    row.refresh_from_db()
    assert row.status == PlacementMirrorRequest.PENDING


# --- a real gunicorn without a broker ------------------------------------------------


@pytest.fixture
def brokerless_server(tmp_path):
    """gunicorn with ONE sync worker, no broker, PLACEMENT_URL empty, on a
    SQLite file. One worker makes a placement call over HTTP to itself
    impossible: it would wait for itself until the read timeout."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "AUTH_STRATEGY": "noauth2",
        "PLACEMENT_URL": "",
        "PLACEMENT_READ_TIMEOUT": "5",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)
    processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
    processes.register_host("h1")
    try:
        yield serve(processes, port)
    finally:
        processes.stop_all()


def test_a_single_worker_without_broker_mirrors_in_process(brokerless_server):
    url = brokerless_server
    compute = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.41"}
    placement = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.19"}
    providers = requests.get(url + "/placement/resource_providers?name=h1", headers=placement, timeout=30).json()
    (provider,) = providers["resource_providers"]
    aggregate = requests.post(
        url + "/compute/v2.1/os-aggregates", json={"aggregate": {"name": "agg1"}}, headers=compute, timeout=30
    ).json()["aggregate"]
    response = requests.post(
        url + f"/compute/v2.1/os-aggregates/{aggregate['id']}/action",
        json={"add_host": {"host": "h1"}},
        headers=compute,
        timeout=30,
    )
    assert response.status_code == 200, response.text
    # Applied by the only worker, in process (over HTTP it would wait for itself).
    mirrored = wait_until(
        lambda: requests.get(
            url + f"/placement/resource_providers/{provider['uuid']}/aggregates", headers=placement, timeout=30
        ).json()["aggregates"],
        timeout=30,
        what="the add_host to reach placement",
    )
    assert mirrored == [aggregate["uuid"]]


# --- placement being this same server, over HTTP ---------------------------------------


@pytest.fixture
def server_that_is_its_own_placement(tmp_path):
    """gunicorn with ONE sync worker, no broker, and PLACEMENT_URL naming
    that same server over HTTP (as an operator copying Nova's configuration
    would set it): every placement call a request makes waits for the
    worker that is busy making it."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "FOLLOW_UP_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "AUTH_STRATEGY": "noauth2",
        "PLACEMENT_URL": f"http://127.0.0.1:{port}/placement",
        "PLACEMENT_AUTH_TOKEN": "admin",
        "PLACEMENT_READ_TIMEOUT": "5",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)
    processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
    try:
        url = serve(processes, port)
        # Registered by a process of its own: its provider reaches the server over HTTP.
        processes.register_host("h1")
        yield url
    finally:
        processes.stop_all()


def test_placement_being_this_same_server_costs_the_operator_no_wait(server_that_is_its_own_placement):
    url = server_that_is_its_own_placement
    compute = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.41"}
    placement = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.19"}
    provider = wait_until(
        lambda: requests.get(url + "/placement/resource_providers?name=h1", headers=placement, timeout=30).json()[
            "resource_providers"
        ],
        what="h1's provider",
    )[0]
    aggregate = requests.post(
        url + "/compute/v2.1/os-aggregates", json={"aggregate": {"name": "agg1"}}, headers=compute, timeout=30
    ).json()["aggregate"]

    started = time.monotonic()
    response = requests.post(
        url + f"/compute/v2.1/os-aggregates/{aggregate['id']}/action",
        json={"add_host": {"host": "h1"}},
        headers=compute,
        timeout=30,
    )
    took = time.monotonic() - started

    assert response.status_code == 200, response.text
    # Not the 5 s read timeout of a call waiting for its own worker: the
    # follow-up wait (0.25 s) and the request itself, on a busy machine.
    assert took < 2.5, took
    # The worker applies the row once it is free to answer its own call.
    mirrored = wait_until(
        lambda: requests.get(
            url + f"/placement/resource_providers/{provider['uuid']}/aggregates", headers=placement, timeout=30
        ).json()["aggregates"],
        timeout=30,
        what="the add_host to reach placement",
    )
    assert mirrored == [aggregate["uuid"]]


def test_a_request_asking_its_own_server_s_placement_is_answered_in_process(server_that_is_its_own_placement):
    """The admin's health details ask placement whether it answers: with
    PLACEMENT_URL naming the address the request came to, the call is made in
    process, not over HTTP to this one worker, busy with the request (which
    waited out the check's timeout and called placement degraded)."""
    url = server_that_is_its_own_placement
    started = time.monotonic()
    response = requests.get(
        url + "/healthcheck", headers={"X-Auth-Token": "admin", "Accept": "application/json"}, timeout=30
    )
    took = time.monotonic() - started
    assert response.status_code == 200, response.text
    placement = next(check for check in response.json()["reasons"] if check["class"] == "placement")
    assert placement["state"] == "ok", placement
    assert took < 1.5, took
