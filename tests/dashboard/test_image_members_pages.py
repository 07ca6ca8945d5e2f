"""The console's image page: its members (share with a project, remove one)
and deactivating and reactivating, through the same services as the image
API; readers see all of it and change none of it."""

import pytest

from aggregates.identity import services as identity
from aggregates.images import members
from aggregates.images import services as images
from aggregates.images.models import Image, ImageMember


@pytest.fixture
def image(system, db):
    owner = identity.ensure_project("admin")
    created = images.create_image(
        system, {"name": "cirros", "disk_format": "raw", "container_format": "bare", "owner": owner.id}
    )
    images.upload_image_data(system, str(created.id), [b"console bytes"])
    return Image.objects.get(pk=created.id)


def test_share_with_a_project_by_name_and_remove_it(admin_client, image):
    demo = identity.ensure_project("demo")
    response = admin_client.post(f"/images/{image.id}/members/", {"project": "demo"})
    assert response.status_code == 302 and response["Location"].endswith(f"/images/{image.id}/#members")
    assert list(ImageMember.objects.values_list("member", "status")) == [(demo.id, "pending")]
    page = admin_client.get(f"/images/{image.id}/")
    content = page.content.decode()
    assert 'id="member-projects"' in content and demo.id in content and "pending" in content
    assert [m["name"] for m in page.context["members"]] == ["demo"]

    again = admin_client.post(f"/images/{image.id}/members/", {"project": demo.id})
    assert again.status_code == 400 and "duplicated" in again.content.decode()
    unknown = admin_client.post(f"/images/{image.id}/members/", {"project": "nowhere"})
    assert unknown.status_code == 400 and "No project is named nowhere" in unknown.content.decode()
    assert ImageMember.objects.count() == 1

    response = admin_client.post(f"/images/{image.id}/members/remove/", {"project_id": demo.id})
    assert response.status_code == 302
    assert not ImageMember.objects.exists()


def test_private_images_have_no_members_section_to_fill(admin_client, system, image):
    images.update_image(system, str(image.id), [images.Change("replace", "visibility", "private")])
    content = admin_client.get(f"/images/{image.id}/").content.decode()
    assert 'id="members-unshared"' in content and 'id="add-member"' not in content
    response = admin_client.post(f"/images/{image.id}/members/", {"project": "admin"})
    assert response.status_code == 400 and "Not allowed to create members" in response.content.decode()
    assert not ImageMember.objects.exists()


def test_deactivate_and_reactivate(admin_client, image):
    assert "/deactivate/" in admin_client.get(f"/images/{image.id}/").content.decode()
    assert admin_client.post(f"/images/{image.id}/deactivate/").status_code == 302
    assert Image.objects.get().status == "deactivated"
    assert "/reactivate/" in admin_client.get(f"/images/{image.id}/").content.decode()
    assert admin_client.post(f"/images/{image.id}/reactivate/").status_code == 302
    assert Image.objects.get().status == "active"


def test_a_queued_image_is_not_deactivated(admin_client, system):
    queued = images.create_image(system, {"name": "empty"})
    assert "/deactivate/" not in admin_client.get(f"/images/{queued.id}/").content.decode()
    response = admin_client.post(f"/images/{queued.id}/deactivate/", follow=True)
    assert "Not allowed to deactivate image in status &#x27;queued&#x27;" in response.content.decode()
    assert Image.objects.get(pk=queued.id).status == "queued"


def test_readers_see_members_but_change_nothing(reader_client, system, image):
    demo = identity.ensure_project("demo")
    members.add_member(system, str(image.id), demo.id)
    content = reader_client.get(f"/images/{image.id}/").content.decode()
    assert demo.id in content and 'id="add-member"' not in content and "/deactivate/" not in content
    assert reader_client.post(f"/images/{image.id}/members/remove/", {"project_id": demo.id}).status_code == 403
    assert reader_client.post(f"/images/{image.id}/deactivate/").status_code == 403
    assert ImageMember.objects.count() == 1 and Image.objects.get().status == "active"
