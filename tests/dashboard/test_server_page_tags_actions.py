"""A server's console page shows its tags and its instance actions (each
with its request id, who asked and its events), as the API records them."""

from aggregates.identity.caller import Caller
from aggregates.servers import services, tags
from aggregates.servers.models import InstanceAction


def test_server_page_shows_tags_and_instance_actions(admin_client, cloud):
    cloud.host("node1")
    flavor, image = cloud.flavor(), cloud.image()
    caller = Caller.system("tests", request_id="req-11111111-2222-3333-4444-555555555555")
    (server,) = services.create_servers(
        caller, name="web1", flavor_ref=flavor.flavorid, image_ref=str(image.id)
    ).servers
    tags.replace_tags(cloud.system, str(server.uuid), ["prod", "blue"])

    content = admin_client.get(f"/servers/{server.uuid}/").content.decode()
    assert '<dd id="server-tags">' in content
    assert content.index(">blue<") < content.index(">prod<")
    assert 'id="server-actions"' in content
    assert "req-11111111-2222-3333-4444-555555555555" in content and ">create<" in content
    assert "conductor_schedule_and_build_instances" in content and "Success" in content
    assert InstanceAction.objects.count() == 1
