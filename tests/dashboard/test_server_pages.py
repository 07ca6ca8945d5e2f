"""The console's server pages: the list (filters, paging, bounded queries),
a server's page (fault, decision link), "Boot server" and "Delete" through
the servers service functions (admins only), and the host page's usage read
from placement with the stored figures as fallback."""

import re
import uuid

import pytest
from django.utils import timezone

from aggregates.flavors import services as flavors
from aggregates.identity import services as identity
from aggregates.images.models import Image
from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server


@pytest.fixture
def two_hosts(cloud):
    """The one cloud with two hosts (node1 in az1), a flavor and an active image."""
    cloud.host("node1", vcpus=4, memory_mb=4096, local_gb=100)
    cloud.host("node2", vcpus=4, memory_mb=4096, local_gb=100)
    cloud.aggregate("agg-az1", ["node1"], zone="az1")
    flavor = cloud.flavor("m1.small", ram=1024, vcpus=1, disk=10)
    image = Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    project = identity.ensure_project("admin")
    return {"flavor": flavor, "image": image, "project": project, "system": cloud.system}


def boot(client, two_hosts, **fields):
    data = {
        "name": "vm",
        "flavor": two_hosts["flavor"].flavorid,
        "image": str(two_hosts["image"].id),
        "zone": "",
        "count": 1,
        "project": two_hosts["project"].id,
    }
    data.update(fields)
    return client.post("/servers/new/", data)


def make_servers(n, **fields):
    now = timezone.now()
    return Server.objects.bulk_create(
        Server(
            name=f"s{i:03}",
            project_id=fields.get("project_id", "p1"),
            flavorid="1",
            flavor={"original_name": "m1.tiny", "vcpus": 1, "ram": 512, "disk": 1},
            host=fields.get("host", f"h{i % 3}"),
            node=fields.get("host", f"h{i % 3}"),
            vm_state=fields.get("vm_state", Server.ACTIVE),
            availability_zone="nova",
            created_at=now,
        )
        for i in range(n)
    )


# --- boot, show, delete -------------------------------------------------------------


def test_boot_form_renders_for_admins(admin_client, two_hosts):
    response = admin_client.get("/servers/new/")
    assert response.status_code == 200
    content = response.content.decode()
    assert "m1.small" in content and "cirros" in content and '<option value="az1">az1</option>' in content
    assert 'name="csrfmiddlewaretoken"' in content


def test_boot_places_the_server_and_its_page_links_the_decision(admin_client, two_hosts):
    response = boot(admin_client, two_hosts, name="web1", zone="az1")
    server = Server.objects.get(name="web1")
    assert response.status_code == 302 and response["Location"] == f"/servers/{server.uuid}/"
    assert server.vm_state == Server.ACTIVE and server.host == "node1"
    assert server.project_id == two_hosts["project"].id
    page = admin_client.get(f"/servers/{server.uuid}/")
    content = page.content.decode()
    assert page.status_code == 200
    assert "web1" in content and "ACTIVE" in content and "node1" in content and "m1.small" in content
    assert f"/scheduling/decisions/{server.decision.uuid}/" in content
    assert 'id="delete-server"' in content and 'data-confirm="Delete server web1?' in content
    # The decision's page lists the server it placed.
    decision_page = admin_client.get(f"/scheduling/decisions/{server.decision.uuid}/").content.decode()
    assert f"/servers/{server.uuid}/" in decision_page


def test_boot_several_goes_to_the_list_of_the_reservation(admin_client, two_hosts):
    response = boot(admin_client, two_hosts, name="batch", count=2)
    assert response.status_code == 302 and "?reservation=r-" in response["Location"]
    listing = admin_client.get(response["Location"])
    assert {s.name for s in listing.context["servers"]} == {"batch-1", "batch-2"}


def test_server_in_error_shows_its_fault(admin_client, two_hosts):
    huge = flavors.create_flavor(two_hosts["system"], name="huge", ram=1_000_000, vcpus=1, disk=10)
    boot(admin_client, two_hosts, name="toobig", flavor=huge.flavorid)
    server = Server.objects.get(name="toobig")
    assert server.vm_state == Server.ERROR
    content = admin_client.get(f"/servers/{server.uuid}/").content.decode()
    assert 'id="server-fault"' in content and "No valid host was found" in content
    assert f"/scheduling/decisions/{server.decision.uuid}/" in content


def test_boot_errors_are_beside_their_fields(admin_client, two_hosts, monkeypatch):
    # The form's own rules: the name under the API's schema, the count's bounds.
    response = boot(admin_client, two_hosts, name=" padded ", count=0)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert "name" in errors and "count" in errors
    # A service refusal naming imageRef lands beside "image".
    Image.objects.filter(pk=two_hosts["image"].pk).update(min_ram=8192)
    response = boot(admin_client, two_hosts, name="vm2")
    assert response.status_code == 400
    assert response.context["form"].errors["flavor"] == ["Flavor's memory is too small for requested image."]
    content = response.content.decode()
    assert re.search(r'<label for="id_flavor">.*?Flavor&#x27;s memory is too small', content, re.S)
    assert not Server.objects.exists()


def test_delete_releases_the_server(admin_client, two_hosts):
    boot(admin_client, two_hosts, name="gone")
    server = Server.objects.get(name="gone")
    response = admin_client.post(f"/servers/{server.uuid}/delete/")
    assert response.status_code == 302 and response["Location"] == "/servers/"
    server.refresh_from_db()
    assert server.vm_state == Server.DELETED
    assert "gone" not in [s.name for s in admin_client.get("/servers/").context["servers"]]
    assert admin_client.get(f"/servers/{server.uuid}/delete/").status_code == 405


def test_reader_may_view_but_not_boot_or_delete(reader_client, two_hosts):
    server = make_servers(1, host="node1")[0]
    assert reader_client.get("/servers/").status_code == 200
    page = reader_client.get(f"/servers/{server.uuid}/")
    assert page.status_code == 200
    assert 'id="delete-server"' not in page.content.decode()
    assert "Boot server" not in reader_client.get("/servers/").content.decode()
    assert reader_client.get("/servers/new/").status_code == 403
    assert reader_client.post("/servers/new/", {"name": "x"}).status_code == 403
    assert reader_client.post(f"/servers/{server.uuid}/delete/").status_code == 403
    server.refresh_from_db()
    assert server.vm_state == Server.ACTIVE


def test_unknown_server_is_404(admin_client, db):
    assert admin_client.get(f"/servers/{uuid.uuid4()}/").status_code == 404
    assert admin_client.get("/servers/nope/").status_code == 404


# --- the list ---------------------------------------------------------------------------


def test_list_shows_the_columns_and_filters(admin_client, db):
    project = identity.ensure_project("tenant-a")
    make_servers(3, host="node1", project_id=project.id)
    make_servers(2, host="node2", project_id="other", vm_state=Server.ERROR)
    make_servers(1, host="node2", vm_state=Server.DELETED)
    response = admin_client.get("/servers/")
    assert response.status_code == 200
    assert len(response.context["servers"]) == 5  # deleted ones only on request
    content = response.content.decode()
    assert "tenant-a" in content and "m1.tiny" in content and 'class="active">Servers</a>' in content
    assert len(admin_client.get("/servers/?host=node1").context["servers"]) == 3
    assert len(admin_client.get("/servers/?status=ERROR").context["servers"]) == 2
    assert len(admin_client.get("/servers/?status=DELETED").context["servers"]) == 1
    assert len(admin_client.get(f"/servers/?project={project.id}").context["servers"]) == 3
    assert len(admin_client.get("/servers/?name=s00").context["servers"]) == 5
    names = [s.name for s in admin_client.get("/servers/?sort=-name&host=node1").context["servers"]]
    assert names == sorted(names, reverse=True)


def test_list_pages_and_its_queries_do_not_grow(admin_client, db, django_assert_max_num_queries):
    make_servers(120)
    with django_assert_max_num_queries(8):
        response = admin_client.get("/servers/")
    assert len(response.context["servers"]) == 50
    assert "Page 1 of 3" in response.content.decode()
    with django_assert_max_num_queries(8):
        response = admin_client.get("/servers/?page=3&host=h1")
    assert response.context["page"].number == 1  # 40 servers on h1: one page


# --- the host page's usage ---------------------------------------------------------------


def test_host_page_counts_servers_and_reads_usage_from_placement(admin_client, two_hosts):
    boot(admin_client, two_hosts, name="a", zone="az1")
    boot(admin_client, two_hosts, name="b", zone="az1")
    response = admin_client.get("/hosts/node1/")
    content = response.content.decode()
    assert response.context["instance_count"] == 2
    assert '/servers/?host=node1">2 instances</a>' in content
    node = response.context["nodes"][0]
    assert node.usage_source == "placement" and node.instances == 2
    assert node.used == {"vcpus": 2, "memory_mb": 2048, "local_gb": 20}
    assert "2 / 4 (50%)" in content and 'id="usage-source"' in content


def test_host_page_falls_back_to_stored_usage_when_placement_is_unreachable(admin_client, db, make_host, settings):
    settings.PLACEMENT_URL = "http://127.0.0.1:9/placement"
    from aggregates.hosts.models import ComputeNode

    make_host("node9", vcpus=8)
    ComputeNode.objects.filter(host="node9").update(vcpus_used=3)
    response = admin_client.get("/hosts/node9/")
    assert response.status_code == 200
    node = response.context["nodes"][0]
    assert node.usage_source == "stored" and node.used["vcpus"] == 3
    assert 'id="usage-problem"' in response.content.decode()


def test_decisions_are_not_required_for_servers(admin_client, db):
    server = make_servers(1)[0]
    assert server.decision is None
    content = admin_client.get(f"/servers/{server.uuid}/").content.decode()
    assert "none yet" in content
    assert SchedulingDecision.objects.count() == 0
