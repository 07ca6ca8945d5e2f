"""A worker killed mid-drain: the job is left running with an expired lease
and items pending, moved, or moving (the move done or not); the drain
resumes it, settles the moving ones from where their servers are and moves
the rest; every server ends either on its source or on its target, with its
allocation where it is. Too many attempts fail the job with the reason."""

from datetime import timedelta

from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.identity.caller import Caller
from aggregates.maintenance import running, services, tasks
from aggregates.maintenance.models import MaintenanceItem, MaintenanceJob
from aggregates.moves import services as moves
from aggregates.servers.models import Server

from .conftest import boot_on, hosts_of, usages


def left_running(cloud, admin_api, monkeypatch, lease_age=timedelta(minutes=5), attempts=1):
    """Four servers on A; a start job as a killed worker leaves it: the first
    moved and recorded, the second moved but not recorded (moving), the
    third moving but not moved yet, the fourth pending."""
    nodes = {node.host: node for node in cloud.hosts("A", "B")}
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    servers = boot_on(admin_api, flavor, image, "A", count=4)
    with monkeypatch.context() as patched:
        patched.setattr(running, "dispatch", lambda job_pk: None)
        job = services.start_maintenance(Caller.system("tests"), "A")
    items = list(MaintenanceItem.objects.filter(job=job).order_by("id"))
    system = Caller.system("tests")
    first = moves.move_server(system, str(items[0].server_uuid), "live-migration")
    MaintenanceItem.objects.filter(pk=items[0].pk).update(
        status="moved", target=first.target, migration_uuid=first.migration_uuid, finished_at=timezone.now()
    )
    moves.move_server(system, str(items[1].server_uuid), "live-migration")
    MaintenanceItem.objects.filter(pk__in=[items[1].pk, items[2].pk]).update(status="moving", started_at=timezone.now())
    MaintenanceJob.objects.filter(pk=job.pk).update(
        status="running",
        started_at=timezone.now(),
        done=1,
        lease_expires_at=timezone.now() - lease_age,
        attempts=attempts,
    )
    return job, items, servers, nodes


def test_drain_resumes_a_dead_workers_job(cloud, admin_api, monkeypatch):
    job, items, servers, nodes = left_running(cloud, admin_api, monkeypatch)
    first_finished = MaintenanceItem.objects.get(pk=items[0].pk).finished_at
    Event.objects.all().delete()
    assert tasks.drain_jobs.delay().get() == {"resumed": 1, "failed": 0}
    job.refresh_from_db()
    assert (job.status, job.attempts, job.done, job.lease_expires_at) == ("completed", 2, 4, None)
    rows = list(MaintenanceItem.objects.filter(job=job).order_by("id"))
    assert [r.status for r in rows] == ["moved"] * 4
    assert {r.target for r in rows} == {"B"}
    assert rows[0].finished_at == first_finished  # not redone
    assert rows[1].message == "Moved before the job's worker stopped."
    assert set(hosts_of(servers).values()) == {"B"}
    assert usages(cloud, nodes["A"]) == {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}
    assert usages(cloud, nodes["B"]) == {"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 40}
    types = list(Event.objects.filter(object_type="host").order_by("id").values_list("event_type", flat=True))
    assert types == ["compute.maintenance.progress"] * 3 + ["compute.maintenance.end"]  # no second start


def test_drain_leaves_live_jobs_alone(cloud, admin_api, monkeypatch):
    job, *_ = left_running(cloud, admin_api, monkeypatch, lease_age=-timedelta(minutes=5))
    assert running.drain_jobs() == {"resumed": 0, "failed": 0}
    job.refresh_from_db()
    assert job.status == "running"


def test_too_many_attempts_fail_the_job_and_servers_stay_whole(cloud, admin_api, monkeypatch, settings):
    settings.MAINTENANCE_MAX_ATTEMPTS = 3
    job, items, servers, nodes = left_running(cloud, admin_api, monkeypatch, attempts=3)
    assert running.drain_jobs() == {"resumed": 0, "failed": 1}
    job.refresh_from_db()
    assert job.status == "failed" and "stopped 3 times" in job.error
    statuses = list(MaintenanceItem.objects.filter(job=job).order_by("id").values_list("status", flat=True))
    assert statuses == ["moved", "failed", "failed", "failed"]
    for server in Server.objects.filter(pk__in=[s.pk for s in servers]):
        node = nodes[server.host]
        assert list(cloud.allocations(server.uuid)) == [str(node.uuid)]  # where the row says it is


def test_drain_starts_a_stale_queued_job_and_running_twice_is_harmless(cloud, admin_api, monkeypatch):
    cloud.hosts("A", "B")
    flavor, image = cloud.flavor(vcpus=2, ram=1024, disk=10), cloud.image()
    servers = boot_on(admin_api, flavor, image, "A", count=2)
    with monkeypatch.context() as patched:
        patched.setattr(running, "dispatch", lambda job_pk: None)
        job = services.start_maintenance(Caller.system("tests"), "A")
    assert running.drain_jobs() == {"resumed": 0, "failed": 0}  # too fresh: its dispatch may still run it
    MaintenanceJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    assert running.drain_jobs() == {"resumed": 1, "failed": 0}
    assert running.run_job(job.pk) is None
    job.refresh_from_db()
    assert job.status == "completed"
    assert set(hosts_of(servers).values()) == {"B"}
