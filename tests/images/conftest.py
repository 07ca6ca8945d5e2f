"""Image API fixtures: an image store of its own per test, and clients that
speak to /image/v2 with a real token, asking for JSON errors as keystoneauth does."""

import json

import pytest
from django.test import Client

from aggregates.identity import services as identity
from aggregates.images.models import Image, ImageMember
from tests.plugins.api import make_user


class GlanceClient:
    def __init__(self, token=None, accept="application/json"):
        self.client = Client()
        self.token = token
        self.accept = accept

    def request(self, method, path, body=None, content_type="application/json", headers=None, raw=None, **extra):
        url = path if path == "/image" or path.startswith(("/image/", "/image?")) else "/image/v2" + path
        all_headers = {}
        if self.token:
            all_headers["X-Auth-Token"] = self.token
        if self.accept is not None:
            all_headers["Accept"] = self.accept
        all_headers.update(headers or {})
        data = raw if raw is not None else (json.dumps(body) if body is not None else "")
        if content_type:
            extra.setdefault("CONTENT_TYPE", content_type)  # also with an empty body
        return self.client.generic(
            method.upper(), url, data=data, content_type=content_type, headers=all_headers, **extra
        )

    def get(self, path, **kw):
        return self.request("get", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("post", path, body, **kw)

    def patch(self, path, ops, content_type="application/openstack-images-v2.1-json-patch", **kw):
        return self.request("patch", path, ops, content_type=content_type, **kw)

    def put_file(self, image_id, data, content_type="application/octet-stream", **kw):
        return self.request("put", f"/images/{image_id}/file", raw=data, content_type=content_type, **kw)

    def delete(self, path, **kw):
        return self.request("delete", path, **kw)

    def create(self, **body):
        body.setdefault("name", "cirros")
        body.setdefault("disk_format", "qcow2")
        body.setdefault("container_format", "bare")
        response = self.post("/images", body)
        assert response.status_code == 201, response.content
        return response.json()


def token_of(username, role, project_name):
    user, project = make_user(username, role, project_name)
    token, _ = identity.issue_token(user, project)
    return token, project


@pytest.fixture
def admin(db):
    token, project = token_of("img-admin", "admin", "admin")
    client = GlanceClient(token)
    client.project = project
    return client


@pytest.fixture
def member(db):
    token, project = token_of("img-member", "member", "demo")
    client = GlanceClient(token)
    client.project = project
    return client


@pytest.fixture
def other(db):
    """A member of another project."""
    token, project = token_of("img-other", "member", "other")
    client = GlanceClient(token)
    client.project = project
    return client


def glance_error(response, status):
    """Assert Glance's JSON error body (webob's) for ``status``; return its message."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"message", "code", "title"}
    assert body["code"].startswith(f"{status} ") and body["code"] == f"{status} {body['title']}"
    return body["message"]


def image_state():
    """Everything the image API could have changed: rows (members included) and stored files."""
    from django.conf import settings

    images = sorted(
        (
            str(image.id),
            image.name,
            image.status,
            image.visibility,
            image.protected,
            image.size,
            image.checksum,
            image.min_disk,
            image.min_ram,
            image.disk_format,
            image.owner,
            image.updated_at,
            tuple(image.property_items.values_list("name", "value")),
            tuple(image.tag_items.values_list("value", flat=True)),
        )
        for image in Image.objects.all()
    )
    members = sorted((str(m.image_id), m.member, m.status, m.updated_at) for m in ImageMember.objects.all())
    store = settings.IMAGE_STORE_DIR
    files = sorted(p.name for p in store.iterdir()) if store.exists() else []
    return images, members, files
