"""GET /servers and /servers/detail: shapes, filters, paging, and who sees what."""

from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

V = "2.100"
ADMIN_ONLY = {
    "OS-EXT-SRV-ATTR:host",
    "OS-EXT-SRV-ATTR:instance_name",
    "OS-EXT-SRV-ATTR:hypervisor_hostname",
    "OS-EXT-SRV-ATTR:kernel_id",
    "OS-EXT-SRV-ATTR:launch_index",
    "OS-EXT-SRV-ATTR:ramdisk_id",
    "OS-EXT-SRV-ATTR:reservation_id",
    "OS-EXT-SRV-ATTR:root_device_name",
    "OS-EXT-SRV-ATTR:user_data",
    "host_status",
}


def boot(api, flavor, image, name, version=V, **extra):
    response = api.post("/servers", cli_body(flavor, image, name=name, **extra), version=version)
    assert response.status_code == 202, response.content
    return response.json()["server"]["id"]


def fault(response, status, name):
    assert response.status_code == status, response.content
    body = response.json()
    assert list(body) == [name] and body[name]["code"] == status
    return body[name]["message"]


def test_members_see_their_project_only_and_no_admin_fields(cloud, admin_api, token_for):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    alice = ApiClient(token_for("member", "alice", "project-a"))
    bob = ApiClient(token_for("member", "bob", "project-b"))
    mine = boot(alice, flavor, image, "alice-vm")
    theirs = boot(bob, flavor, image, "bob-vm")

    listed = alice.get("/servers/detail", version=V).json()["servers"]
    assert [item["id"] for item in listed] == [mine]
    assert not ADMIN_ONLY & set(listed[0])
    assert listed[0]["OS-EXT-SRV-ATTR:hostname"] == "alice-vm"  # shown to everyone from 2.90
    shown = alice.get(f"/servers/{mine}", version=V).json()["server"]
    assert not ADMIN_ONLY & set(shown) and shown["status"] == "ACTIVE"
    assert fault(alice.get(f"/servers/{theirs}", version=V), 404, "itemNotFound") == (
        f"Instance {theirs} could not be found."
    )
    fault(alice.delete(f"/servers/{theirs}"), 404, "itemNotFound")
    message = fault(alice.get("/servers/detail?all_tenants=True", version=V), 403, "forbidden")
    assert "get_all_tenants" in message

    # An admin lists its own project without all_tenants, every project with it.
    assert admin_api.get("/servers/detail", version=V).json()["servers"] == []
    everyone = admin_api.get("/servers/detail?all_tenants=True&deleted=False", version=V).json()["servers"]
    assert {item["id"] for item in everyone} == {mine, theirs}
    assert all(ADMIN_ONLY <= set(item) for item in everyone)
    only_b = admin_api.get(f"/servers/detail?all_tenants=1&project_id={everyone[0]['tenant_id']}", version=V)
    assert [item["id"] for item in only_b.json()["servers"]] == [everyone[0]["id"]]


def test_list_shapes_at_2_1_2_47_and_2_100(cloud, admin_api):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    server_id = boot(admin_api, flavor, image, "vm1")
    brief = admin_api.get("/servers", version=V).json()
    assert brief == {"servers": [{"id": server_id, "name": "vm1", "links": brief["servers"][0]["links"]}]}
    assert [link["rel"] for link in brief["servers"][0]["links"]] == ["self", "bookmark"]
    for version, flavor_keys in (
        ("2.1", {"id", "links"}),
        ("2.47", {"vcpus", "ram", "disk", "ephemeral", "swap", "original_name", "extra_specs"}),
    ):
        (item,) = admin_api.get("/servers/detail", version=version).json()["servers"]
        assert set(item["flavor"]) == flavor_keys
        assert ("pinned_availability_zone" in item) is False
    (item,) = admin_api.get("/servers/detail", version=V).json()["servers"]
    assert item["pinned_availability_zone"] is None and item["scheduler_hints"] == {}
    assert "server_groups" not in item  # show only
    shown = admin_api.get(f"/servers/{server_id}", version=V).json()["server"]
    assert {key: value for key, value in shown.items() if key != "server_groups"} == item


def test_filters(cloud, admin_api):
    cloud.host("h1")
    cloud.host("h2")
    cloud.zone("az1", "h2")
    flavor, image = cloud.flavor(), cloud.image()
    web = boot(admin_api, flavor, image, "web-1", zone="az1")
    db = boot(admin_api, flavor, image, "db-1", zone="nova")

    def ids(query, version=V):
        response = admin_api.get(f"/servers/detail?{query}", version=version)
        assert response.status_code == 200, response.content
        return {item["id"] for item in response.json()["servers"]}

    assert ids("name=web") == {web}
    assert ids("name=^d.-1$") == {db}
    assert ids("name=zzz") == set()
    assert ids("status=ACTIVE") == {web, db}
    assert ids("status=active") == {web, db}
    assert ids("status=ERROR") == set()
    assert ids("host=h2") == {web}
    assert ids("availability_zone=az1") == {web}
    assert ids("changes-since=2000-01-01T00:00:00Z") == {web, db}
    assert ids("deleted=False") == {web, db}
    fault(admin_api.get("/servers/detail?status=nonsense", version=V), 400, "badRequest")
    fault(admin_api.get("/servers/detail?name=(", version=V), 400, "badRequest")
    fault(admin_api.get("/servers/detail?metadata=x", version="2.1"), 400, "badRequest")
    message = fault(admin_api.get("/servers/detail?bogus=1", version=V), 400, "badRequest")
    assert "bogus" in message
    assert ids("bogus=1", version="2.74") == {web, db}  # ignored before 2.75


def test_a_member_cannot_filter_by_host(cloud, member_api):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    server_id = boot(member_api, flavor, image, "vm1")
    listed = member_api.get("/servers/detail?host=elsewhere", version=V).json()["servers"]
    assert [item["id"] for item in listed] == [server_id]  # stripped, as Nova does


def test_paging_with_limit_and_marker(cloud, admin_api):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    created = [boot(admin_api, flavor, image, f"vm{n}") for n in range(3)]
    newest_first = list(reversed(created))
    page = admin_api.get("/servers?limit=2", version=V).json()
    assert [item["id"] for item in page["servers"]] == newest_first[:2]
    (link,) = page["servers_links"]
    assert link["rel"] == "next" and f"marker={newest_first[1]}" in link["href"] and "limit=2" in link["href"]
    rest = admin_api.get(f"/servers?limit=2&marker={newest_first[1]}", version=V).json()
    assert [item["id"] for item in rest["servers"]] == newest_first[2:]
    assert "servers_links" not in rest
    message = fault(admin_api.get("/servers?marker=nope", version=V), 400, "badRequest")
    assert message == "marker [nope] not found"
    fault(admin_api.get("/servers?limit=x", version=V), 400, "badRequest")


def test_status_filters_follow_novas_state_map(cloud, admin_api, admin_client):
    """MIGRATING, VERIFY_RESIZE and SHUTOFF select by vm_state and task
    state, the way each server's status is shown (API and console alike)."""
    from aggregates.servers.models import Server

    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    ids = {name: boot(admin_api, flavor, image, name) for name in ("moving", "resized", "off", "plain")}
    Server.objects.filter(uuid=ids["moving"]).update(task_state="migrating")
    Server.objects.filter(uuid=ids["resized"]).update(vm_state="resized")
    Server.objects.filter(uuid=ids["off"]).update(vm_state="stopped")
    for status, name in (
        ("MIGRATING", "moving"),
        ("VERIFY_RESIZE", "resized"),
        ("SHUTOFF", "off"),
        ("ACTIVE", "plain"),
    ):
        listed = admin_api.get(f"/servers/detail?status={status}", version=V).json()["servers"]
        assert [(s["name"], s["status"]) for s in listed] == [(name, status)], status
        page = admin_client.get(f"/servers/?status={status}").content.decode()
        assert f">{name}<" in page and all(f">{other}<" not in page for other in ids if other != name), status


def test_an_empty_all_tenants_means_every_project_as_in_nova(cloud, admin_api, token_for):
    """Nova's is_all_tenants: ``all_tenants=`` (no value) asks for every
    project; a value is read strictly (true-ish, false-ish, else 400)."""
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    alice = ApiClient(token_for("member", "alice", "project-a"))
    theirs = boot(alice, flavor, image, "alice-vm")
    for path in ("/servers/detail", "/servers"):
        everyone = admin_api.get(f"{path}?all_tenants=", version=V)
        assert everyone.status_code == 200, everyone.content
        assert [item["id"] for item in everyone.json()["servers"]] == [theirs]
        assert admin_api.get(f"{path}?all_tenants=false", version=V).json()["servers"] == []
        assert "Unrecognized value 'maybe'" in fault(
            admin_api.get(f"{path}?all_tenants=maybe", version=V), 400, "badRequest"
        )
    assert "get_all_tenants" in fault(alice.get("/servers/detail?all_tenants=", version=V), 403, "forbidden")
