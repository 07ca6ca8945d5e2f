"""The console's server page resizes a server (a flavor to choose) and, in
VERIFY_RESIZE, confirms or reverts it, through the same service functions
as the API's resize, confirmResize and revertResize (admins only); a
refusal is a message on the page and changes nothing. A soft-deleted
server (RECLAIM_INSTANCE_INTERVAL) is restored from its page."""

import pytest

from aggregates.identity import services as identity
from aggregates.images.models import Image
from aggregates.moves.models import ServerMigration
from aggregates.servers.models import Server


@pytest.fixture
def server(cloud, admin_client):
    cloud.hosts("node1", "node2")
    small = cloud.flavor("m1.small", ram=1024, vcpus=1, disk=10)
    cloud.flavor("m1.large", ram=2048, vcpus=2, disk=20, flavorid="large")
    image = Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    data = {
        "name": "web",
        "flavor": small.flavorid,
        "image": str(image.id),
        "zone": "",
        "count": 1,
        "project": identity.ensure_project("admin").id,
    }
    assert admin_client.post("/servers/new/", data).status_code == 302
    return Server.objects.get(name="web")


def page(client, server):
    response = client.get(f"/servers/{server.uuid}/")
    assert response.status_code == 200
    return response.content.decode()


def test_resize_then_revert_then_confirm(server, admin_client):
    content = page(admin_client, server)
    assert 'id="resize-server"' in content and "m1.large" in content
    assert 'id="confirm-resize"' not in content

    response = admin_client.post(f"/servers/{server.uuid}/resize/", {"flavor": "large"})
    assert response.status_code == 302 and response["Location"] == f"/servers/{server.uuid}/"
    server.refresh_from_db()
    assert (server.vm_state, server.flavorid) == ("resized", "large")
    content = page(admin_client, server)
    assert "VERIFY_RESIZE" in content
    assert 'id="confirm-resize"' in content and 'id="revert-resize"' in content
    assert 'id="resize-server"' not in content

    assert admin_client.post(f"/servers/{server.uuid}/resize/revert/").status_code == 302
    server.refresh_from_db()
    assert server.vm_state == "active" and server.flavor["original_name"] == "m1.small"

    assert admin_client.post(f"/servers/{server.uuid}/resize/", {"flavor": "large"}).status_code == 302
    assert admin_client.post(f"/servers/{server.uuid}/resize/confirm/").status_code == 302
    server.refresh_from_db()
    assert (server.vm_state, server.flavorid) == ("active", "large")
    statuses = list(ServerMigration.objects.order_by("id").values_list("status", flat=True))
    assert statuses == ["reverted", "confirmed"]


def test_refusals_are_messages_and_change_nothing(server, admin_client, reader_client):
    response = admin_client.post(f"/servers/{server.uuid}/resize/", {"flavor": server.flavorid}, follow=True)
    assert "When resizing, instances must change flavor!" in response.content.decode()
    response = admin_client.post(f"/servers/{server.uuid}/resize/confirm/", follow=True)
    assert f"Cannot &#x27;confirmResize&#x27; instance {server.uuid}" in response.content.decode()
    response = admin_client.post(f"/servers/{server.uuid}/resize/", {"flavor": ""}, follow=True)
    assert "Choose a flavor" in response.content.decode()

    assert 'id="resize-server"' not in page(reader_client, server)
    assert reader_client.post(f"/servers/{server.uuid}/resize/", {"flavor": "large"}).status_code == 403
    assert reader_client.post(f"/servers/{server.uuid}/resize/revert/").status_code == 403
    server.refresh_from_db()
    assert (server.vm_state, server.flavor["original_name"]) == ("active", "m1.small")
    assert not ServerMigration.objects.exists()


def test_soft_delete_and_restore(server, admin_client, settings):
    settings.RECLAIM_INSTANCE_INTERVAL = 600
    response = admin_client.post(f"/servers/{server.uuid}/delete/", follow=True)
    assert "soft-deleted" in response.content.decode()
    server.refresh_from_db()
    assert server.vm_state == Server.SOFT_DELETED
    assert 'id="restore-server"' in page(admin_client, server)
    assert admin_client.post(f"/servers/{server.uuid}/restore/").status_code == 302
    server.refresh_from_db()
    assert server.vm_state == Server.ACTIVE
    assert 'id="restore-server"' not in page(admin_client, server)


def test_stop_start_reboot_lock_and_unlock(server, admin_client):
    html = page(admin_client, server)
    assert 'id="stop-server"' in html and 'id="start-server"' not in html and 'id="lock-server"' in html
    response = admin_client.post(f"/servers/{server.uuid}/stop/", follow=True)
    assert "Server web stopped." in response.content.decode()
    server.refresh_from_db()
    assert (server.vm_state, server.power_state) == (Server.STOPPED, Server.POWER_SHUTDOWN)
    html = page(admin_client, server)
    assert 'id="start-server"' in html and 'id="stop-server"' not in html and 'id="reboot-server"' not in html
    assert admin_client.post(f"/servers/{server.uuid}/start/").status_code == 302
    server.refresh_from_db()
    assert server.vm_state == Server.ACTIVE
    response = admin_client.post(f"/servers/{server.uuid}/reboot/", {"type": "HARD"}, follow=True)
    assert "Server web rebooted (HARD)." in response.content.decode()
    assert server.actions.order_by("-id").first().action == "reboot"

    admin_client.post(f"/servers/{server.uuid}/lock/", {"reason": "kernel upgrade"})
    server.refresh_from_db()
    assert (server.locked, server.locked_reason) == (True, "kernel upgrade")
    html = page(admin_client, server)
    assert 'id="unlock-server"' in html and 'id="lock-server"' not in html and "kernel upgrade" in html
    admin_client.post(f"/servers/{server.uuid}/unlock/")
    server.refresh_from_db()
    assert (server.locked, server.locked_reason) == (False, None)
    # A refusal is a message and changes nothing.
    response = admin_client.post(f"/servers/{server.uuid}/start/", follow=True)
    assert f"Server web was not started: Cannot &#x27;start&#x27; instance {server.uuid}" in response.content.decode()


def test_power_and_lock_buttons_are_for_admins_only(server, reader_client):
    html = page(reader_client, server)
    assert 'id="stop-server"' not in html and 'id="lock-server"' not in html
    assert reader_client.post(f"/servers/{server.uuid}/stop/").status_code == 403
    server.refresh_from_db()
    assert server.vm_state == Server.ACTIVE
