"""Nova's image proxy (to 2.35; 404 from 2.36): Corral's images in Nova's
image view, under the image API's visibility rule, with Nova's list filters
and paging; delete through the image API's rules."""

from datetime import UTC, datetime

from aggregates.identity.models import Project
from aggregates.images.models import Image, ImageProperty
from tests.helpers import fault
from tests.plugins.api import ApiClient


def image(name, status=Image.ACTIVE, visibility=Image.PUBLIC, owner=None, properties=None, **fields):
    row = Image.objects.create(
        name=name, status=status, visibility=visibility, owner=owner, disk_format="qcow2", **fields
    )
    for key, value in (properties or {}).items():
        ImageProperty.objects.create(image=row, name=key, value=value)
    return row


def names(response):
    assert response.status_code == 200, response.content
    return sorted(item["name"] for item in response.json()["images"])


def test_show_in_nova_s_view(db, member_api):
    row = image(
        "snap",
        size=4096,
        min_ram=512,
        min_disk=2,
        properties={"instance_uuid": "3f0c1b1e-1111-4222-8333-944445555666", "auto_disk_config": "True"},
    )
    body = member_api.get(f"/images/{row.id}", version="2.35").json()["image"]
    created = row.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    base = "http://testserver"
    assert body == {
        "id": str(row.id),
        "name": "snap",
        "minRam": 512,
        "minDisk": 2,
        "metadata": {"auto_disk_config": "True", "instance_uuid": "3f0c1b1e-1111-4222-8333-944445555666"},
        "created": created,
        "updated": row.updated_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": "ACTIVE",
        "progress": 100,
        "OS-EXT-IMG-SIZE:size": 4096,
        "links": [
            {"rel": "self", "href": f"{base}/compute/v2.1/images/{row.id}"},
            {"rel": "bookmark", "href": f"{base}/compute/images/{row.id}"},
            {"rel": "alternate", "type": "application/vnd.openstack.image", "href": f"{base}/image/images/{row.id}"},
        ],
        "server": {
            "id": "3f0c1b1e-1111-4222-8333-944445555666",
            "links": [
                {"rel": "self", "href": f"{base}/compute/v2.1/servers/3f0c1b1e-1111-4222-8333-944445555666"},
                {"rel": "bookmark", "href": f"{base}/compute/servers/3f0c1b1e-1111-4222-8333-944445555666"},
            ],
        },
        "OS-DCF:diskConfig": "AUTO",
    }
    for status, shown, progress in (
        (Image.QUEUED, "SAVING", 25),
        (Image.SAVING, "SAVING", 50),
        (Image.DEACTIVATED, "UNKNOWN", 0),
    ):
        Image.objects.filter(pk=row.pk).update(status=status)
        body = member_api.get(f"/images/{row.id}", version="2.1").json()["image"]
        assert (body["status"], body["progress"]) == (shown, progress)
    assert member_api.get(f"/images/{row.id}", version="2.36").status_code == 404
    assert fault(member_api.get("/images/nope", version="2.35"), 404, "itemNotFound") == "Image not found."


def test_lists_follow_the_image_api_s_visibility_and_nova_s_filters(db, member_api, admin_api, token_for):
    demo = Project.objects.get(name="demo").id
    other_api = ApiClient(token_for("member", "other-user", "other"))
    other = Project.objects.get(name="other").id
    image("public-a", min_ram=512, properties={"image_type": "snapshot"})
    image("public-b", status=Image.QUEUED, min_disk=10)
    image("mine", visibility=Image.PRIVATE, owner=demo, properties={"instance_uuid": "abc"})
    image("theirs", visibility=Image.PRIVATE, owner=other)
    assert names(member_api.get("/images", version="2.35")) == ["mine", "public-a", "public-b"]
    assert names(other_api.get("/images/detail", version="2.35")) == ["public-a", "public-b", "theirs"]
    assert names(admin_api.get("/images", version="2.35")) == ["mine", "public-a", "public-b", "theirs"]
    brief = member_api.get("/images?name=mine", version="2.1").json()["images"]
    assert list(brief[0]) == ["id", "name", "links"]
    for query, expected in (
        ("status=SAVING", []),
        ("status=queued", ["public-b"]),
        ("minRam=512", ["public-a"]),
        ("minDisk=10", ["public-b"]),
        ("type=snapshot", ["public-a"]),
        ("server=http://x/servers/abc", ["mine"]),
        ("property-image_type=snapshot", ["public-a"]),
        ("changes-since=2000-01-01T00:00:00Z", ["mine", "public-a", "public-b"]),
        (f"changes-since={datetime(2100, 1, 1).isoformat()}", []),
        ("unknown=1", ["mine", "public-a", "public-b"]),
    ):
        assert names(member_api.get(f"/images/detail?{query}", version="2.35")) == expected, query
    for path in ("/images", "/images/detail"):
        assert member_api.get(path, version="2.36").status_code == 404


def test_paging_with_limit_and_marker(db, member_api):
    for n in range(3):
        image(f"i{n}")
    first = member_api.get("/images?limit=2", version="2.35").json()
    assert len(first["images"]) == 2
    (link,) = first["images_links"]
    marker = first["images"][-1]["id"]
    assert link["rel"] == "next" and link["href"].endswith(f"/compute/v2.1/images?limit=2&marker={marker}")
    rest = member_api.get(f"/images?limit=2&marker={marker}", version="2.35").json()
    assert len(rest["images"]) == 1 and "images_links" not in rest
    seen = {i["id"] for i in first["images"]} | {i["id"] for i in rest["images"]}
    assert len(seen) == 3
    everything = member_api.get("/images?limit=0&marker=", version="2.35").json()  # both as if absent
    assert {i["id"] for i in everything["images"]} == seen and "images_links" not in everything
    message = fault(member_api.get("/images?limit=x", version="2.35"), 400, "badRequest")
    assert message == "Invalid input for query parameters limit. Value: x. 'x' does not match '^[0-9]*$'"
    message = fault(member_api.get("/images/detail?offset=-1", version="2.35"), 400, "badRequest")
    assert message.startswith("Invalid input for query parameters offset. Value: -1."), message
    assert fault(member_api.get("/images?marker=nope", version="2.35"), 400, "badRequest")
    assert fault(member_api.get("/images?changes-since=yesterday", version="2.35"), 400, "badRequest")


def test_delete_under_the_image_api_s_rules(db, member_api, admin_api, reader_api):
    demo = Project.objects.get(name="demo").id
    mine = image("mine", visibility=Image.PRIVATE, owner=demo)
    public = image("public")
    guarded = image("guarded", visibility=Image.PRIVATE, owner=demo, protected=True)
    message = fault(member_api.delete(f"/images/{public.id}", version="2.35"), 403, "forbidden")
    assert message == "You are not allowed to delete the image."
    assert fault(member_api.delete(f"/images/{guarded.id}", version="2.35"), 403, "forbidden")
    assert fault(member_api.delete("/images/nope", version="2.35"), 404, "itemNotFound") == "Image not found."
    assert member_api.delete(f"/images/{mine.id}", version="2.36").status_code == 404
    assert Image.objects.count() == 3
    assert member_api.delete(f"/images/{mine.id}", version="2.35").status_code == 204
    assert not Image.objects.filter(pk=mine.pk).exists()


def props(row):
    return dict(ImageProperty.objects.filter(image=row).values_list("name", "value"))


def test_metadata_read_and_written_through_the_image_api(db, member_api):
    demo = Project.objects.get(name="demo").id
    row = image("mine", visibility=Image.PRIVATE, owner=demo, properties={"a": "1", "b": "2"})
    path = f"/images/{row.id}/metadata"
    assert member_api.get(path, version="2.38").json() == {"metadata": {"a": "1", "b": "2"}}
    assert member_api.get(f"{path}/a", version="2.38").json() == {"meta": {"a": "1"}}
    merged = member_api.post(path, {"metadata": {"b": "3", "c": "4"}}, version="2.38")
    assert merged.status_code == 200, merged.content
    assert merged.json() == {"metadata": {"a": "1", "b": "3", "c": "4"}} and props(row) == merged.json()["metadata"]
    replaced = member_api.put(path, {"metadata": {"z": "9"}}, version="2.38")
    assert replaced.json() == {"metadata": {"z": "9"}} and props(row) == {"z": "9"}
    one = member_api.put(f"{path}/y", {"meta": {"y": "8"}}, version="2.38")
    assert one.json() == {"meta": {"y": "8"}} and props(row) == {"z": "9", "y": "8"}
    assert member_api.delete(f"{path}/z", version="2.38").status_code == 204
    assert props(row) == {"y": "8"}
    for method, args in (("get", ()), ("post", ({"metadata": {"q": "1"}},)), ("put", ({"metadata": {}},))):
        assert getattr(member_api, method)(path, *args, version="2.39").status_code == 404
    assert props(row) == {"y": "8"}


def test_metadata_refusals_change_nothing(db, member_api):
    demo = Project.objects.get(name="demo").id
    mine = image("mine", visibility=Image.PRIVATE, owner=demo, properties={"a": "1"})
    public = image("public", properties={"p": "1"})
    path = f"/images/{mine.id}/metadata"
    assert fault(member_api.get(f"{path}/nope", version="2.1"), 404, "itemNotFound")
    assert fault(member_api.delete(f"{path}/nope", version="2.1"), 404, "itemNotFound") == "Invalid metadata key"
    message = fault(member_api.put(f"{path}/a", {"meta": {"b": "2"}}, version="2.1"), 400, "badRequest")
    assert message == "Request body and URI mismatch"
    for body in ({"metadata": {"k": 1}}, {"metadata": {"": "x"}}, {"meta": {"a": "1"}}, {}):
        assert fault(member_api.post(path, body, version="2.1"), 400, "badRequest"), body
    message = fault(member_api.post(path, {"metadata": {"name": "renamed"}}, version="2.1"), 400, "badRequest")
    assert message == "Metadata key name names an image attribute, not a property."
    message = fault(member_api.put(f"{path}/status", {"meta": {"status": "active"}}, version="2.1"), 403, "forbidden")
    assert message == "Attribute 'status' is read-only."
    too_many = {"metadata": {f"k{n}": "v" for n in range(129)}}
    assert fault(member_api.put(path, too_many, version="2.1"), 403, "forbidden") == "Image metadata limit exceeded"
    message = fault(
        member_api.post(f"/images/{public.id}/metadata", {"metadata": {"x": "1"}}, version="2.1"), 403, "forbidden"
    )
    assert message == f"Not authorized for image {public.id}."
    assert fault(member_api.get("/images/nope/metadata", version="2.1"), 404, "itemNotFound") == "Image not found."
    assert props(mine) == {"a": "1"} and props(public) == {"p": "1"}
    assert Image.objects.get(pk=mine.pk).name == "mine"
