"""Malformed input to every image endpoint: a 4xx in Glance's format, nothing
changed, never a 500. Also the error format's negotiation (JSON, HTML, text)."""

import pytest

from .conftest import glance_error, image_state

PATCH_TYPE = "application/openstack-images-v2.1-json-patch"
# A fixed id no image has: parallel workers must collect the same test ids.
MISSING = "6f1f2c55-0000-4000-8000-00000000dead"


@pytest.fixture
def images(member, admin):
    """A queued (shared) image with a property and a pending member, a
    protected active one with data, a private one and someone else's public
    one; returns their ids."""
    queued = member.create(name="queued", prop="value")["id"]
    active = member.create(name="active", protected=True)["id"]
    assert member.put_file(active, b"0123456789").status_code == 204
    public = admin.create(name="public", visibility="public")["id"]
    private = member.create(name="private", visibility="private")["id"]
    response = member.post(f"/images/{queued}/members", {"member": "pending-project"})
    assert response.status_code == 200, response.content
    return {"queued": queued, "active": active, "public": public, "private": private}


# (method, path, raw body, content type, extra headers, expected status)
CASES = [
    # create
    ("post", "/images", "{", "application/json", {}, 400),
    ("post", "/images", "", "application/json", {}, 400),
    ("post", "/images", "[]", "application/json", {}, 400),
    ("post", "/images", '"name"', "application/json", {}, 400),
    ("post", "/images", "null", "application/json", {}, 400),
    ("post", "/images", b"\xff\xfe{}", "application/json", {}, 400),
    ("post", "/images", '{"name": 5}', "application/json", {}, 400),
    ("post", "/images", '{"name": "%s"}' % ("x" * 256), "application/json", {}, 400),
    ("post", "/images", '{"visibility": "everyone"}', "application/json", {}, 400),
    ("post", "/images", '{"visibility": "public"}', "application/json", {}, 403),
    ("post", "/images", '{"min_disk": -1}', "application/json", {}, 400),
    ("post", "/images", '{"min_disk": "1"}', "application/json", {}, 400),
    ("post", "/images", '{"min_ram": 2147483648}', "application/json", {}, 400),
    ("post", "/images", '{"min_ram": 1.5}', "application/json", {}, 400),
    ("post", "/images", '{"protected": "true"}', "application/json", {}, 400),
    ("post", "/images", '{"os_hidden": 1}', "application/json", {}, 400),
    ("post", "/images", '{"disk_format": "exe"}', "application/json", {}, 400),
    ("post", "/images", '{"container_format": 1}', "application/json", {}, 400),
    ("post", "/images", '{"tags": "a"}', "application/json", {}, 400),
    ("post", "/images", '{"tags": [1]}', "application/json", {}, 400),
    ("post", "/images", '{"tags": [""]}', "application/json", {}, 400),
    ("post", "/images", '{"id": "not-a-uuid"}', "application/json", {}, 400),
    ("post", "/images", '{"id": 5}', "application/json", {}, 400),
    ("post", "/images", '{"id": "{queued}"}', "application/json", {}, 409),
    ("post", "/images", '{"status": "active"}', "application/json", {}, 403),
    ("post", "/images", '{"checksum": "x"}', "application/json", {}, 403),
    ("post", "/images", '{"size": 1}', "application/json", {}, 403),
    ("post", "/images", '{"os_hash_value": "x"}', "application/json", {}, 403),
    ("post", "/images", '{"self": "x"}', "application/json", {}, 403),
    ("post", "/images", '{"location": "file:///etc/passwd"}', "application/json", {}, 403),
    ("post", "/images", '{"os_glance_import_task": "x"}', "application/json", {}, 403),
    ("post", "/images", '{"owner": "someone-else"}', "application/json", {}, 403),
    ("post", "/images", '{"prop": 1}', "application/json", {}, 400),
    ("post", "/images", '{"prop": null}', "application/json", {}, 400),
    ("post", "/images", '{"prop": ["a"]}', "application/json", {}, 400),
    ("post", "/images", '{"": "x"}', "application/json", {}, 400),
    ("post", "/images", '{"%s": "v"}' % ("k" * 256), "application/json", {}, 400),
    # show / update / delete
    ("get", f"/images/{MISSING}", "", "", {}, 404),
    ("get", "/images/not-a-uuid", "", "", {}, 404),
    ("get", "/images/{public}x", "", "", {}, 404),
    ("patch", "/images/{queued}", "{", PATCH_TYPE, {}, 400),
    ("patch", "/images/{queued}", "", PATCH_TYPE, {}, 400),
    ("patch", "/images/{queued}", "{}", PATCH_TYPE, {}, 400),
    ("patch", "/images/{queued}", "[1]", PATCH_TYPE, {}, 400),
    ("patch", "/images/{queued}", "[[]]", PATCH_TYPE, {}, 400),
    ("patch", "/images/{queued}", '[{"op": "add", "path": 5, "value": "x"}]', PATCH_TYPE, {}, 400),
    ("patch", "/images/{queued}", '[{"op": "add", "path": "/a~2b", "value": "x"}]', PATCH_TYPE, {}, 400),
    ("patch", "/images/{queued}", '[{"op": "test", "path": "/name", "value": "x"}]', PATCH_TYPE, {}, 400),
    ("patch", "/images/{queued}", '[{"op": "add", "path": "/name", "value": "x"}]', "application/json", {}, 415),
    ("patch", "/images/{queued}", '[{"op": "add", "path": "/name", "value": "x"}]', "", {}, 415),
    (
        "patch",
        "/images/{queued}",
        '[{"replace": "/name", "remove": "/prop"}]',
        "application/openstack-images-v2.0-json-patch",
        {},
        400,
    ),
    ("patch", f"/images/{MISSING}", '[{"op": "add", "path": "/name", "value": "x"}]', PATCH_TYPE, {}, 404),
    ("patch", "/images/{public}", '[{"op": "add", "path": "/name", "value": "x"}]', PATCH_TYPE, {}, 403),
    ("patch", "/images/{active}", '[{"op": "add", "path": "/size", "value": 1}]', PATCH_TYPE, {}, 403),
    ("patch", "/images/{active}", '[{"op": "add", "path": "/container_format", "value": "ovf"}]', PATCH_TYPE, {}, 403),
    ("delete", "/images/{active}", "", "", {}, 403),
    ("delete", "/images/{public}", "", "", {}, 403),
    ("delete", f"/images/{MISSING}", "", "", {}, 404),
    ("delete", "/images/junk", "", "", {}, 404),
    ("post", "/images/{queued}", "{}", "application/json", {}, 405),
    ("put", "/images", "{}", "application/json", {}, 405),
    # tags
    ("put", "/images/{queued}/tags/%s" % ("t" * 256), "", "", {}, 400),
    ("put", f"/images/{MISSING}/tags/x", "", "", {}, 404),
    ("delete", "/images/{queued}/tags/absent", "", "", {}, 404),
    # data
    ("put", "/images/{queued}/file", "data", "application/json", {}, 415),
    ("put", "/images/{queued}/file", "data", "text/plain", {}, 415),
    ("put", "/images/{active}/file", "data", "application/octet-stream", {}, 409),
    ("put", f"/images/{MISSING}/file", "data", "application/octet-stream", {}, 404),
    ("put", "/images/{public}/file", "data", "application/octet-stream", {}, 403),
    ("put", "/images/{queued}/file", "data", "application/octet-stream", {"X-OpenStack-Image-Size": "abc"}, 400),
    ("put", "/images/{queued}/file", "data", "application/octet-stream", {"X-OpenStack-Image-Size": "-1"}, 400),
    ("get", f"/images/{MISSING}/file", "", "", {}, 404),
    ("get", "/images/{active}/file", "", "", {"Range": "bytes=100-"}, 416),
    # list
    ("get", "/images?limit=abc", "", "", {}, 400),
    ("get", "/images?limit=-1", "", "", {}, 400),
    ("get", f"/images?marker={MISSING}", "", "", {}, 400),
    ("get", "/images?marker=junk", "", "", {}, 400),
    ("get", "/images?sort_key=bogus", "", "", {}, 400),
    ("get", "/images?sort_dir=up", "", "", {}, 400),
    ("get", "/images?sort_key=name&sort_key=name", "", "", {}, 400),
    ("get", "/images?sort_key=name&sort_key=size&sort_dir=asc&sort_dir=asc&sort_dir=asc", "", "", {}, 400),
    ("get", "/images?sort=name:up", "", "", {}, 400),
    ("get", "/images?sort=a:b:c", "", "", {}, 400),
    ("get", "/images?sort=,", "", "", {}, 400),
    ("get", "/images?sort=name&sort_key=name", "", "", {}, 400),
    ("get", "/images?os_hidden=maybe", "", "", {}, 400),
    ("get", "/images?protected=maybe", "", "", {}, 400),
    ("get", "/images?visibility=everyone", "", "", {}, 400),
    ("get", "/images?status=bogus", "", "", {}, 400),
    ("get", "/images?size_min=x", "", "", {}, 400),
    ("get", "/images?size_max=-1", "", "", {}, 400),
    ("get", "/images?min_ram=x", "", "", {}, 400),
    ("get", '/images?name=in:"unclosed', "", "", {}, 400),
    ("get", "/images?member_status=x", "", "", {}, 400),
    ("get", "/images?created_at=gt:2020-01-01T00:00:00Z", "", "", {}, 400),
    # members (a shared image with a pending member, an unshared private one)
    ("post", "/images/{queued}/members", "{", "application/json", {}, 400),
    ("post", "/images/{queued}/members", "", "application/json", {}, 400),
    ("post", "/images/{queued}/members", '"p"', "application/json", {}, 400),
    ("post", "/images/{queued}/members", '{"project": "p"}', "application/json", {}, 400),
    ("post", "/images/{queued}/members", '{"member": null}', "application/json", {}, 400),
    ("post", "/images/{queued}/members", '{"member": ["p"]}', "application/json", {}, 400),
    ("post", "/images/{queued}/members", '{"member": "%s"}' % ("p" * 256), "application/json", {}, 400),
    ("post", "/images/{queued}/members", '{"member": "pending-project"}', "application/json", {}, 409),
    ("post", "/images/{private}/members", '{"member": "p"}', "application/json", {}, 403),
    ("post", "/images/{public}/members", '{"member": "p"}', "application/json", {}, 403),
    ("post", f"/images/{MISSING}/members", '{"member": "p"}', "application/json", {}, 404),
    ("get", "/images/{private}/members", "", "", {}, 403),
    ("get", f"/images/{MISSING}/members", "", "", {}, 404),
    ("get", "/images/{queued}/members/absent", "", "", {}, 404),
    ("get", "/images/{private}/members/pending-project", "", "", {}, 404),
    ("put", "/images/{queued}/members/pending-project", '{"status": "accepted"}', "application/json", {}, 403),
    ("put", "/images/{queued}/members/absent", '{"status": "accepted"}', "application/json", {}, 404),
    ("put", "/images/{queued}/members/pending-project", "{}", "application/json", {}, 400),
    ("put", "/images/{queued}/members/pending-project", "[]", "application/json", {}, 400),
    ("put", "/images/{queued}/members/pending-project", "", "application/json", {}, 400),
    ("delete", "/images/{queued}/members/absent", "", "", {}, 404),
    ("delete", "/images/{private}/members/absent", "", "", {}, 403),
    ("patch", "/images/{queued}/members", "{}", "application/json", {}, 405),
    ("post", "/images/{queued}/members/pending-project", "{}", "application/json", {}, 405),
    # actions
    ("post", "/images/{queued}/actions/deactivate", "", "", {}, 403),
    ("post", "/images/{queued}/actions/reactivate", "", "", {}, 403),
    ("post", "/images/{public}/actions/deactivate", "", "", {}, 403),
    ("post", f"/images/{MISSING}/actions/deactivate", "", "", {}, 404),
    ("post", "/images/{active}/actions/delete", "", "", {}, 404),
    ("get", "/images/{active}/actions/deactivate", "", "", {}, 405),
    # schemas
    ("post", "/schemas/image", "{}", "application/json", {}, 405),
    ("delete", "/schemas/members", "", "", {}, 405),
    # other paths
    ("get", "/schemas/nothing", "", "", {}, 404),
    ("get", "/nothing", "", "", {}, 404),
]


@pytest.mark.parametrize("method, path, raw, content_type, headers, status", CASES)
def test_bad_input_is_refused_in_glances_format_and_changes_nothing(
    member, images, method, path, raw, content_type, headers, status
):
    path = path.format(**images) if "{" in path else path
    raw = raw.replace("{queued}", images["queued"]) if isinstance(raw, str) else raw
    before = image_state()
    response = member.request(method, path, raw=raw, content_type=content_type, headers=headers)
    glance_error(response, status)
    if status == 405:
        assert response["Allow"]
    assert image_state() == before


def test_the_error_format_follows_the_accept_header(member):
    path = f"/images/{MISSING}"
    member.accept = "application/json"
    body = member.get(path).json()
    message = f"No image found with ID {MISSING}<br /><br />\n\n\n"
    assert body == {"message": message, "code": "404 Not Found", "title": "Not Found"}
    member.accept = None  # no Accept header: webob answers HTML
    response = member.get(path)
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
    assert b"<h1>404 Not Found</h1>" in response.content
    assert f"No image found with ID {MISSING}".encode() in response.content
    member.accept = ""  # what the SDK sends with uploads and PATCHes: plain text
    response = member.get(path)
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode().startswith(f"404 Not Found\n\nNo image found with ID {MISSING}")
    member.accept = "text/html;q=0.5, application/json"
    assert member.get(path)["Content-Type"].startswith("application/json")


def test_an_unexpected_error_is_a_glance_500_not_a_traceback(member, monkeypatch):
    from aggregates.images import services

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(services, "get_image", broken)
    response = member.get(f"/images/{MISSING}")
    assert glance_error(response, 500)
    assert b"boom" not in response.content and b"Traceback" not in response.content
