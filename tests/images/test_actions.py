"""Deactivating and reactivating an image, as Glance's image actions: 204,
for an admin or the owner project's members; 403 from any status but active
and deactivated; a deactivated image's data is for admins only."""

import uuid

import pytest

from aggregates.audit.models import Event
from aggregates.images.models import Image

from .conftest import GlanceClient, glance_error, image_state, token_of


def active_image(client, data=b"some bytes", **body):
    image = client.create(**body)
    assert client.put_file(image["id"], data).status_code == 204
    return image


def act(client, image_id, action):
    return client.post(f"/images/{image_id}/actions/{action}", raw="", content_type="")


def test_owner_deactivates_and_reactivates(member):
    image = active_image(member)
    response = act(member, image["id"], "deactivate")
    assert response.status_code == 204 and response.content == b""
    assert member.get(f"/images/{image['id']}").json()["status"] == "deactivated"
    assert Image.objects.get().status == Image.DEACTIVATED
    # Twice is a no-op, as Glance.
    assert act(member, image["id"], "deactivate").status_code == 204
    listed = member.get("/images?status=deactivated").json()["images"]
    assert [i["id"] for i in listed] == [image["id"]]
    assert act(member, image["id"], "reactivate").status_code == 204
    assert member.get(f"/images/{image['id']}").json()["status"] == "active"
    assert act(member, image["id"], "reactivate").status_code == 204
    events = Event.objects.filter(event_type__in=["image.deactivate", "image.reactivate"]).order_by("id")
    assert [e.event_type for e in events] == ["image.deactivate", "image.reactivate"]


def test_deactivated_data_is_for_admins_only(member, admin):
    image = active_image(member, data=b"secret bytes")
    act(member, image["id"], "deactivate")
    message = glance_error(member.get(f"/images/{image['id']}/file"), 403)
    assert "deactivated" in message
    response = admin.get(f"/images/{image['id']}/file", headers={"Accept": "*/*"})
    assert response.status_code == 200 and b"".join(response.streaming_content) == b"secret bytes"
    act(member, image["id"], "reactivate")
    assert member.get(f"/images/{image['id']}/file", headers={"Accept": "*/*"}).status_code == 200


@pytest.mark.parametrize("action", ["deactivate", "reactivate"])
def test_only_active_or_deactivated_images(member, action):
    image = member.create()  # queued
    before = image_state()
    message = glance_error(act(member, image["id"], action), 403)
    assert f"Not allowed to {action} image in status 'queued'" in message
    assert image_state() == before


@pytest.mark.parametrize("action", ["deactivate", "reactivate"])
def test_who_may_act(member, other, admin, action):
    image = active_image(member, visibility="community")
    if action == "reactivate":
        act(member, image["id"], "deactivate")
    before = image_state()
    glance_error(act(other, image["id"], action), 403)  # sees it (community) but does not own it
    reader = GlanceClient(token_of("img-reader", "reader", "admin")[0])
    glance_error(act(reader, image["id"], action), 403)
    assert image_state() == before
    assert act(admin, image["id"], action).status_code == 204


def test_unknown_or_unseen_image_is_404(member, other):
    glance_error(act(member, str(uuid.uuid4()), "deactivate"), 404)
    image = active_image(member, visibility="private")
    glance_error(act(other, image["id"], "deactivate"), 404)
    assert Image.objects.get().status == Image.ACTIVE


def test_other_actions_and_methods(member):
    image = active_image(member)
    glance_error(act(member, image["id"], "explode"), 404)
    response = member.get(f"/images/{image['id']}/actions/deactivate")
    assert glance_error(response, 405) and response["Allow"] == "POST"
    assert Image.objects.get().status == Image.ACTIVE
