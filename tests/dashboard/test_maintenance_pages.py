"""The console's host maintenance and headroom pages, through the test
client on the servers' small cloud (Corral's own placement in process,
transactional database): the host page's Maintenance card previews the
dry-run plan (changing nothing) before a Confirm starts the job; the job
page and its polled fragment show progress and per-server rows; readers
see but cannot start; the aggregate and zone headroom against a
hand-computed case, and when placement cannot be read."""

import re
import time

import pytest

from aggregates.hosts.models import Service
from aggregates.maintenance.models import MaintenanceJob
from aggregates.servers.models import Server
from tests.plugins.cloud import EXACT, cli_body

V = "2.100"


@pytest.fixture(autouse=True)
def maintenance_settings(settings):
    settings.MAINTENANCE_CONCURRENCY = 4
    settings.MAINTENANCE_LEASE_SECONDS = 60
    settings.ENABLED_FILTERS = ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]


def boot_on(api, flavor, image, host, count=1, name="vm"):
    body = cli_body(flavor, image, name=name, zone=f"nova:{host}")
    body["server"]["min_count"] = body["server"]["max_count"] = count
    response = api.post("/servers", body, version=V)
    assert response.status_code == 202, response.content
    servers = list(Server.objects.filter(host=host, name__startswith=name).order_by("launch_index"))
    assert len(servers) == count and all(s.vm_state == "active" for s in servers)
    return servers


def wait_finished(job_uuid, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        job = MaintenanceJob.objects.get(uuid=job_uuid)
        if job.is_finished or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def text(response):
    """The page's text, tags dropped and white space folded."""
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def rack(cloud, admin_api):
    """A, B, C in aggregate rack1 (D outside); two servers on A."""
    cloud.hosts("A", "B", "C", "D")
    cloud.aggregate("rack1", ["A", "B", "C"])
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    return boot_on(admin_api, flavor, image, "A", count=2)


def start_form(**extra):
    return {"action": "start", "reason": "firmware", "strategy": "live", "prefer_aggregate_peers": "on", **extra}


def test_preview_changes_nothing_and_shows_targets(cloud, admin_api, admin_client):
    servers = rack(cloud, admin_api)
    page = admin_client.get("/hosts/A/")
    body = page.content.decode()
    assert 'id="maintenance"' in body and 'id="maintenance-form"' in body
    assert "not in maintenance" in body and "Preview start maintenance" in body
    assert 'name="confirm"' not in body

    response = admin_client.post("/hosts/A/maintenance/", start_form())
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="maintenance-plan"' in body and "dry run: nothing has changed" in body
    assert "2 of 2" in text(response)
    rows = re.findall(r'<tr class="plan-moves">.*?</tr>', body, re.S)
    assert len(rows) == 2
    targets = {re.search(r"/hosts/(\w)/", row).group(1) for row in rows}
    assert targets <= {"B", "C"}  # aggregate peers first
    assert all(s.name in body for s in servers)
    # The Confirm form carries the previewed options.
    confirm = re.search(r'<form[^>]*id="maintenance-confirm".*?</form>', body, re.S).group(0)
    for field in ('name="confirm" value="1"', 'name="reason" value="firmware"', 'name="prefer_aggregate_peers"'):
        assert field in confirm
    assert 'data-canonical-url="/hosts/A/"' in body  # a refresh reloads the page, never re-posts
    # Nothing changed.
    assert not MaintenanceJob.objects.exists()
    assert not Service.objects.get(host="A", binary="nova-compute").disabled
    assert set(Server.objects.values_list("host", flat=True)) == {"A"}


def test_confirm_starts_the_job_and_the_job_page_shows_it(cloud, admin_api, admin_client):
    servers = rack(cloud, admin_api)
    response = admin_client.post("/hosts/A/maintenance/", start_form(confirm="1"))
    job = MaintenanceJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/maintenance/jobs/{job.uuid}/"
    assert (job.host, job.action, job.reason, job.total) == ("A", "start", "firmware", 2)
    assert Service.objects.get(host="A", binary="nova-compute").disabled

    page = admin_client.get(response["Location"])
    body = page.content.decode()
    assert "Maintenance of A" in body and "started: 2 server(s) to move" in body
    assert f'data-poll-url="/maintenance/jobs/{job.uuid}/progress/"' in body
    assert "dashboard/precache.js" in body

    job = wait_finished(job.uuid)
    assert job.status == "completed"
    fragment = admin_client.get(f"/maintenance/jobs/{job.uuid}/progress/").content.decode()
    assert "<html" not in fragment
    assert 'data-finished="1"' in fragment and 'data-percent="100"' in fragment
    assert "2 of 2 servers done (100%)" in fragment
    rows = re.findall(r'<tr data-server="([^"]+)" data-status="(\w+)">(.*?)</tr>', fragment, re.S)
    assert {(uuid, status) for uuid, status, _ in rows} == {(str(s.uuid), "moved") for s in servers}
    for server in servers:
        target = Server.objects.get(pk=server.pk).host
        row = next(cells for uuid, _, cells in rows if uuid == str(server.uuid))
        assert f'href="/hosts/{target}/"' in row and 'href="/hosts/A/"' in row
        assert target in ("B", "C")
    decisions = re.findall(r'href="(/scheduling/decisions/[^"]+/)"', fragment)
    assert len(decisions) == 2 and all(admin_client.get(link).status_code == 200 for link in decisions)

    # The host page now offers Stop (with "move back"), previewed then confirmed.
    body = admin_client.get("/hosts/A/").content.decode()
    assert "in maintenance" in body and "Preview stop maintenance" in body and 'name="rebalance"' in body
    stop = {"action": "stop", "strategy": "live", "rebalance": "on"}
    preview = admin_client.post("/hosts/A/maintenance/", stop)
    assert preview.status_code == 200 and "Plan of the stop" in preview.content.decode()
    assert re.findall(r'<tr class="plan-moves">.*?/hosts/(\w)/.*?</tr>', preview.content.decode(), re.S) == ["A", "A"]
    assert MaintenanceJob.objects.count() == 1
    response = admin_client.post("/hosts/A/maintenance/", {**stop, "confirm": "1"})
    back = MaintenanceJob.objects.get(action="stop")
    assert response["Location"] == f"/maintenance/jobs/{back.uuid}/"
    assert wait_finished(back.uuid).status == "completed"
    assert set(Server.objects.values_list("host", flat=True)) == {"A"}

    listing = admin_client.get("/maintenance/jobs/").content.decode()
    assert str(job.uuid) in listing and str(back.uuid) in listing
    assert str(job.uuid) not in admin_client.get("/maintenance/jobs/?status=failed").content.decode()
    assert str(job.uuid) not in admin_client.get("/maintenance/jobs/?host=B").content.decode()
    assert "/maintenance/jobs/" in admin_client.get("/hosts/").content.decode()  # linked from the Hosts page


def test_refusals_show_beside_the_form(cloud, admin_api, admin_client):
    rack(cloud, admin_api)
    response = admin_client.post("/hosts/A/maintenance/", start_form(strategy="warp"))
    assert response.status_code == 400 and "warp" in response.content.decode()
    response = admin_client.post("/hosts/A/maintenance/", {"action": "stop", "strategy": "live"})
    assert response.status_code == 409 and "Host A is not in maintenance." in response.content.decode()
    assert admin_client.post("/hosts/nowhere/maintenance/", start_form()).status_code == 404
    assert admin_client.get(f"/maintenance/jobs/{'0' * 8}-0000-0000-0000-{'0' * 12}/").status_code == 404
    assert not MaintenanceJob.objects.exists()


def test_readers_see_the_card_but_cannot_start(cloud, admin_api, reader_client):
    rack(cloud, admin_api)
    body = reader_client.get("/hosts/A/").content.decode()
    assert 'id="maintenance"' in body and "not in maintenance" in body
    assert 'id="maintenance-form"' not in body and "/hosts/A/maintenance/" not in body
    assert reader_client.post("/hosts/A/maintenance/", start_form()).status_code == 403
    assert reader_client.post("/hosts/A/maintenance/", start_form(confirm="1")).status_code == 403
    assert not MaintenanceJob.objects.exists()
    assert reader_client.get("/maintenance/jobs/").status_code == 200


def memory_cloud(cloud, admin_api):
    """H1..H4 of 8 VCPU / 8192 MB / 100 GB; 4096 MB servers: two on H1, one on each other host.
    Losing H1: its 2 servers fit on H2-H4 (4096 MB free each). Losing H1 and H2: 3 servers for
    the 2 x 4096 MB free on H3 and H4, so one is stranded, for lack of MEMORY_MB only."""
    cloud.hosts("H1", "H2", "H3", "H4", vcpus=8, memory_mb=8192, local_gb=100, **EXACT)
    aggregate = cloud.aggregate("agg", ["H1", "H2", "H3", "H4"], zone="z1")
    flavor, image = cloud.flavor(name="mem", vcpus=1, ram=4096, disk=10), cloud.image()
    boot_on(admin_api, flavor, image, "H1", count=2, name="one")
    for host in ("H2", "H3", "H4"):
        boot_on(admin_api, flavor, image, host, name=f"on-{host}")
    return aggregate


def test_headroom_sentence_and_table(cloud, admin_api, admin_client):
    aggregate = memory_cloud(cloud, admin_api)
    page = admin_client.get(f"/aggregates/{aggregate.id}/").content.decode()
    assert f'data-headroom-url="/maintenance/headroom/?aggregate={aggregate.id}"' in page
    assert "dashboard/maintenance.js" in page

    fragment = admin_client.get(f"/maintenance/headroom/?aggregate={aggregate.id}", HTTP_X_CONSOLE_FRAGMENT="headroom")
    assert fragment.status_code == 200 and "<html" not in fragment.content.decode()
    summary = fragment.context["summary"]
    (stranded,) = summary["stranded"]
    assert stranded["move"].source in ("H1", "H2") and stranded["why"] == "no host has room for MEMORY_MB"
    assert summary["sentence"] == (
        f"Can lose 1 of 4 hosts; losing 2 (H1, H2) strands 1 server: {stranded['move'].name} "
        "(no host has room for MEMORY_MB)."
    )
    assert summary["sentence"] in text(fragment)
    figures = {r.resource_class: (r.capacity, r.used, r.free_after) for r in summary["headroom"].resources}
    assert figures == {"VCPU": (16, 5, 11), "MEMORY_MB": (16384, 20480, -4096), "DISK_GB": (200, 50, 150)}
    assert re.search(r'data-class="MEMORY_MB">.*?badge bad">-4096<', fragment.content.decode(), re.S)

    # The zone the aggregate makes: the same hosts, the same answer; on the zones page too.
    zones = admin_client.get("/zones/").content.decode()
    assert 'data-headroom-url="/maintenance/headroom/?zone=z1"' in zones and "dashboard/maintenance.js" in zones
    zone = admin_client.get("/maintenance/headroom/?zone=z1")
    assert zone.status_code == 200 and "<html" in zone.content.decode()  # without the header: a page
    assert zone.context["summary"]["sentence"] == summary["sentence"]


def test_headroom_of_a_set_that_fits_and_of_a_lone_host(cloud, admin_api, admin_client):
    cloud.hosts("A", "B", "C", vcpus=8, memory_mb=8192, local_gb=100, **EXACT)
    aggregate = cloud.aggregate("roomy", ["A", "B", "C"])
    lone = cloud.aggregate("lone", ["A"])
    flavor, image = cloud.flavor(vcpus=1, ram=1024, disk=10), cloud.image()
    boot_on(admin_api, flavor, image, "A")
    summary = admin_client.get(f"/maintenance/headroom/?aggregate={aggregate.id}").context["summary"]
    assert summary["sentence"] == "Can lose 2 of 3 hosts: the servers of all but one would fit on the last."
    summary = admin_client.get(f"/maintenance/headroom/?aggregate={lone.id}").context["summary"]
    assert "at least one must remain" in summary["problem"]
    assert admin_client.get("/maintenance/headroom/?aggregate=999").status_code == 404
    assert admin_client.get("/maintenance/headroom/").status_code == 404


def test_headroom_says_when_placement_cannot_be_read(admin_client, make_host, system, settings):
    from aggregates.host_aggregates import services as aggregates

    settings.PLACEMENT_URL = "http://127.0.0.1:9/placement"  # nothing listens there
    make_host("P1")
    make_host("P2")
    aggregate = aggregates.create_aggregate(system, "dark")
    for host in ("P1", "P2"):
        aggregates.add_host(system, aggregate.id, host)
    response = admin_client.get(f"/maintenance/headroom/?aggregate={aggregate.id}", HTTP_X_CONSOLE_FRAGMENT="headroom")
    assert response.status_code == 200
    assert "Placement could not be read, so the headroom is unknown" in response.content.decode()


def test_short_reasons_name_the_missing_classes():
    from aggregates.maintenance.headroom import ResourceHeadroom
    from aggregates.maintenance.planning import PlannedMove
    from dashboard.maintenance_views import short_reason

    wanted = {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}
    figures = {
        rc: ResourceHeadroom(rc, capacity=100000, used=0, lost_capacity=0, moved=0) for rc in ("VCPU", "MEMORY_MB")
    }
    full = PlannedMove(
        "u1",
        "db-1",
        "B",
        "m1",
        wanted,
        reason="No valid host was found: ... once the servers planned before it are placed: "
        "C (VCPU 54, MEMORY_MB 1536, DISK_GB 300 free), D (VCPU 1, MEMORY_MB 1024, DISK_GB 300 free)",
        rejected_by={"planned_usage": 2},
    )
    assert short_reason(full, figures) == "no host it may go to has room for MEMORY_MB"
    figures["MEMORY_MB"] = ResourceHeadroom("MEMORY_MB", capacity=1000, used=900, lost_capacity=0, moved=0)
    assert short_reason(full, figures) == "no host has room for MEMORY_MB"
    refused = PlannedMove("u2", "pinned", "B", "m1", wanted, reason="No valid host", rejected_by={"AZFilter": 3})
    assert short_reason(refused, figures) == "refused by AZFilter"
