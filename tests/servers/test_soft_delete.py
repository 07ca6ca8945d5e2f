"""Soft delete with RECLAIM_INSTANCE_INTERVAL > 0 (Nova's
reclaim_instance_interval), through HTTP: DELETE leaves the server
SOFT_DELETED with its placement allocation kept, restore makes it ACTIVE
again (202), forceDelete deletes it at once (202), and
corral.servers.reclaim_deleted deletes those soft-deleted longer than the
interval, releasing their allocations."""

from datetime import timedelta

import pytest

from aggregates.servers import tasks
from aggregates.servers.models import Server
from tests.helpers import fault

from .conftest import act

V = "2.100"
USED = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}


@pytest.fixture
def server_id(boot, member_api, settings):
    settings.RECLAIM_INSTANCE_INTERVAL = 3600
    return boot(member_api)


def status(api, server_id):
    response = api.get(f"/servers/{server_id}", version=V)
    assert response.status_code == 200, response.content
    return response.json()["server"]["status"]


def held(cloud, server_id):
    return [item["resources"] for item in cloud.allocations(server_id).values()]


def test_delete_soft_deletes_and_restore_brings_it_back(cloud, server_id, member_api):
    response = member_api.delete(f"/servers/{server_id}", version=V)
    assert response.status_code == 204
    assert status(member_api, server_id) == "SOFT_DELETED"
    listed = member_api.get("/servers/detail?status=SOFT_DELETED", version=V).json()["servers"]
    assert [item["id"] for item in listed] == [server_id]
    assert held(cloud, server_id) == [USED]  # the allocation is kept, as Nova keeps it

    response = act(member_api, server_id, {"restore": None})
    assert response.status_code == 202 and response.content == b""
    assert status(member_api, server_id) == "ACTIVE"
    assert held(cloud, server_id) == [USED]
    actions = member_api.get(f"/servers/{server_id}/os-instance-actions", version=V).json()["instanceActions"]
    assert [item["action"] for item in actions] == ["restore", "delete", "create"]
    # Restored: nothing to restore any more.
    message = fault(act(member_api, server_id, {"restore": None}), 409, "conflictingRequest")
    assert message == f"Cannot 'restore' instance {server_id} while it is in vm_state active"


def test_force_delete_of_a_soft_deleted_server_deletes_it_at_once(cloud, server_id, member_api):
    assert member_api.delete(f"/servers/{server_id}", version=V).status_code == 204
    response = act(member_api, server_id, {"forceDelete": None})
    assert response.status_code == 202
    assert member_api.get(f"/servers/{server_id}", version=V).status_code == 404
    assert cloud.allocations(server_id) == {}


def test_the_periodic_task_reclaims_those_older_than_the_interval(cloud, server_id, member_api, settings):
    assert member_api.delete(f"/servers/{server_id}", version=V).status_code == 204
    assert tasks.reclaim_deleted() == 0  # not old enough
    assert status(member_api, server_id) == "SOFT_DELETED"

    server = Server.objects.get(uuid=server_id)
    Server.objects.filter(pk=server.pk).update(terminated_at=server.terminated_at - timedelta(seconds=3601))
    assert tasks.reclaim_deleted() == 1
    assert member_api.get(f"/servers/{server_id}", version=V).status_code == 404
    assert cloud.allocations(server_id) == {}
    assert cloud.usages(server.node_uuid)["VCPU"] == 0

    settings.RECLAIM_INSTANCE_INTERVAL = 0
    assert tasks.reclaim_deleted() == 0
