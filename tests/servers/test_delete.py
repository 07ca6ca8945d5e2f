"""DELETE /servers/{id}: 204, the allocation released, then 404 everywhere;
a failed release leaves the server deleting until finish_deletes retries."""

from unittest import mock

from aggregates.placement_client import PlacementUnreachable
from aggregates.servers import deletion
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

V = "2.100"


def boot(api, flavor, image, name="vm1"):
    response = api.post("/servers", cli_body(flavor, image, name=name), version=V)
    assert response.status_code == 202, response.content
    return response.json()["server"]["id"]


def test_delete_releases_the_allocation_then_404(cloud, admin_api):
    node = cloud.host("h1")
    flavor, image = cloud.flavor(vcpus=2), cloud.image()
    server_id = boot(admin_api, flavor, image)
    assert cloud.usages(node.uuid)["VCPU"] == 2

    response = admin_api.delete(f"/servers/{server_id}", version=V)
    assert response.status_code == 204 and response.content == b""
    assert cloud.allocations(server_id) == {}
    assert cloud.usages(node.uuid)["VCPU"] == 0
    server = Server.objects.get()
    assert (server.vm_state, server.task_state) == ("deleted", None)
    assert server.deleted_at is not None and server.terminated_at is not None

    for path in (f"/servers/{server_id}",):
        response = admin_api.get(path, version=V)
        assert response.status_code == 404
        assert response.json() == {
            "itemNotFound": {"code": 404, "message": f"Instance {server_id} could not be found."}
        }
    assert admin_api.delete(f"/servers/{server_id}", version=V).status_code == 404
    assert admin_api.get("/servers/detail", version=V).json()["servers"] == []
    assert admin_api.get("/servers/detail?name=vm1&all_tenants=1", version=V).json()["servers"] == []
    deleted = admin_api.get("/servers/detail?deleted=True&all_tenants=1", version=V).json()["servers"]
    assert [(item["id"], item["status"]) for item in deleted] == [(server_id, "DELETED")]


def test_unknown_and_malformed_ids_are_404(cloud, admin_api):
    for ref in ("6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11", "vm1"):
        assert admin_api.get(f"/servers/{ref}", version=V).status_code == 404
        assert admin_api.delete(f"/servers/{ref}", version=V).status_code == 404


def test_a_failed_release_leaves_the_server_deleting_until_retried(cloud, admin_api):
    node = cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    server_id = boot(admin_api, flavor, image)
    with mock.patch.object(deletion.scheduling, "release", side_effect=PlacementUnreachable("down")):
        assert admin_api.delete(f"/servers/{server_id}", version=V).status_code == 204
    shown = admin_api.get(f"/servers/{server_id}", version=V).json()["server"]
    assert (shown["status"], shown["OS-EXT-STS:task_state"]) == ("ACTIVE", "deleting")
    assert cloud.usages(node.uuid)["VCPU"] == 1

    assert deletion.finish_deletes() == 0  # too recent: the request's own attempt comes first
    Server.objects.update(updated_at=Server.objects.get().updated_at - deletion.DELETE_RETRY_AFTER * 2)
    from aggregates.servers import tasks

    assert tasks.finish_deletes.delay().get() == 1
    assert cloud.usages(node.uuid)["VCPU"] == 0
    assert admin_api.get(f"/servers/{server_id}", version=V).status_code == 404
