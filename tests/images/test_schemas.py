"""Glance's schema documents at /v2/schemas/*: what image and member bodies
link to. Every body Corral sends validates against them."""

import pytest
from jsonschema import Draft4Validator

from .conftest import GlanceClient


def schema(client, name):
    response = client.get(f"/schemas/{name}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/json")
    return response.json()


def test_image_schema(member):
    document = schema(member, "image")
    assert document["name"] == "image"
    assert document["additionalProperties"] == {"type": "string"}
    assert document["links"] == [
        {"rel": "self", "href": "{self}"},
        {"rel": "enclosure", "href": "{file}"},
        {"rel": "describedby", "href": "{schema}"},
    ]
    properties = document["properties"]
    assert properties["status"]["readOnly"] is True and "deactivated" in properties["status"]["enum"]
    assert properties["visibility"]["enum"] == ["community", "public", "private", "shared"]
    assert None in properties["disk_format"]["enum"] and "qcow2" in properties["disk_format"]["enum"]
    assert "locations" not in properties and "direct_url" not in properties  # Corral has neither
    Draft4Validator.check_schema(document)
    image = member.create(name="cirros", hw_disk_bus="scsi")
    shown = member.get(f"/images/{image['id']}").json()
    assert set(shown) - {"hw_disk_bus"} == set(properties)  # every core field, and no other
    assert not list(Draft4Validator(document).iter_errors(shown))
    assert list(Draft4Validator(document).iter_errors({**shown, "min_ram": "x"}))


def test_images_schema(member):
    document = schema(member, "images")
    assert document["name"] == "images"
    assert set(document["properties"]) == {"images", "first", "next", "schema"}
    assert document["properties"]["images"]["items"] == schema(member, "image")
    assert [link["rel"] for link in document["links"]] == ["first", "next", "describedby"]
    member.create(name="one")
    member.create(name="two")
    listed = member.get("/images?limit=1").json()
    assert "next" in listed
    assert not list(Draft4Validator(document).iter_errors(listed))


def test_member_schemas(member, other):
    one = schema(member, "member")
    assert one["name"] == "member" and "additionalProperties" not in one
    assert set(one["properties"]) == {"member_id", "image_id", "created_at", "updated_at", "status", "schema"}
    assert one["properties"]["status"]["enum"] == ["pending", "accepted", "rejected"]
    many = schema(member, "members")
    assert many["name"] == "members"
    assert many["properties"] == {"members": {"type": "array", "items": one}, "schema": {"type": "string"}}
    assert many["links"] == [{"rel": "describedby", "href": "{schema}"}]
    image = member.create()
    added = member.post(f"/images/{image['id']}/members", {"member": other.project.id}).json()
    assert not list(Draft4Validator(one).iter_errors(added))
    listed = member.get(f"/images/{image['id']}/members").json()
    assert not list(Draft4Validator(many).iter_errors(listed))


@pytest.mark.parametrize("name", ["image", "images", "member", "members"])
def test_schemas_need_a_token_and_take_get_only(member, name):
    assert GlanceClient(None).get(f"/schemas/{name}").status_code == 401
    response = member.post(f"/schemas/{name}", {})
    assert response.status_code == 405 and response["Allow"] == "GET"


def test_unknown_schema_is_404(member):
    assert member.get("/schemas/task-unknown").status_code == 404
