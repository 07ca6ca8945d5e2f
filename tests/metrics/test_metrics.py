"""GET /metrics: who may read it, and what it says (Prometheus' text format):
what processes counted (HTTP requests by route template, placement requests
by operation, scheduling, Celery tasks) and what the database holds, read
at scrape time in a fixed number of queries."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from aggregates.hosts.models import Service
from aggregates.maintenance.models import MaintenanceJob
from aggregates.mirroring.models import PlacementMirrorRequest, ProviderSyncRequest, ReconciliationRun
from aggregates.placement_client import PlacementClient, PlacementUnreachable, ProviderNotFound
from aggregates.precache.models import ImageCacheJob
from tests.plugins.api import add_host, create_aggregate
from tests.plugins.cloud import cli_body


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_ENABLED = True
    settings.METRICS_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]


def scrape(token=None, address="127.0.0.1"):
    headers = {"X-Auth-Token": token} if token else {}
    return Client(REMOTE_ADDR=address).get("/metrics", headers=headers)


def samples(response=None):
    """{(name, frozenset(labels)): value} of one scrape."""
    response = response or scrape()
    assert response.status_code == 200, response.content
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(found, name, **labels):
    return found.get((name, frozenset(labels.items())), 0.0)


def matching(found, name, **labels):
    """The sum over the series of ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in found.items() if n == name and wanted <= ls)


# --- who may read it -----------------------------------------------------------


def test_off_unless_enabled(db, settings, admin_api):
    settings.METRICS_ENABLED = False
    assert scrape().status_code == 404
    assert scrape(admin_api.token).status_code == 404


def test_the_allowed_networks_read_it_and_others_need_an_admin_token(db, metrics_on, admin_api, member_api):
    loopback = scrape()
    assert loopback.status_code == 200
    assert loopback["Content-Type"].startswith("text/plain; version=0.0.4")
    assert scrape(address="::1").status_code == 200
    assert scrape(address="10.1.2.3").status_code == 403
    assert scrape(member_api.token, address="10.1.2.3").status_code == 403
    assert scrape("not-a-token", address="10.1.2.3").status_code == 403
    assert scrape(admin_api.token, address="10.1.2.3").status_code == 200


def test_the_networks_are_a_setting(db, metrics_on, settings):
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8", "2001:db8::/32"]
    assert scrape(address="10.200.0.1").status_code == 200
    assert scrape(address="2001:db8::7").status_code == 200
    assert scrape(address="::ffff:10.0.0.9").status_code == 200
    assert scrape(address="127.0.0.1").status_code == 403


def test_only_get_and_head(db, metrics_on):
    assert Client().post("/metrics").status_code == 405


# --- what processes count ------------------------------------------------------


def test_http_requests_are_counted_by_route_template_never_by_raw_path(db, metrics_on, admin_api):
    aggregate = create_aggregate(admin_api, "rack-1")
    route = "/compute/v2.1/os-aggregates/<str:aggregate_id>"
    before = samples()
    assert admin_api.get(f"/os-aggregates/{aggregate['id']}").status_code == 200
    assert admin_api.get("/os-aggregates/999999").status_code == 404
    Client().get("/no/such/page/at/all")
    Client().get("/compute/v3")  # the compute prefix's own not-found route, a regular expression
    after = samples()
    count = "corral_http_request_duration_seconds_count"
    assert (
        value(after, count, route=route, method="GET", status="200")
        == value(before, count, route=route, method="GET", status="200") + 1
    )
    assert (
        value(after, count, route=route, method="GET", status="404")
        == value(before, count, route=route, method="GET", status="404") + 1
    )
    assert value(after, count, route="unmatched", method="GET", status="404") >= 1
    assert value(after, count, route="^compute/", method="GET", status="404") >= 1
    assert value(after, count, route="/compute/", method="GET", status="404") == 0
    routes = {dict(labels)["route"] for (name, labels) in after if name == count}
    assert not any(f"/{aggregate['id']}" in r or "999999" in r or "no/such" in r for r in routes)


def test_placement_requests_are_counted_by_operation_with_uuids_left_out(db, metrics_on, settings):
    settings.PLACEMENT_URL = ""  # Corral's own placement, in process
    before = samples()
    placement = PlacementClient()
    placement.list_providers()
    with pytest.raises(ProviderNotFound):
        placement.get_provider(uuid.uuid4())
    after = samples()
    count = "corral_placement_request_duration_seconds_count"
    listed = {"operation": "GET /resource_providers", "status": "200"}
    missing = {"operation": "GET /resource_providers/{uuid}", "status": "404"}
    assert value(after, count, **listed) == value(before, count, **listed) + 1
    assert value(after, count, **missing) == value(before, count, **missing) + 1


def test_an_unreachable_placement_is_counted_as_such(db, metrics_on, settings):
    settings.PLACEMENT_URL = "http://127.0.0.1:9/placement"
    before = samples()
    with pytest.raises(PlacementUnreachable):
        PlacementClient().list_providers()
    after = samples()
    labels = {"operation": "GET /resource_providers", "status": "unreachable"}
    count = "corral_placement_request_duration_seconds_count"
    assert value(after, count, **labels) == value(before, count, **labels) + 1


def test_scheduling_is_timed_and_no_valid_host_counted_by_stage_and_filter(cloud, metrics_on, admin_api):
    cloud.host("h1", vcpus=2)
    flavor, image, huge = cloud.flavor("small", vcpus=1), cloud.image(), cloud.flavor("huge", vcpus=64)
    before = samples()
    for body in (cli_body(flavor, image), cli_body(huge, image)):
        assert admin_api.post("/servers", body, version="2.100").status_code == 202
    after = samples()
    decisions = "corral_scheduler_decision_seconds_count"
    assert value(after, decisions) == value(before, decisions) + 2
    failures = "corral_scheduler_no_valid_host_total"
    assert matching(after, failures, stage="placement") == matching(before, failures, stage="placement") + 1


def test_celery_tasks_are_timed_and_their_failures_counted(db, metrics_on):
    from config import celery_app

    @celery_app.task(name="tests.metrics.fails")
    def fails():
        raise RuntimeError("boom")

    drain = celery_app.tasks["corral.mirroring.drain_mirror_requests"]
    before = samples()
    drain.apply()
    fails.apply()
    after = samples()
    duration = "corral_celery_task_duration_seconds_count"
    ok = {"task": drain.name, "state": "SUCCESS"}
    failed = {"task": "tests.metrics.fails", "state": "FAILURE"}
    assert value(after, duration, **ok) == value(before, duration, **ok) + 1
    assert value(after, duration, **failed) == value(before, duration, **failed) + 1
    failures = "corral_celery_task_failures_total"
    assert value(after, failures, task="tests.metrics.fails") == value(before, failures, task="tests.metrics.fails") + 1


# --- what the database holds ---------------------------------------------------


def test_the_outbox_pending_oldest_and_failed(db, metrics_on):
    now = timezone.now()
    common = {"aggregate_uuid": uuid.uuid4(), "aggregate_name": "a", "action": PlacementMirrorRequest.ADD}
    PlacementMirrorRequest.objects.create(**common, created_at=now - timedelta(seconds=600))
    PlacementMirrorRequest.objects.create(**common, created_at=now - timedelta(seconds=5))
    PlacementMirrorRequest.objects.create(**common, status=PlacementMirrorRequest.FAILED)
    PlacementMirrorRequest.objects.create(**common, status=PlacementMirrorRequest.DONE)
    ProviderSyncRequest.objects.create(
        node_uuid=uuid.uuid4(), hypervisor_hostname="n", host="n", action=ProviderSyncRequest.SYNC
    )
    found = samples()
    assert value(found, "corral_mirror_outbox_pending", outbox="aggregates") == 2
    assert value(found, "corral_mirror_outbox_failed", outbox="aggregates") == 1
    assert 600 <= value(found, "corral_mirror_outbox_oldest_seconds", outbox="aggregates") < 700
    assert value(found, "corral_mirror_outbox_pending", outbox="providers") == 1
    assert value(found, "corral_mirror_outbox_failed", outbox="providers") == 0
    assert value(found, "corral_database_up") == 1


def test_the_last_reconciliations_drift(db, metrics_on):
    earlier = timezone.now() - timedelta(minutes=20)
    ReconciliationRun.objects.create(trigger="schedule", finished_at=earlier, missing_found=9, stale_found=9)
    last = ReconciliationRun.objects.create(
        trigger="schedule", finished_at=earlier + timedelta(minutes=10), missing_found=3, stale_found=1
    )
    ReconciliationRun.objects.create(trigger="schedule", missing_found=50)  # still running
    found = samples()
    assert value(found, "corral_reconcile_drift", kind="missing") == 3
    assert value(found, "corral_reconcile_drift", kind="stale") == 1
    assert value(found, "corral_reconcile_last_finished_timestamp_seconds") == pytest.approx(
        last.finished_at.timestamp()
    )


def test_jobs_by_kind_and_state_and_the_running_ones_progress(db, metrics_on):
    aggregate = {"aggregate_id": 1, "aggregate_uuid": uuid.uuid4(), "aggregate_name": "a"}
    ImageCacheJob.objects.create(**aggregate, status="running", total=10, done=4)
    ImageCacheJob.objects.create(**aggregate, status="running", total=5, done=5)
    ImageCacheJob.objects.create(**aggregate, status="failed", total=3, done=1)
    MaintenanceJob.objects.create(host="h1", action="drain", status="queued")
    found = samples()
    assert value(found, "corral_jobs", kind="precache", state="running") == 2
    assert value(found, "corral_jobs", kind="precache", state="failed") == 1
    assert value(found, "corral_jobs", kind="precache", state="completed") == 0
    assert value(found, "corral_jobs", kind="maintenance", state="queued") == 1
    assert value(found, "corral_jobs_running_items", kind="precache", count="done") == 9
    assert value(found, "corral_jobs_running_items", kind="precache", count="total") == 15
    assert value(found, "corral_jobs_running_items", kind="maintenance", count="total") == 0


def test_services_by_binary_zone_and_state_by_the_hosts_up_rule(db, metrics_on, make_host, admin_api, settings):
    for host in ("h1", "h2", "h3", "h4"):
        make_host(host)
    zone = create_aggregate(admin_api, "rack-1", zone="z1")
    add_host(admin_api, zone, "h1")
    add_host(admin_api, zone, "h2")
    long_ago = timezone.now() - timedelta(seconds=settings.SERVICE_DOWN_TIME + 60)
    Service.objects.filter(host="h2").update(last_seen_up=long_ago)
    Service.objects.filter(host="h3").update(disabled=True, disabled_reason="maintenance")
    found = samples()
    compute = "nova-compute"
    assert value(found, "corral_services", binary=compute, zone="z1", state="up") == 1
    assert value(found, "corral_services", binary=compute, zone="z1", state="down") == 1
    assert value(found, "corral_services", binary=compute, zone="nova", state="disabled") == 1
    assert value(found, "corral_services", binary=compute, zone="nova", state="up") == 1


def test_a_scrape_reads_the_database_in_a_fixed_number_of_queries(db, metrics_on, make_host, admin_api):
    def queries_of_a_scrape():
        with CaptureQueriesContext(connection) as captured:
            samples()
        return len(captured)

    make_host("h0")
    few = queries_of_a_scrape()
    zone = create_aggregate(admin_api, "rack-1", zone="z1")
    for n in range(1, 25):
        make_host(f"h{n}")
        add_host(admin_api, zone, f"h{n}")
    ImageCacheJob.objects.create(aggregate_id=1, aggregate_uuid=uuid.uuid4(), aggregate_name="a", status="running")
    assert queries_of_a_scrape() == few
    assert few <= 10


@pytest.mark.django_db(transaction=True)
def test_a_scrape_while_the_database_is_down_says_so_and_keeps_the_counters(metrics_on, monkeypatch):
    from django.db import connections

    monkeypatch.setitem(connections.settings["default"], "NAME", "/nonexistent-directory/corral.sqlite3")
    connections["default"].close()
    Client().get("/healthcheck")  # counted, whatever the database
    found = samples()
    assert value(found, "corral_database_up") == 0
    assert not any(name.startswith("corral_services") for name, _ in found)
    assert any(name.startswith("corral_http_request_duration_seconds") for name, _ in found)
    assert scrape(address="10.1.2.3").status_code == 403  # an admin cannot be told apart: refused, not a 500
