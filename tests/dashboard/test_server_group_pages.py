"""The console's server group pages: the list (every project's groups),
create (checked like the API), a group's members, delete; readers read."""

from aggregates.identity import services as identity
from aggregates.identity.caller import Caller
from aggregates.server_groups import services as server_groups
from aggregates.server_groups.models import ServerGroup


def test_list_create_detail_delete(admin_client, reader_client):
    project = identity.ensure_project("demo")
    other = server_groups.create_group(Caller(username="x", project_id="elsewhere"), "theirs", "affinity").group

    response = admin_client.post(
        "/server-groups/new/",
        {"name": "web", "policy": "anti-affinity", "max_server_per_host": "2", "project": "demo"},
    )
    assert response.status_code == 302, response.content
    group = ServerGroup.objects.get(name="web")
    assert (group.project_id, group.rules) == (str(project.id), {"max_server_per_host": 2})
    assert response["Location"] == f"/server-groups/{group.uuid}/"

    listing = reader_client.get("/server-groups/").content.decode()
    assert "web" in listing and "theirs" in listing and "max 2 per host" in listing
    page = reader_client.get(f"/server-groups/{other.uuid}/").content.decode()
    assert "No member yet" in page
    assert reader_client.post(f"/server-groups/{other.uuid}/delete/").status_code == 403

    refused = admin_client.post(
        "/server-groups/new/", {"name": "db", "policy": "affinity", "max_server_per_host": "2", "project": "demo"}
    )
    assert refused.status_code == 400
    assert "Only anti-affinity policy supports rules." in refused.content.decode()
    refused = admin_client.post("/server-groups/new/", {"name": "db", "policy": "affinity", "project": "nope"})
    assert refused.status_code == 400 and "No project is named nope" in refused.content.decode()
    assert not ServerGroup.objects.filter(name="db").exists()

    assert admin_client.post(f"/server-groups/{group.uuid}/delete/").status_code == 302
    assert not ServerGroup.objects.filter(pk=group.pk).exists()
    assert admin_client.get(f"/server-groups/{group.uuid}/").status_code == 404
