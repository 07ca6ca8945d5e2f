"""Moves a dead worker left behind (corral.moves.resume): an accepted move
never taken is run; a running one is settled from where placement holds the
server — moved when its allocation is on another node, failed (the server
stays, usable) when it is still on its source. Never both, never neither."""

from datetime import timedelta

from django.utils import timezone

from aggregates.moves import recovery, tasks
from aggregates.moves import services as moves
from aggregates.moves.models import ServerMigration
from aggregates.scheduling import services as scheduling
from aggregates.servers.models import Server

from .conftest import ZERO, act, boot, usages

LIVE_BODY = {"os-migrateLive": {"host": None, "block_migration": "auto"}}


def left_behind(api, server, monkeypatch, status):
    """A live migration accepted (the worker never ran it), aged past STALE_AFTER."""
    monkeypatch.setattr(moves, "dispatch_move", lambda migration_pk: None)
    assert act(api, server, LIVE_BODY).status_code == 202
    migration = ServerMigration.objects.get(server=server)
    old = timezone.now() - recovery.STALE_AFTER - timedelta(seconds=1)
    ServerMigration.objects.filter(pk=migration.pk).update(status=status, updated_at=old)
    task = {"queued": "migrating", "running": "migrating"}[status]
    assert Server.objects.get(pk=server.pk).task_state == task
    return migration


def test_an_accepted_move_nobody_ran_is_run(cloud, admin_api, monkeypatch):
    nodes = {n.host: n for n in cloud.hosts("r1", "r2")}
    server = boot(admin_api, cloud.flavor(vcpus=2), cloud.image())
    source = server.host
    left_behind(admin_api, server, monkeypatch, "queued")
    assert tasks.resume() == {"run": 1, "moved": 0, "failed": 0}
    server.refresh_from_db()
    assert server.host != source and server.task_state is None
    assert usages(cloud, nodes[source]) == ZERO


def test_a_running_move_whose_allocation_moved_is_recorded_moved(cloud, admin_api, monkeypatch):
    nodes = {n.host: n for n in cloud.hosts("r1", "r2")}
    server = boot(admin_api, cloud.flavor(vcpus=2), cloud.image())
    source = server.host
    migration = left_behind(admin_api, server, monkeypatch, "running")
    # The dead worker got as far as moving the allocation.
    moved = scheduling.schedule_move(scheduling.spec_for_server(server), str(server.uuid))
    assert tasks.resume() == {"run": 0, "moved": 1, "failed": 0}
    server.refresh_from_db()
    migration.refresh_from_db()
    assert (server.host, server.node_uuid, server.task_state) == (moved.target.host, moved.target.node_uuid, None)
    assert (migration.status, migration.dest_compute) == ("completed", moved.target.host)
    assert usages(cloud, nodes[source]) == ZERO


def test_a_running_move_still_on_its_source_failed_and_the_server_stays(cloud, admin_api, monkeypatch):
    nodes = {n.host: n for n in cloud.hosts("r1", "r2")}
    server = boot(admin_api, cloud.flavor(vcpus=2), cloud.image())
    source = server.host
    migration = left_behind(admin_api, server, monkeypatch, "running")
    assert tasks.resume() == {"run": 0, "moved": 0, "failed": 1}
    server.refresh_from_db()
    migration.refresh_from_db()
    assert (server.host, server.task_state, server.vm_state) == (source, None, "active")
    assert migration.status == "failed" and "stopped" in migration.message
    assert usages(cloud, nodes[source])["VCPU"] == 2
    assert tasks.resume() == {"run": 0, "moved": 0, "failed": 0}  # settled once
