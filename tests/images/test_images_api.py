"""The Glance v2 image API: discovery, create, show, list, PATCH, delete, tags,
visibility and the audit events."""

import uuid

import pytest

from aggregates.audit.models import Event
from aggregates.images.models import Image, ImageProperty

from .conftest import GlanceClient, glance_error, token_of

CORE_FIELDS = {
    "id",
    "name",
    "status",
    "disk_format",
    "container_format",
    "visibility",
    "size",
    "virtual_size",
    "checksum",
    "os_hash_algo",
    "os_hash_value",
    "protected",
    "os_hidden",
    "min_ram",
    "min_disk",
    "owner",
    "created_at",
    "updated_at",
    "tags",
    "self",
    "file",
    "schema",
}

# --- discovery and the catalog -------------------------------------------------


@pytest.mark.parametrize("path, status", [("/image", 300), ("/image/", 300), ("/image/versions", 200)])
def test_version_documents_need_no_token(client, path, status):
    response = client.get(path, headers={"Accept": "application/json"})
    assert response.status_code == status
    versions = response.json()["versions"]
    current = [v for v in versions if v["status"] == "CURRENT"]
    assert len(current) == 1 and current[0]["id"].startswith("v2.")
    assert current[0]["links"] == [{"rel": "self", "href": "http://testserver/image/v2/"}]
    assert {v["status"] for v in versions} == {"CURRENT", "SUPPORTED"}


def test_catalog_lists_the_image_service(db, client):
    from tests.plugins.api import make_user

    user, _ = make_user("cat-user", "member", "demo")
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": "cat-user", "domain": {"name": "Default"}, "password": "cat-user-pw"}},
            },
            "scope": {"project": {"name": "demo", "domain": {"name": "Default"}}},
        }
    }
    response = client.post("/identity/v3/auth/tokens", body, content_type="application/json")
    assert response.status_code == 201, response.content
    catalog = {entry["type"]: entry for entry in response.json()["token"]["catalog"]}
    assert catalog["image"]["name"] == "glance"
    urls = {e["interface"]: e["url"] for e in catalog["image"]["endpoints"]}
    assert urls["public"] == "http://testserver/image"


def test_api_needs_a_valid_token(db):
    for token in (None, "not-a-token"):
        response = GlanceClient(token).get("/images")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == 401
        assert response["WWW-Authenticate"].startswith("Keystone uri=")


# --- create and show -----------------------------------------------------------


def test_create_as_the_cli_does(member):
    body = {
        "name": "cirros",
        "disk_format": "qcow2",
        "container_format": "bare",
        "owner_specified.openstack.md5": "",
        "owner_specified.openstack.sha256": "",
        "owner_specified.openstack.object": "images/cirros",
    }
    response = member.post("/images", body)
    assert response.status_code == 201, response.content
    image = response.json()
    assert CORE_FIELDS <= set(image)
    assert response["Location"] == f"http://testserver/image/v2/images/{image['id']}"
    assert image["status"] == "queued" and image["size"] is None and image["checksum"] is None
    assert image["os_hash_algo"] is None and image["os_hash_value"] is None and image["virtual_size"] is None
    assert image["visibility"] == "shared" and image["protected"] is False and image["os_hidden"] is False
    assert (image["min_disk"], image["min_ram"], image["tags"]) == (0, 0, [])
    assert image["owner"] == member.project.id
    assert image["owner_specified.openstack.object"] == "images/cirros"
    assert image["owner_specified.openstack.md5"] == ""
    assert "properties" not in image
    assert image["self"] == f"/v2/images/{image['id']}" and image["file"] == f"/v2/images/{image['id']}/file"
    assert image["schema"] == "/v2/schemas/image"
    assert image["created_at"].endswith("Z") and len(image["created_at"]) == 20
    assert member.get(f"/images/{image['id']}").json() == image
    event = Event.objects.get(event_type="image.create")
    assert (event.object_type, event.object_id, event.username) == ("image", image["id"], "img-member")


def test_create_with_every_core_attribute_and_a_chosen_id(member):
    wanted = str(uuid.uuid4())
    image = member.create(
        id=wanted,
        name="full",
        visibility="community",
        min_disk=2,
        min_ram=512,
        protected=True,
        os_hidden=True,
        tags=["a", "b", "a"],
        hw_disk_bus="scsi",
    )
    assert image["id"] == wanted
    assert (image["visibility"], image["min_disk"], image["min_ram"]) == ("community", 2, 512)
    assert image["protected"] is True and image["os_hidden"] is True
    assert image["tags"] == ["a", "b"] and image["hw_disk_bus"] == "scsi"
    assert glance_error(member.post("/images", {"id": wanted}), 409).startswith(f"Image with identifier {wanted}")


def test_only_admins_make_images_public_or_give_them_away(member, admin):
    assert "publicize_image" in glance_error(member.post("/images", {"name": "x", "visibility": "public"}), 403)
    assert glance_error(member.post("/images", {"name": "x", "owner": "someone"}), 403)
    assert not Image.objects.exists()
    image = admin.create(visibility="public", owner=member.project.id)
    assert (image["visibility"], image["owner"]) == ("public", member.project.id)


def test_show_unknown_or_invalid_ids_is_404(member):
    for image_id in (str(uuid.uuid4()), "cirros", "1"):
        assert "No image found with ID" in glance_error(member.get(f"/images/{image_id}"), 404)


def test_visibility_rules(member, other, admin):
    private = member.create(name="private", visibility="private")
    shared = member.create(name="shared")
    community = member.create(name="community", visibility="community")
    public = admin.create(name="public", visibility="public")
    for image in (private, shared):
        glance_error(other.get(f"/images/{image['id']}"), 404)
        assert admin.get(f"/images/{image['id']}").status_code == 200
    for image in (community, public):
        assert other.get(f"/images/{image['id']}").status_code == 200
    names = lambda client, query="": {i["name"] for i in client.get(f"/images{query}").json()["images"]}  # noqa: E731
    assert names(other) == {"public"}  # community ones only when asked for
    assert names(other, "?visibility=community") == {"community"}
    assert names(member) == {"private", "shared", "community", "public"}
    assert names(admin) == {"private", "shared", "community", "public"}
    assert names(other, "?visibility=all") == {"public", "community"}
    # Seeing is not changing: 403 on a visible image, 404 on an invisible one.
    assert "modify_image" in glance_error(
        other.patch(f"/images/{public['id']}", [{"op": "replace", "path": "/name", "value": "x"}]), 403
    )
    glance_error(other.patch(f"/images/{private['id']}", [{"op": "replace", "path": "/name", "value": "x"}]), 404)
    glance_error(other.delete(f"/images/{community['id']}"), 403)
    glance_error(other.delete(f"/images/{shared['id']}"), 404)
    assert Image.objects.count() == 4


def test_readers_see_every_image_but_change_none_of_others(member):
    reader = GlanceClient(token_of("img-reader", "reader", "admin")[0])
    image = member.create(name="private", visibility="private")
    assert reader.get(f"/images/{image['id']}").status_code == 200
    assert [i["name"] for i in reader.get("/images").json()["images"]] == ["private"]
    glance_error(reader.patch(f"/images/{image['id']}", [{"op": "add", "path": "/name", "value": "x"}]), 403)
    glance_error(reader.delete(f"/images/{image['id']}"), 403)
    assert Image.objects.get().name == "private"


def test_noauth2_callers(db, settings):
    """noauth2 (tests only) callers work too: "admin" is an admin."""
    settings.AUTH_STRATEGY = "noauth2"
    client = GlanceClient("alice:proj1")
    image = client.create()
    assert image["owner"] == "proj1"
    assert GlanceClient("admin").get(f"/images/{image['id']}").status_code == 200
    glance_error(GlanceClient("bob:proj2").get(f"/images/{image['id']}"), 404)


# --- list ------------------------------------------------------------------------


@pytest.fixture
def listed(member):
    """Five images, created in this order: e d c b a (by name), and their ids."""
    ids = {}
    for name, status, size in (("e", "queued", None), ("d", "active", 10), ("c", "active", 30)):
        ids[name] = member.create(name=name)["id"]
        Image.objects.filter(pk=ids[name]).update(status=status, size=size)
    ids["b"] = member.create(name="b", visibility="private")["id"]
    ids["a"] = member.create(name="a", hw_disk_bus="scsi", tags=["gold"])["id"]
    return ids


def names_of(response):
    assert response.status_code == 200, response.content
    return [image["name"] for image in response.json()["images"]]


def test_list_defaults_to_newest_first_with_links(member, listed):
    response = member.get("/images")
    assert names_of(response) == ["a", "b", "c", "d", "e"]
    body = response.json()
    assert body["first"] == "/v2/images" and body["schema"] == "/v2/schemas/images"
    assert "next" not in body


@pytest.mark.parametrize(
    "query, expected",
    [
        ("name=c", ["c"]),
        ("name=in:c,e", ["c", "e"]),
        ('name=in:"c",d', ["c", "d"]),
        ("status=active", ["c", "d"]),
        ("visibility=private", ["b"]),
        ("visibility=shared", ["a", "c", "d", "e"]),
        ("size_min=20", ["c"]),
        ("size_max=20", ["d"]),
        ("hw_disk_bus=scsi", ["a"]),
        ("tag=gold", ["a"]),
        ("tag=silver", []),
        ("os_hidden=true", []),
        ("protected=false", ["a", "b", "c", "d", "e"]),
        ("sort_key=name&sort_dir=asc", ["a", "b", "c", "d", "e"]),
        ("sort_key=size&sort_dir=asc", ["e", "b", "a", "d", "c"]),
        ("sort_key=status&sort_key=name&sort_dir=asc&sort_dir=desc", ["d", "c", "e", "b", "a"]),
        ("sort=status:asc,name:desc", ["d", "c", "e", "b", "a"]),
        ("sort=name", ["e", "d", "c", "b", "a"]),
        ("sort=size:desc", ["c", "d", "a", "b", "e"]),
    ],
)
def test_list_filters_and_sorts(member, listed, query, expected):
    assert names_of(member.get(f"/images?{query}")) == expected


def test_list_by_ids(member, listed):
    query = f"id=in:{listed['a']},{listed['d']},{uuid.uuid4()},junk"
    assert names_of(member.get(f"/images?{query}")) == ["a", "d"]
    assert names_of(member.get(f"/images?id={listed['c']}")) == ["c"]


def test_hidden_images_are_listed_only_when_asked_for(member, listed):
    hidden = member.create(name="h", os_hidden=True)
    assert "h" not in names_of(member.get("/images"))
    assert names_of(member.get("/images?os_hidden=True")) == ["h"]
    assert member.get(f"/images/{hidden['id']}").status_code == 200


@pytest.mark.parametrize(
    "sort", ["", "&sort_key=name&sort_dir=asc", "&sort=size:asc", "&sort=size:desc,name:asc", "&sort=status:asc"]
)
def test_paging_follows_next_through_every_image_once(member, listed, sort):
    everything = names_of(member.get(f"/images?limit=100{sort}"))
    seen, url, pages = [], f"/images?limit=2{sort}", 0
    while url:
        body = member.get(url).json()
        seen += [image["name"] for image in body["images"]]
        assert body["first"].startswith("/v2/images?") and "marker" not in body["first"]
        url = body.get("next", "").removeprefix("/v2") or None
        pages += 1
    assert seen == everything and pages == 3


def test_limit_zero_and_the_maximum(member, listed):
    assert names_of(member.get("/images?limit=0")) == []
    assert len(names_of(member.get("/images?limit=5000"))) == 5


# --- PATCH ---------------------------------------------------------------------


def patch(client, image_id, *ops):
    return client.patch(f"/images/{image_id}", list(ops))


def test_set_property_as_the_cli_does(member):
    image = member.create()
    response = patch(member, image["id"], {"op": "add", "path": "/hw_disk_bus", "value": "scsi"})
    assert response.status_code == 200, response.content
    assert response.json()["hw_disk_bus"] == "scsi"
    # add on a present key replaces its value
    body = patch(member, image["id"], {"op": "add", "path": "/hw_disk_bus", "value": "virtio"}).json()
    assert body["hw_disk_bus"] == "virtio"
    assert ImageProperty.objects.get().value == "virtio"
    assert Event.objects.filter(event_type="image.update").count() == 2


def test_patch_core_attributes_replace_and_remove(member):
    image = member.create()
    body = patch(
        member,
        image["id"],
        {"op": "replace", "path": "/name", "value": "renamed"},
        {"op": "add", "path": "/min_ram", "value": 256},
        {"op": "replace", "path": "/protected", "value": True},
        {"op": "add", "path": "/tags", "value": ["x", "y"]},
        {"op": "add", "path": "/visibility", "value": "private"},
        {"op": "add", "path": "/a~1b", "value": "slash"},
        {"op": "add", "path": "/extra", "value": "1"},
        {"op": "replace", "path": "/extra", "value": "2"},
    ).json()
    assert (body["name"], body["min_ram"], body["protected"], body["tags"]) == ("renamed", 256, True, ["x", "y"])
    assert (body["visibility"], body["a/b"], body["extra"]) == ("private", "slash", "2")
    body = patch(member, image["id"], {"op": "remove", "path": "/extra"}, {"op": "add", "path": "/name", "value": None})
    assert body.status_code == 200
    assert "extra" not in body.json() and body.json()["name"] is None
    # the v2.0 media type and its op-as-key form
    response = member.patch(
        f"/images/{image['id']}",
        [{"replace": "/name", "value": "old-style"}],
        content_type="application/openstack-images-v2.0-json-patch",
    )
    assert response.status_code == 200 and response.json()["name"] == "old-style"


@pytest.mark.parametrize(
    "op, status, message",
    [
        ({"op": "replace", "path": "/missing", "value": "x"}, 409, "Property missing does not exist."),
        ({"op": "remove", "path": "/missing"}, 409, "Property missing does not exist."),
        ({"op": "remove", "path": "/name"}, 403, "Property name may not be removed."),
        ({"op": "replace", "path": "/status", "value": "active"}, 403, "Attribute 'status' is read-only."),
        ({"op": "add", "path": "/checksum", "value": "x"}, 403, "Attribute 'checksum' is read-only."),
        ({"op": "add", "path": "/id", "value": str(uuid.uuid4())}, 403, "Attribute 'id' is read-only."),
        ({"op": "add", "path": "/locations", "value": []}, 403, "Attribute 'locations' is reserved."),
        ({"op": "add", "path": "/os_glance_x", "value": "y"}, 403, "Attribute 'os_glance_x' is reserved."),
        ({"op": "add", "path": "/visibility", "value": "public"}, 403, "publicize_image"),
        ({"op": "add", "path": "/owner", "value": "someone"}, 403, "modify_image"),
        ({"op": "add", "path": "/min_ram", "value": "x"}, 400, "is not of type 'integer'"),
        ({"op": "add", "path": "/min_ram", "value": -1}, 400, "less than the minimum"),
        ({"op": "add", "path": "/protected", "value": "yes"}, 400, "is not of type 'boolean'"),
        ({"op": "add", "path": "/visibility", "value": "everyone"}, 400, "is not one of"),
        ({"op": "add", "path": "/disk_format", "value": "exe"}, 400, "is not one of"),
        ({"op": "add", "path": "/prop", "value": 1}, 400, "is not of type 'string'"),
        ({"op": "add", "path": "/name", "value": "x" * 256}, 400, "is too long"),
        ({"op": "add", "path": "/tags", "value": "x"}, 400, "is not of type 'array'"),
        ({"op": "move", "path": "/name", "from": "/x"}, 400, "Invalid operation"),
        ({"op": "add", "path": "name", "value": "x"}, 400, "does not start with"),
        ({"op": "add", "path": "/a/b", "value": "x"}, 400, "Invalid JSON pointer"),
        ({"op": "add", "path": "/", "value": "x"}, 400, "not a valid property name"),
        ({"op": "add", "path": "/name"}, 400, "Unable to find 'value'"),
        ({"path": "/name", "value": "x"}, 400, "Unable to find 'op'"),
        ({"op": "add", "value": "x"}, 400, "Unable to find 'path'"),
        ({"op": 1, "path": "/name", "value": "x"}, 400, "must contain a string"),
        ("not-an-object", 400, "Operations must be JSON objects."),
    ],
)
def test_patch_refusals_change_nothing(member, op, status, message):
    image = member.create(keep="me")
    before = member.get(f"/images/{image['id']}").json()
    # a good op first: the whole patch is refused, the good op included
    response = patch(member, image["id"], {"op": "add", "path": "/good", "value": "1"}, op)
    assert message in glance_error(response, status)
    assert member.get(f"/images/{image['id']}").json() == before


def test_patch_needs_the_json_patch_media_type(member):
    image = member.create()
    response = member.patch(f"/images/{image['id']}", [], content_type="application/json")
    glance_error(response, 415)
    assert "application/openstack-images-v2.1-json-patch" in response["Accept-Patch"]


def test_formats_only_change_while_queued(member):
    image = member.create()
    Image.objects.filter(pk=image["id"]).update(status="active")
    response = patch(member, image["id"], {"op": "replace", "path": "/disk_format", "value": "raw"})
    assert "can be only replaced for a queued image" in glance_error(response, 403)
    assert patch(member, image["id"], {"op": "replace", "path": "/disk_format", "value": "qcow2"}).status_code == 200


def test_admin_publicizes_and_reassigns(member, admin):
    image = member.create()
    body = patch(
        admin,
        image["id"],
        {"op": "replace", "path": "/visibility", "value": "public"},
        {"op": "replace", "path": "/owner", "value": admin.project.id},
    ).json()
    assert (body["visibility"], body["owner"]) == ("public", admin.project.id)


def test_property_quota(member):
    image = member.create(**{f"p{n}": "v" for n in range(128)})
    response = patch(member, image["id"], {"op": "add", "path": "/one_more", "value": "v"})
    assert "Maximum: 128" in glance_error(response, 413)
    glance_error(member.post("/images", {f"p{n}": "v" for n in range(129)}), 413)


# --- tags ------------------------------------------------------------------------


def test_tags_put_and_delete(member):
    image = member.create()
    assert member.request("put", f"/images/{image['id']}/tags/gold").status_code == 204
    assert member.request("put", f"/images/{image['id']}/tags/gold").status_code == 204
    assert member.get(f"/images/{image['id']}").json()["tags"] == ["gold"]
    assert member.delete(f"/images/{image['id']}/tags/gold").status_code == 204
    glance_error(member.delete(f"/images/{image['id']}/tags/gold"), 404)


# --- delete ----------------------------------------------------------------------


def test_delete(member):
    image = member.create()
    assert member.delete(f"/images/{image['id']}").status_code == 204
    glance_error(member.get(f"/images/{image['id']}"), 404)
    glance_error(member.delete(f"/images/{image['id']}"), 404)
    event = Event.objects.get(event_type="image.delete")
    assert event.object_id == image["id"] and event.payload["name"] == "cirros"


def test_protected_images_cannot_be_deleted(member):
    image = member.create(protected=True)
    assert "is protected and cannot be deleted" in glance_error(member.delete(f"/images/{image['id']}"), 403)
    assert Image.objects.filter(pk=image["id"]).exists()
    patch(member, image["id"], {"op": "replace", "path": "/protected", "value": False})
    assert member.delete(f"/images/{image['id']}").status_code == 204
