"""A placement client speaking noauth2 (as upstream's functional tests do)."""

import json
import uuid

import pytest
from django.test import Client


class PlacementClient:
    def __init__(self, token="admin", version="latest"):
        self.client = Client()
        self.token = token
        self.version = version

    def request(self, method, path, body=None, version=None, headers=None, raw=None):
        request_headers = {}
        if self.token:
            request_headers["X-Auth-Token"] = self.token
        version = version or self.version
        if version:
            request_headers["OpenStack-API-Version"] = f"placement {version}"
        request_headers.update(headers or {})
        kwargs = {"headers": request_headers}
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        if data is not None:
            kwargs["data"] = data
            kwargs["content_type"] = request_headers.pop("Content-Type", "application/json")
        return getattr(self.client, method)("/placement" + path, **kwargs)

    def get(self, path, **kw):
        return self.request("get", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("post", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("put", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("delete", path, **kw)

    # -- setup helpers (all through the API) --

    def provider(self, name, parent=None, inventory=None, traits=None, aggregates=None):
        rp_uuid = str(uuid.uuid4())
        body = {"name": name, "uuid": rp_uuid}
        if parent:
            body["parent_provider_uuid"] = parent
        assert self.post("/resource_providers", body).status_code == 200
        if inventory:
            self.set_inventory(rp_uuid, inventory)
        if traits:
            for name_ in traits:
                if name_.startswith("CUSTOM_"):
                    self.put(f"/traits/{name_}")
            gen = self.get(f"/resource_providers/{rp_uuid}").json()["generation"]
            response = self.put(
                f"/resource_providers/{rp_uuid}/traits", {"traits": traits, "resource_provider_generation": gen}
            )
            assert response.status_code == 200, response.content
        if aggregates:
            gen = self.get(f"/resource_providers/{rp_uuid}").json()["generation"]
            response = self.put(
                f"/resource_providers/{rp_uuid}/aggregates",
                {"aggregates": aggregates, "resource_provider_generation": gen},
            )
            assert response.status_code == 200, response.content
        return rp_uuid

    def set_inventory(self, rp_uuid, inventory):
        gen = self.get(f"/resource_providers/{rp_uuid}").json()["generation"]
        inventories = {rc: (v if isinstance(v, dict) else {"total": v}) for rc, v in inventory.items()}
        for rc in inventories:
            if rc.startswith("CUSTOM_"):
                self.put(f"/resource_classes/{rc}")
        response = self.put(
            f"/resource_providers/{rp_uuid}/inventories",
            {"resource_provider_generation": gen, "inventories": inventories},
        )
        assert response.status_code == 200, response.content

    def allocate(self, consumer, allocations, generation=None, project="proj", user="user", **kw):
        body = {
            "allocations": {rp: {"resources": res} for rp, res in allocations.items()},
            "project_id": project,
            "user_id": user,
            "consumer_generation": generation,
            "consumer_type": "INSTANCE",
        }
        return self.put(f"/allocations/{consumer}", body, **kw)


@pytest.fixture
def noauth(settings):
    settings.AUTH_STRATEGY = "noauth2"


@pytest.fixture
def placement(db, noauth):
    return PlacementClient()


@pytest.fixture
def user_placement(db, noauth):
    return PlacementClient(token="alice:project-a")


def new_uuid():
    return str(uuid.uuid4())
