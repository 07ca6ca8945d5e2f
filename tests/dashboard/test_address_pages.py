"""The console's address pools: list with usage, create (refused with the
API's words beside the field), edit, delete; readers only read."""

from aggregates.addressing import services as addressing
from aggregates.addressing.models import AddressPool

POOL = {"name": "private", "cidr": "10.0.0.0/24", "gateway": "10.0.0.1", "kind": "internal", "scope": "global"}


def test_create_list_edit_delete(admin_client, system, db):
    addressing.create_pool(system, name="public", cidr="203.0.113.0/24", kind="external")
    response = admin_client.post("/addresses/new/", {**POOL, "zone": "", "aggregate": ""})
    pool = AddressPool.objects.get(name="private")
    assert response.status_code == 302 and response["Location"] == f"/addresses/{pool.uuid}/"
    listing = admin_client.get("/addresses/").content.decode()
    assert "10.0.0.0/24" in listing and "203.0.113.0/24" in listing and "every host" in listing
    page = admin_client.get(f"/addresses/{pool.uuid}/").content.decode()
    assert "253 free" in page and "0 / 253" in page and "address_pool.create" in page
    edited = admin_client.post(f"/addresses/{pool.uuid}/", {**POOL, "name": "inside", "zone": "", "aggregate": ""})
    assert edited.status_code == 302
    pool.refresh_from_db()
    assert pool.name == "inside"
    assert admin_client.post(f"/addresses/{pool.uuid}/delete/").status_code == 302
    assert not AddressPool.objects.filter(pk=pool.pk).exists()


def test_bad_input_is_refused_beside_the_field(admin_client, system, db):
    addressing.create_pool(system, name="taken", cidr="10.0.0.0/16")
    overlapping = {**POOL, "cidr": "10.0.5.0/24", "gateway": "", "zone": "", "aggregate": ""}
    response = admin_client.post("/addresses/new/", overlapping)
    assert response.status_code == 400
    assert "CIDR 10.0.5.0/24 overlaps address pool taken (10.0.0.0/16)." in response.content.decode()
    response = admin_client.post("/addresses/new/", {**POOL, "cidr": "10.9.9.9/24", "zone": "", "aggregate": ""})
    assert response.status_code == 400 and "has host bits set" in response.content.decode()
    assert AddressPool.objects.count() == 1


def test_readers_read_only(reader_client, system, db):
    pool = addressing.create_pool(system, **POOL)
    assert reader_client.get("/addresses/").status_code == 200
    page = reader_client.get(f"/addresses/{pool.uuid}/")
    assert page.status_code == 200 and "Save" not in page.content.decode()
    assert reader_client.get("/addresses/new/").status_code == 403
    assert reader_client.post(f"/addresses/{pool.uuid}/delete/").status_code == 403
    assert AddressPool.objects.filter(pk=pool.pk).exists()


def test_a_servers_page_shows_its_addresses(cloud, admin_api, admin_client, system):
    from tests.plugins.cloud import cli_body

    cloud.host("h1")
    pool = addressing.create_pool(system, **POOL)
    body = cli_body(cloud.flavor(), cloud.image(), networks="auto")
    server_id = admin_api.post("/servers", body, version="2.100").json()["server"]["id"]
    page = admin_client.get(f"/servers/{server_id}/").content.decode()
    assert 'private</a>: <span class="mono">10.0.0.2</span> <span class="small muted">fixed</span>' in page
    held = admin_client.get(f"/addresses/{pool.uuid}/").content.decode()
    assert "10.0.0.2" in held and "vm1" in held


def test_an_address_a_move_has_taken_shows_where_it_goes(cloud, admin_api, admin_client, system):
    from aggregates.hosts.models import ComputeNode
    from aggregates.servers.models import Server
    from tests.plugins.cloud import cli_body

    cloud.host("h1")
    cloud.host("h2")
    cloud.aggregate("rack1", ["h1"])
    cloud.aggregate("rack2", ["h2"])
    addressing.create_pool(system, name="net1", cidr="10.1.0.0/24", scope="aggregate", aggregate="rack1")
    net2 = addressing.create_pool(system, name="net2", cidr="10.2.0.0/24", scope="aggregate", aggregate="rack2")
    body = cli_body(cloud.flavor(), cloud.image(), networks="auto", zone="nova:h1")
    server_id = admin_api.post("/servers", body, version="2.100").json()["server"]["id"]
    # A move's claim on h2 holds: the replacement is taken there, not yet the server's.
    h2 = ComputeNode.objects.get(host="h2")
    assert addressing.reserve_for_move(server_id, str(h2.uuid))
    page = admin_client.get(f"/addresses/{net2.uuid}/").content.decode()
    assert "10.2.0.1" in page and "moving to h2" in page
    shown = admin_api.get(f"/servers/{server_id}", version="2.100").json()["server"]["addresses"]
    assert list(shown) == ["net1"]
    assert addressing.usage([net2])[0].used == 1
    assert addressing.drop_reservations(Server.objects.get(uuid=server_id)) == 1
