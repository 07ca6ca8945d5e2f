"""PUT /servers/{id}: name, accessIPv4/accessIPv6, description (2.19),
hostname (2.90, FQDNs from 2.94), the pinned zone (2.104), and the body
Nova's view answers per microversion (the full server from 2.75)."""

import pytest

from tests.helpers import fault
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

UNKNOWN = "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"
BASE_KEYS = {
    "accessIPv4",
    "accessIPv6",
    "addresses",
    "created",
    "flavor",
    "hostId",
    "id",
    "image",
    "links",
    "metadata",
    "name",
    "status",
    "tenant_id",
    "updated",
    "user_id",
    "OS-DCF:diskConfig",
    "progress",
}


@pytest.fixture
def server_id(cloud, member_api):
    cloud.host("h1")
    cloud.zone("az1", "h1")
    body = cli_body(cloud.flavor(), cloud.image(), name="vm1", zone="az1")
    response = member_api.post("/servers", body, version="2.100")
    assert response.status_code == 202, response.content
    return response.json()["server"]["id"]


def put(api, server_id, version, **server):
    return api.put(f"/servers/{server_id}", {"server": server}, version=version)


def test_from_2_75_the_answer_is_the_full_server_as_show_gives_it(server_id, member_api, admin_api):
    for api in (member_api, admin_api):
        for version in ("2.75", "2.96", "2.98", "2.100"):
            response = put(api, server_id, version, name=f"vm-{version}")
            assert response.status_code == 200, response.content
            shown = api.get(f"/servers/{server_id}", version=version).json()
            assert response.json() == shown
            assert shown["server"]["name"] == f"vm-{version}"
    shown = member_api.get(f"/servers/{server_id}", version="2.100").json()["server"]
    assert shown["pinned_availability_zone"] == "az1" and shown["image"]["properties"] == {}
    assert shown["scheduler_hints"] == {} and shown["OS-EXT-SRV-ATTR:hostname"] == "vm1"


def test_before_2_75_the_answer_is_nova_s_short_view(server_id, admin_api):
    body = put(admin_api, server_id, "2.1", name="renamed").json()["server"]
    assert set(body) == BASE_KEYS
    assert body["name"] == "renamed" and body["flavor"]["id"]
    body = put(admin_api, server_id, "2.74", name="renamed2").json()["server"]
    extra = {"locked", "description", "tags", "trusted_image_certificates", "server_groups", "locked_reason"}
    assert set(body) == BASE_KEYS | extra
    assert body["description"] is None and body["tags"] == [] and body["locked"] is False
    shown = admin_api.get(f"/servers/{server_id}", version="2.74").json()["server"]
    assert shown["name"] == "renamed2" and "OS-EXT-STS:vm_state" in shown


def test_access_addresses_and_description(server_id, member_api):
    response = put(member_api, server_id, "2.19", accessIPv4="192.0.2.7", accessIPv6="2001:DB8::1", description="web")
    body = response.json()["server"]
    assert (body["accessIPv4"], body["accessIPv6"], body["description"]) == ("192.0.2.7", "2001:db8::1", "web")
    body = put(member_api, server_id, "2.19", description=None).json()["server"]
    assert body["description"] is None and body["accessIPv4"] == "192.0.2.7"
    body = put(member_api, server_id, "2.19").json()["server"]  # nothing to change: the server as it is
    assert body["name"] == "vm1" and body["accessIPv6"] == "2001:db8::1"

    message = fault(put(member_api, server_id, "2.18", description="x"), 400, "badRequest")
    assert message == "Invalid input for field/attribute server. Value: {'description': 'x'}. " + (
        "Additional properties are not allowed ('description' was unexpected)"
    )
    for bad in ({"accessIPv4": "2001:db8::1"}, {"accessIPv6": "192.0.2.1"}, {"name": ""}, {"name": " x"}):
        fault(put(member_api, server_id, "2.19", **bad), 400, "badRequest")
    fault(put(member_api, server_id, "2.19", description="d" * 256), 400, "badRequest")
    shown = member_api.get(f"/servers/{server_id}", version="2.19").json()["server"]
    assert (shown["name"], shown["accessIPv4"], shown["description"]) == ("vm1", "192.0.2.7", None)


def test_hostname_from_2_90_and_fqdns_from_2_94(server_id, member_api):
    message = fault(put(member_api, server_id, "2.89", hostname="web1"), 400, "badRequest")
    assert "('hostname' was unexpected)" in message
    body = put(member_api, server_id, "2.90", hostname="web1").json()["server"]
    assert body["OS-EXT-SRV-ATTR:hostname"] == "web1"
    fault(put(member_api, server_id, "2.90", hostname="web1.example.com"), 400, "badRequest")
    body = put(member_api, server_id, "2.94", hostname="web1.example.com").json()["server"]
    assert body["OS-EXT-SRV-ATTR:hostname"] == "web1.example.com"
    body = put(member_api, server_id, "2.94", name="other").json()["server"]
    assert body["OS-EXT-SRV-ATTR:hostname"] == "web1.example.com"  # a rename keeps the hostname, as in Nova


def test_pinned_availability_zone_from_2_104(server_id, member_api):
    fault(put(member_api, server_id, "2.103", pinned_availability_zone=None), 400, "badRequest")
    message = fault(put(member_api, server_id, "2.104", pinned_availability_zone="az2"), 409, "conflictingRequest")
    assert message == (
        "Cannot change pinned availability zone directly. Unpin first by setting pinned_availability_zone to null."
    )
    body = put(member_api, server_id, "2.104", pinned_availability_zone=None).json()["server"]
    assert body["pinned_availability_zone"] is None
    message = fault(put(member_api, server_id, "2.104", pinned_availability_zone="az2"), 409, "conflictingRequest")
    assert message == "Server can only be pinned to its current availability zone 'az1', but 'az2' was requested."
    body = put(member_api, server_id, "2.104", pinned_availability_zone="az1").json()["server"]
    assert body["pinned_availability_zone"] == "az1"


def test_unknown_and_other_projects_servers_are_404(server_id, token_for):
    other = ApiClient(token_for("member", username="other", project_name="other"))
    for ref in (UNKNOWN, server_id):
        message = fault(put(other, ref, "2.100", name="x"), 404, "itemNotFound")
        assert message == f"Instance {ref} could not be found."


def test_a_hostname_given_at_create_is_kept_and_is_for_one_server_only(cloud, member_api):
    cloud.host("h1")
    flavor, image = cloud.flavor(), cloud.image()
    response = member_api.post("/servers", cli_body(flavor, image, name="My VM", hostname="web-a"), version="2.90")
    assert response.status_code == 202, response.content
    server_id = response.json()["server"]["id"]
    shown = member_api.get(f"/servers/{server_id}", version="2.90").json()["server"]
    assert shown["OS-EXT-SRV-ATTR:hostname"] == "web-a"
    response = member_api.post("/servers", cli_body(flavor, image, name="vm2"), version="2.90")
    shown = member_api.get(f"/servers/{response.json()['server']['id']}", version="2.90").json()["server"]
    assert shown["OS-EXT-SRV-ATTR:hostname"] == "vm2"

    body = cli_body(flavor, image, name="many", hostname="web-b", max_count=2)
    message = fault(member_api.post("/servers", body, version="2.90"), 400, "badRequest")
    assert message == "Unable to allocate a single hostname to multiple instances"
