"""Refused creates: Nova's 4xx fault, and nothing created (no Server row, no allocation)."""

import pytest

from aggregates.images.models import Image
from aggregates.servers.models import Server
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

from .conftest import no_servers_and_no_allocations

V = "2.100"


@pytest.fixture
def setup(cloud):
    cloud.host("h1")
    cloud.host("h2")
    cloud.zone("az1", "h2")
    return cloud, cloud.flavor(), cloud.image()


def refused(api, body, status, version=V):
    response = api.post("/servers", body, version=version)
    assert response.status_code == status, response.content
    (name,) = response.json()
    fault = response.json()[name]
    assert fault["code"] == status and set(fault) == {"code", "message"}
    no_servers_and_no_allocations()
    return name, fault["message"]


def test_unknown_flavor_and_image(setup, admin_api):
    cloud, flavor, image = setup
    body = cli_body(flavor, image)
    body["server"]["flavorRef"] = "nope"
    assert refused(admin_api, body, 400) == ("badRequest", "Flavor nope could not be found.")
    body = cli_body(flavor, image)
    body["server"]["imageRef"] = body["server"]["block_device_mapping_v2"][0]["uuid"] = (
        "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"
    )
    assert refused(admin_api, body, 400) == ("badRequest", "Can not find requested image")
    queued = cloud.image("queued", status=Image.QUEUED)
    assert refused(admin_api, cli_body(flavor, queued), 400)[1] == f"Image {queued.id} is not active."


def test_private_flavor_and_image_of_another_project(setup, member_api):
    cloud, flavor, image = setup
    private = cloud.flavor("private", is_public=False)
    assert refused(member_api, cli_body(private, image), 400)[1] == f"Flavor {private.flavorid} could not be found."
    theirs = cloud.image("theirs", visibility=Image.PRIVATE, owner="someone-else")
    assert refused(member_api, cli_body(flavor, theirs), 400)[1] == "Can not find requested image"


def test_disabled_flavor(setup, admin_api):
    cloud, flavor, image = setup
    type(flavor).objects.filter(pk=flavor.pk).update(disabled=True)
    assert refused(admin_api, cli_body(flavor, image), 400)[1] == f"Flavor {flavor.flavorid} could not be found."


@pytest.mark.parametrize(
    "zone, message",
    [
        ("a:b:c:d", "Unable to parse availability_zone"),
        ("nowhere", "The requested availability zone is not available"),
    ],
)
def test_bad_zones(setup, admin_api, zone, message):
    cloud, flavor, image = setup
    assert refused(admin_api, cli_body(flavor, image, zone=zone), 400) == ("badRequest", message)


@pytest.mark.parametrize("zone", ["az1:h2", "az1::h2", "az1:h2:h2", ":h1"])
def test_host_forms_are_for_admins(setup, member_api, zone):
    cloud, flavor, image = setup
    name, message = refused(member_api, cli_body(flavor, image, zone=zone), 403)
    assert (name, message) == (
        "forbidden",
        "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.",
    )


@pytest.mark.parametrize(
    "change, field",
    [
        ({"min_count": "x"}, "min_count"),
        ({"min_count": 0}, "min_count"),
        ({"max_count": -1}, "max_count"),
        ({"name": 5}, "name"),
        ({"name": ""}, "name"),
        ({"flavorRef": ""}, "flavorRef"),
        ({"imageRef": "not-a-uuid"}, "imageRef"),
        ({"metadata": {"k": 5}}, "k"),
        ({"metadata": []}, "metadata"),
        ({"networks": "some"}, "networks"),
        ({"networks": [{"uuid": "x"}]}, "uuid"),
        ({"availability_zone": 3}, "availability_zone"),
        ({"description": "d" * 256}, "description"),
        ({"block_device_mapping_v2": [{"source_type": "image", "colour": "red"}]}, "0"),
        ({"block_device_mapping_v2": [{"source_type": "tape"}]}, "source_type"),
        ({"accessIPv4": "10.0.0.256"}, "accessIPv4"),
        ({"accessIPv4": "2001:db8::1"}, "accessIPv4"),
        ({"accessIPv4": 167772161}, "accessIPv4"),
        ({"accessIPv6": "10.0.0.1"}, "accessIPv6"),
        ({"accessIPv6": "2001:db8::g"}, "accessIPv6"),
        ({"config_drive": "maybe"}, "config_drive"),
    ],
)
def test_wrong_types(setup, admin_api, change, field):
    cloud, flavor, image = setup
    name, message = refused(admin_api, cli_body(flavor, image, **change), 400)
    assert message.startswith(f"Invalid input for field/attribute {field}."), message


def test_unknown_keys(setup, admin_api):
    cloud, flavor, image = setup
    name, message = refused(admin_api, cli_body(flavor, image, colour="red"), 400)
    assert "Additional properties are not allowed ('colour' was unexpected)" in message
    body = cli_body(flavor, image)
    body["extra"] = {}
    assert "'extra' was unexpected" in refused(admin_api, body, 400)[1]
    # description only from 2.19, host from 2.74
    assert (
        "'description' was unexpected" in refused(admin_api, cli_body(flavor, image, description="x"), 400, "2.18")[1]
    )
    assert "'host' was unexpected" in refused(admin_api, cli_body(flavor, image, host="h1"), 400, "2.73")[1]


def test_min_count_above_max_count(setup, admin_api):
    cloud, flavor, image = setup
    body = cli_body(flavor, image, min_count=3, max_count=2)
    assert refused(admin_api, body, 400) == ("badRequest", "min_count must be <= max_count")


def test_networks_are_required_from_2_37(setup, admin_api):
    cloud, flavor, image = setup
    body = cli_body(flavor, image)
    del body["server"]["networks"]
    message = refused(admin_api, body, 400, "2.37")[1]
    assert message.startswith("Invalid input for field/attribute server.")
    assert message.endswith("'networks' is a required property")
    response = admin_api.post("/servers", body, version="2.36")
    assert response.status_code == 202, response.content
    assert admin_api.delete(f"/servers/{response.json()['server']['id']}").status_code == 204
    Server.objects.all().delete()
    body["server"]["networks"] = "none"
    message = refused(admin_api, body, 400, "2.36")[1]
    assert message.startswith("Invalid input for field/attribute networks.")


def test_volume_boots_are_refused(setup, admin_api):
    cloud, flavor, image = setup
    body = cli_body(flavor, image, imageRef="")
    body["server"]["block_device_mapping_v2"] = [
        {
            "uuid": "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11",
            "boot_index": 0,
            "source_type": "volume",
            "destination_type": "volume",
        }
    ]
    name, message = refused(admin_api, body, 400)
    assert "Corral boots servers from images only" in message
    body = cli_body(flavor, image, imageRef="")
    del body["server"]["block_device_mapping_v2"]
    assert refused(admin_api, body, 400)[1] == "Missing imageRef attribute"


def test_requested_destination_from_2_74_is_for_admins(setup, member_api, admin_api):
    cloud, flavor, image = setup
    name, message = refused(member_api, cli_body(flavor, image, host="h1"), 403)
    assert "requested_destination" in message
    assert refused(admin_api, cli_body(flavor, image, host="nope"), 400)[1] == "Compute host nope could not be found."
    message = refused(admin_api, cli_body(flavor, image, host="h1", availability_zone="nova:h1"), 400)[1]
    assert "mutually exclusive" in message


def test_too_much_metadata(setup, admin_api):
    cloud, flavor, image = setup
    body = cli_body(flavor, image, metadata={f"k{n}": "v" for n in range(129)})
    assert refused(admin_api, body, 403) == ("forbidden", "Maximum number of metadata items exceeds 128")


def test_malformed_bodies(setup, admin_api):
    response = admin_api.post("/servers", raw="{", version=V)
    assert response.status_code == 400 and "badRequest" in response.json()
    assert refused(admin_api, {}, 400)[1] == "'server' is a required property"
    assert refused(admin_api, {"server": "x"}, 400)[1].startswith("Invalid input for field/attribute server.")
    anon = ApiClient()
    assert anon.post("/servers", {"server": {}}, version=V).status_code == 401


def test_zero_disk_flavors_are_for_admins(setup, member_api):
    cloud, flavor, image = setup
    zero = cloud.flavor("zero", disk=0)
    assert refused(member_api, cli_body(zero, image), 403) == (
        "forbidden",
        "Only volume-backed servers are allowed for flavors with zero disk.",
    )


def test_an_image_too_big_for_the_flavor(setup, admin_api):
    cloud, flavor, image = setup
    Image.objects.filter(pk=image.pk).update(min_ram=4096)
    assert refused(admin_api, cli_body(flavor, image), 400)[1] == "Flavor's memory is too small for requested image."


def test_networks_ports_and_key_pairs_do_not_exist_in_corral(setup, admin_api):
    cloud, flavor, image = setup
    network = "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"
    assert refused(admin_api, cli_body(flavor, image, networks=[{"uuid": network}]), 400)[1] == (
        f"Network {network} could not be found."
    )
    assert refused(admin_api, cli_body(flavor, image, networks=[{"port": network}]), 400)[1] == (
        f"Port id {network} could not be found."
    )
    assert refused(admin_api, cli_body(flavor, image, key_name="mykey"), 400)[1] == "Invalid key_name provided."
