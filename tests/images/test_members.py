"""Image members, as Glance v2 has them: the owner shares a ``shared`` image
with a project (pending), the member project accepts or rejects it, and the
image then shows in the member's list; by id the member sees it whatever its
answer. Every refusal changes nothing."""

import uuid

import pytest

from aggregates.audit.models import Event
from aggregates.images.models import ImageMember

from .conftest import GlanceClient, glance_error, image_state, token_of

MEMBER_FIELDS = {"member_id", "image_id", "status", "created_at", "updated_at", "schema"}


@pytest.fixture
def third(db):
    """A member of a project the image is never shared with."""
    token, project = token_of("img-third", "member", "third")
    client = GlanceClient(token)
    client.project = project
    return client


def share(owner, image_id, project_id):
    response = owner.post(f"/images/{image_id}/members", {"member": project_id})
    assert response.status_code == 200, response.content
    return response.json()


def names(client, query=""):
    return {image["name"] for image in client.get(f"/images{query}").json()["images"]}


def test_add_a_member_answers_it_pending(member, other):
    image = member.create(name="shared-one")
    body = share(member, image["id"], other.project.id)
    assert set(body) == MEMBER_FIELDS
    assert body["member_id"] == other.project.id and body["image_id"] == image["id"]
    assert body["status"] == "pending" and body["schema"] == "/v2/schemas/member"
    assert body["created_at"].endswith("Z") and body["created_at"] == body["updated_at"]
    assert ImageMember.objects.get().status == "pending"
    event = Event.objects.get(event_type="image.member.create")
    assert event.object_id == image["id"] and event.payload["member_id"] == other.project.id


def test_owner_lists_and_shows_members(member, other, third):
    image = member.create(name="shared-one")
    share(member, image["id"], other.project.id)
    share(member, image["id"], third.project.id)
    listed = member.get(f"/images/{image['id']}/members")
    assert listed.status_code == 200
    body = listed.json()
    assert set(body) == {"members", "schema"} and body["schema"] == "/v2/schemas/members"
    assert sorted(m["member_id"] for m in body["members"]) == sorted([other.project.id, third.project.id])
    shown = member.get(f"/images/{image['id']}/members/{other.project.id}")
    assert shown.status_code == 200 and shown.json()["status"] == "pending"
    assert set(shown.json()) == MEMBER_FIELDS
    # A member project sees its own membership only.
    own = other.get(f"/images/{image['id']}/members").json()["members"]
    assert [m["member_id"] for m in own] == [other.project.id]
    assert "not found" in glance_error(other.get(f"/images/{image['id']}/members/{third.project.id}"), 404)
    assert "not found" in glance_error(member.get(f"/images/{image['id']}/members/nobody"), 404)


def test_duplicate_member_is_409(member, other):
    image = member.create()
    share(member, image["id"], other.project.id)
    before = image_state(), list(ImageMember.objects.values_list("member", "status", "updated_at"))
    message = glance_error(member.post(f"/images/{image['id']}/members", {"member": other.project.id}), 409)
    assert "duplicated" in message
    assert (image_state(), list(ImageMember.objects.values_list("member", "status", "updated_at"))) == before


@pytest.mark.parametrize("visibility", ["private", "public", "community"])
def test_only_shared_images_have_members(member, admin, other, visibility):
    image = (admin if visibility == "public" else member).create(visibility=visibility)
    owner = admin if visibility == "public" else member
    assert "Not allowed to create members" in glance_error(
        owner.post(f"/images/{image['id']}/members", {"member": other.project.id}), 403
    )
    assert "Only shared images have members" in glance_error(owner.get(f"/images/{image['id']}/members"), 403)
    assert not ImageMember.objects.exists()


def test_unknown_or_unseen_image_is_404(member, other):
    glance_error(member.post(f"/images/{uuid.uuid4()}/members", {"member": other.project.id}), 404)
    glance_error(member.get(f"/images/{uuid.uuid4()}/members"), 404)
    private = member.create()  # shared, but not with "other"
    glance_error(other.post(f"/images/{private['id']}/members", {"member": other.project.id}), 404)
    glance_error(other.get(f"/images/{private['id']}/members"), 404)
    assert not ImageMember.objects.exists()


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "Member to be added not specified"),
        ({"member": ""}, "Member can't be empty"),
        ([], "Expected a member in the form"),
        ({"member": 7}, "Expected a member in the form"),
        ({"member": "x" * 256}, "Expected a member in the form"),
    ],
)
def test_bad_member_bodies_are_400(member, body, message):
    image = member.create()
    before = image_state()
    assert message in glance_error(member.post(f"/images/{image['id']}/members", body), 400)
    assert image_state() == before and not ImageMember.objects.exists()


def test_no_body_is_400(member):
    image = member.create()
    response = member.request("post", f"/images/{image['id']}/members")
    assert "Body expected" in glance_error(response, 400)


def test_only_the_owner_adds_and_removes_members(member, other, third):
    image = member.create()
    share(member, image["id"], other.project.id)
    # The member project sees the image but may not share it further, nor remove itself.
    message = glance_error(other.post(f"/images/{image['id']}/members", {"member": third.project.id}), 403)
    assert message.startswith("You are not authorized to complete add_member action.")
    assert "delete_member" in glance_error(other.delete(f"/images/{image['id']}/members/{other.project.id}"), 403)
    assert list(ImageMember.objects.values_list("member", flat=True)) == [other.project.id]
    response = member.delete(f"/images/{image['id']}/members/{other.project.id}")
    assert response.status_code == 204 and response.content == b""
    assert not ImageMember.objects.exists()
    assert Event.objects.filter(event_type="image.member.delete").count() == 1
    glance_error(member.delete(f"/images/{image['id']}/members/{other.project.id}"), 404)
    # Without its membership the other project no longer sees the image.
    glance_error(other.get(f"/images/{image['id']}"), 404)


def test_member_accepts_and_the_image_is_listed(member, other, third):
    image = member.create(name="shared-one")
    share(member, image["id"], other.project.id)
    # Pending: not in the member's list, but shown by id (and in member_status=pending lists).
    assert names(other) == set()
    assert other.get(f"/images/{image['id']}").status_code == 200
    assert names(other, "?member_status=pending") == {"shared-one"}
    assert names(other, "?member_status=all") == {"shared-one"}
    glance_error(third.get(f"/images/{image['id']}"), 404)

    response = other.request("put", f"/images/{image['id']}/members/{other.project.id}", {"status": "accepted"})
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "accepted" and set(response.json()) == MEMBER_FIELDS
    assert ImageMember.objects.get().status == "accepted"
    assert names(other) == {"shared-one"}
    assert names(other, "?member_status=pending") == set()
    assert names(other, "?visibility=shared") == {"shared-one"}
    assert Event.objects.filter(event_type="image.member.update").count() == 1

    response = other.request("put", f"/images/{image['id']}/members/{other.project.id}", {"status": "rejected"})
    assert response.json()["status"] == "rejected"
    assert names(other) == set()
    assert names(other, "?member_status=rejected") == {"shared-one"}
    assert other.get(f"/images/{image['id']}").status_code == 200  # by id, whatever the answer


def test_membership_counts_only_while_the_image_is_shared(member, other):
    image = member.create(name="shared-one")
    share(member, image["id"], other.project.id)
    other.request("put", f"/images/{image['id']}/members/{other.project.id}", {"status": "accepted"})
    member.patch(f"/images/{image['id']}", [{"op": "replace", "path": "/visibility", "value": "private"}])
    glance_error(other.get(f"/images/{image['id']}"), 404)
    assert names(other) == set()


def test_member_downloads_the_shared_image(member, other):
    image = member.create()
    assert member.put_file(image["id"], b"shared bytes").status_code == 204
    share(member, image["id"], other.project.id)
    response = other.get(f"/images/{image['id']}/file", headers={"Accept": "*/*"})
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"shared bytes"


def test_only_the_member_changes_its_status(member, other, admin):
    image = member.create()
    share(member, image["id"], other.project.id)
    path = f"/images/{image['id']}/members/{other.project.id}"
    assert "modify_member" in glance_error(member.request("put", path, {"status": "accepted"}), 403)
    assert ImageMember.objects.get().status == "pending"
    # Glance's policy (modify_member) lets an admin answer for a member too.
    assert admin.request("put", path, {"status": "rejected"}).json()["status"] == "rejected"


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "Status not specified"),
        ([], "Expected a status in the form"),
        ({"status": "all"}, 'Status must be "pending", "accepted" or "rejected"'),
        ({"status": 1}, 'Status must be "pending", "accepted" or "rejected"'),
    ],
)
def test_bad_status_bodies_are_400(member, other, body, message):
    image = member.create()
    share(member, image["id"], other.project.id)
    before = list(ImageMember.objects.values_list("status", "updated_at"))
    path = f"/images/{image['id']}/members/{other.project.id}"
    assert message in glance_error(other.request("put", path, body), 400)
    assert list(ImageMember.objects.values_list("status", "updated_at")) == before


def test_member_quota_is_413(member, settings, monkeypatch):
    from aggregates.images import members

    monkeypatch.setattr(members, "MEMBER_QUOTA", 2)
    image = member.create()
    share(member, image["id"], "p1")
    share(member, image["id"], "p2")
    glance_error(member.post(f"/images/{image['id']}/members", {"member": "p3"}), 413)
    assert ImageMember.objects.count() == 2


def test_members_go_with_their_image(member, other):
    image = member.create()
    share(member, image["id"], other.project.id)
    assert member.delete(f"/images/{image['id']}").status_code == 204
    assert not ImageMember.objects.exists()


def test_methods_not_allowed(member):
    image = member.create()
    response = member.request("patch", f"/images/{image['id']}/members", {})
    assert glance_error(response, 405) and response["Allow"] == "GET, POST"
