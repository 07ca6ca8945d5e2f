"""The console's image pages: list, detail, the upload form (plain and the
JavaScript path with progress) and delete."""

import hashlib
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.core.files.uploadedfile import SimpleUploadedFile

from aggregates.identity import services as identity
from aggregates.images import services as images
from aggregates.images.models import Image

DATA = b"console image bytes " * 5000


@pytest.fixture
def project(db):
    return identity.ensure_project("admin")


@pytest.fixture
def uploaded(system, project):
    image = images.create_image(
        system,
        {
            "name": "cirros",
            "disk_format": "qcow2",
            "container_format": "bare",
            "owner": project.id,
            "hw_disk_bus": "scsi",
        },
    )
    images.upload_image_data(system, str(image.id), [DATA])
    return Image.objects.get(pk=image.id)


def test_list_shows_images_and_filters(admin_client, system, uploaded):
    images.create_image(system, {"name": "other", "visibility": "private"})
    response = admin_client.get("/images/")
    assert response.status_code == 200
    assert [i.name for i in response.context["page"]] == ["other", "cirros"]
    content = response.content.decode()
    assert f"/images/{uploaded.id}/" in content and "Upload image" in content
    assert [i.name for i in admin_client.get("/images/?name=cir").context["page"]] == ["cirros"]
    assert [i.name for i in admin_client.get("/images/?status=queued").context["page"]] == ["other"]
    assert [i.name for i in admin_client.get("/images/?visibility=private").context["page"]] == ["other"]


def test_readers_see_but_cannot_upload(reader_client, uploaded):
    response = reader_client.get("/images/")
    assert response.status_code == 200 and "Upload image" not in response.content.decode()
    assert reader_client.get(f"/images/{uploaded.id}/").status_code == 200
    assert reader_client.get("/images/new/").status_code == 403
    assert reader_client.post(f"/images/{uploaded.id}/delete/").status_code == 403
    assert Image.objects.filter(pk=uploaded.id).exists()


def test_non_staff_are_sent_to_log_in(non_staff_client, client):
    assert client.get("/images/").status_code == 302
    assert non_staff_client.get("/images/").status_code == 302


def test_detail_shows_properties_size_checksums_and_the_cache_section(admin_client, uploaded):
    response = admin_client.get(f"/images/{uploaded.id}/")
    assert response.status_code == 200
    assert response.context["properties"] == {"hw_disk_bus": "scsi"}
    content = response.content.decode()
    assert hashlib.md5(DATA).hexdigest() in content
    assert hashlib.sha512(DATA).hexdigest() in content
    assert f"{len(DATA)} bytes" in content
    assert "Where it is cached" in content and "Not tracked yet" in content
    assert "image.upload" in content  # its events
    assert admin_client.get("/images/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_upload_form_has_a_progress_bar_and_its_script(admin_client, project):
    response = admin_client.get("/images/new/")
    assert response.status_code == 200
    content = response.content.decode()
    assert 'enctype="multipart/form-data"' in content and "data-image-upload" in content
    assert "<progress" in content and "dashboard/image_upload.js" in content
    assert response.context["form"].fields["owner"].initial == project.id
    script = Path(finders.find("dashboard/image_upload.js")).read_text()
    assert 'upload.addEventListener("progress"' in script and "application/octet-stream" in script


def test_upload_without_javascript(admin_client, project, image_store):
    form = {
        "name": "cirros",
        "disk_format": "raw",
        "container_format": "bare",
        "visibility": "public",
        "owner": project.id,
        "min_disk": "1",
        "min_ram": "",
        "file": SimpleUploadedFile("cirros.img", DATA),
    }
    response = admin_client.post("/images/new/", form)
    image = Image.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/images/{image.id}/"
    assert (image.status, image.size, image.checksum) == ("active", len(DATA), hashlib.md5(DATA).hexdigest())
    assert (image.owner, image.visibility, image.min_disk, image.disk_format) == (project.id, "public", 1, "raw")
    assert (image_store / str(image.id)).read_bytes() == DATA


def test_upload_with_javascript_creates_then_streams_the_body(admin_client, project, image_store):
    form = {"name": "js", "disk_format": "qcow2", "container_format": "bare", "visibility": "shared"}
    response = admin_client.post("/images/new/", {**form, "owner": project.id}, headers={"Accept": "application/json"})
    assert response.status_code == 201
    body = response.json()
    assert Image.objects.get(pk=body["id"]).status == "queued"
    assert body["upload_url"] == f"/images/{body['id']}/upload/" and body["detail_url"] == f"/images/{body['id']}/"
    response = admin_client.post(body["upload_url"], DATA, content_type="application/octet-stream")
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "active", "size": len(DATA), "checksum": hashlib.md5(DATA).hexdigest()}
    assert Image.objects.get(pk=body["id"]).os_hash_value == hashlib.sha512(DATA).hexdigest()
    # a second upload is refused as the API refuses it
    response = admin_client.post(body["upload_url"], b"more", content_type="application/octet-stream")
    assert response.status_code == 409 and "transition" in response.json()["error"]


def test_upload_endpoint_refuses_too_large_and_leaves_the_image_queued(admin_client, system, settings, image_store):
    settings.IMAGE_MAX_BYTES = 100
    image = images.create_image(system, {"name": "big", "disk_format": "raw", "container_format": "bare"})
    response = admin_client.post(f"/images/{image.id}/upload/", b"x" * 101, content_type="application/octet-stream")
    assert response.status_code == 413 and "too large" in response.json()["error"]
    assert Image.objects.get(pk=image.id).status == "queued"
    assert not image_store.exists() or list(image_store.iterdir()) == []


def test_invalid_form_changes_nothing(admin_client, project):
    response = admin_client.post("/images/new/", {"name": "", "disk_format": "exe", "owner": project.id})
    assert response.status_code == 400
    assert set(response.context["form"].errors) >= {"name", "disk_format"}
    response = admin_client.post(
        "/images/new/",
        {"name": "", "disk_format": "qcow2", "owner": project.id},
        headers={"Accept": "application/json"},
    )
    assert response.status_code == 400 and "name" in response.json()["errors"]
    assert not Image.objects.exists()


def test_delete_and_protected_images(admin_client, system, uploaded, django_capture_on_commit_callbacks, image_store):
    images.update_image(system, str(uploaded.id), [images.Change("replace", "protected", True)])
    page = admin_client.get(f"/images/{uploaded.id}/").content.decode()
    assert "A protected image cannot be deleted" in page
    response = admin_client.post(f"/images/{uploaded.id}/delete/", follow=True)
    assert "is protected and cannot be deleted" in response.content.decode()
    assert Image.objects.filter(pk=uploaded.id).exists()
    images.update_image(system, str(uploaded.id), [images.Change("replace", "protected", False)])
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(f"/images/{uploaded.id}/delete/")
    assert response.status_code == 302 and response["Location"] == "/images/"
    assert not Image.objects.exists() and list(image_store.iterdir()) == []


def test_nav_links_to_images(admin_client):
    content = admin_client.get("/images/").content.decode()
    assert '<a href="/images/" class="active">Images</a>' in content


def test_where_it_is_cached_asks_the_hosts_caches(admin_client, uploaded, settings, tmp_path, make_host):
    """The hosts' own listings say which hold the image now (here the
    in-process driver's directories); a host that cannot answer is named."""
    settings.CACHE_DRIVER, settings.HOST_CACHE_DIR = "inprocess", tmp_path / "host-cache"
    make_host("holder")
    make_host("empty")
    (tmp_path / "host-cache" / "holder").mkdir(parents=True)
    (tmp_path / "host-cache" / "holder" / str(uploaded.id)).write_bytes(DATA)
    page = admin_client.get(f"/images/{uploaded.id}/").content.decode()
    assert "Held now by 1 of 2 hosts" in page and "/hosts/holder/" in page

    settings.CACHE_DRIVER, settings.AGENT_SHARED_SECRET = "agent", ""  # the agents cannot be asked
    page = admin_client.get(f"/images/{uploaded.id}/").content.decode()
    assert "No host's cache lists this image now" in page and "AGENT_SHARED_SECRET" in page
