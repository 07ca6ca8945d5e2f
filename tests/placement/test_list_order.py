"""Lists upstream Placement returns in database order (resource classes and
traits in provider summaries, traits lists, the classes named in messages)
come in the same order from Corral: the same calls, side by side, against
upstream placement 16.0.0 and Corral's."""

import json
import re
import uuid

import pytest
import requests

from tests.placement.conftest import PlacementClient
from tests.plugins.upstream_placement import ADMIN_HEADERS

pytestmark = pytest.mark.django_db

VERSION = "1.39"
# Created in this order: not alphabetical, so database order shows.
CUSTOM_TRAITS = ["CUSTOM_ZULU", "CUSTOM_ALPHA", "CUSTOM_MIKE"]
CUSTOM_CLASSES = ["CUSTOM_ZZZ", "CUSTOM_AAA", "CUSTOM_MMM"]
# One standard trait only: upstream inserts the standard traits in set order
# (hash-seeded, so their relative order differs between deployments).
PROVIDER_TRAITS = ["CUSTOM_ZULU", "HW_CPU_X86_AVX", "CUSTOM_ALPHA"]
INVENTORY = {"VCPU": 8, "DISK_GB": 100, "MEMORY_MB": 4096, "CUSTOM_ZZZ": 5, "CUSTOM_AAA": 5, "CUSTOM_MMM": 5}


class Upstream:
    def __init__(self, server):
        self.url = server.url

    def __call__(self, method, path, body=None):
        response = requests.request(
            method,
            self.url + path,
            data=None if body is None else json.dumps(body),
            headers={
                **ADMIN_HEADERS,
                "OpenStack-API-Version": f"placement {VERSION}",
                "Content-Type": "application/json",
            },
            timeout=10,
        )
        return response.status_code, (response.json() if response.content else None)


class Ours:
    def __init__(self, settings):
        settings.AUTH_STRATEGY = "noauth2"
        self.client = PlacementClient(version=VERSION)

    def __call__(self, method, path, body=None):
        response = self.client.request(method.lower(), path, body)
        return response.status_code, (response.json() if response.content else None)


def _scenario(call):
    """The same calls against one placement; returns what to compare (uuids
    replaced by names, request ids dropped)."""
    out = {}
    suffix = uuid.uuid4().hex[:8]
    for name in CUSTOM_TRAITS:
        call("PUT", f"/traits/{name}")
    for name in CUSTOM_CLASSES:
        call("PUT", f"/resource_classes/{name}")
    rp = str(uuid.uuid4())
    assert call("POST", "/resource_providers", {"name": f"cn-{suffix}", "uuid": rp})[0] == 200
    inventories = {rc: {"total": total} for rc, total in INVENTORY.items()}
    status, body = call(
        "PUT", f"/resource_providers/{rp}/inventories", {"resource_provider_generation": 0, "inventories": inventories}
    )
    assert status == 200, body
    out["put inventories"] = list(body["inventories"])
    out["get inventories"] = list(call("GET", f"/resource_providers/{rp}/inventories")[1]["inventories"])
    status, body = call(
        "PUT", f"/resource_providers/{rp}/traits", {"resource_provider_generation": 1, "traits": PROVIDER_TRAITS}
    )
    assert status == 200, body
    out["put traits"] = body["traits"]
    out["get traits"] = call("GET", f"/resource_providers/{rp}/traits")[1]["traits"]
    out["custom traits"] = call("GET", "/traits?name=startswith:CUSTOM_")[1]["traits"]
    out["custom classes"] = [
        rc["name"] for rc in call("GET", "/resource_classes")[1]["resource_classes"] if rc["name"].startswith("CUSTOM_")
    ]
    status, body = call("GET", "/allocation_candidates?resources=VCPU:1,CUSTOM_AAA:1,CUSTOM_ZZZ:1")
    assert status == 200, body
    summary = body["provider_summaries"][rp]
    out["summary resources"] = list(summary["resources"])
    out["summary traits"] = summary["traits"]
    out["request resources"] = list(body["allocation_requests"][0]["allocations"][rp]["resources"])
    consumer = str(uuid.uuid4())
    allocation = {
        "allocations": {rp: {"resources": {"MEMORY_MB": 10, "VCPU": 1, "CUSTOM_MMM": 1, "CUSTOM_AAA": 1}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert call("PUT", f"/allocations/{consumer}", allocation)[0] == 204
    out["allocation resources"] = list(call("GET", f"/allocations/{consumer}")[1]["allocations"][rp]["resources"])
    out["usages"] = list(call("GET", f"/resource_providers/{rp}/usages")[1]["usages"])
    out["provider allocations"] = list(
        call("GET", f"/resource_providers/{rp}/allocations")[1]["allocations"][consumer]["resources"]
    )
    # Inventory in use: the classes named in the message.
    status, body = call(
        "PUT",
        f"/resource_providers/{rp}/inventories",
        {"resource_provider_generation": 2, "inventories": {"DISK_GB": {"total": 1}}},
    )
    assert status == 409, body
    out["in use message"] = re.sub(r"[0-9a-f-]{36}", "<uuid>", body["errors"][0]["detail"])
    status, body = call("DELETE", f"/resource_providers/{rp}/inventories")
    assert status == 409, body
    out["delete in use message"] = re.sub(r"[0-9a-f-]{36}", "<uuid>", body["errors"][0]["detail"])
    status, body = call("DELETE", f"/resource_providers/{rp}")
    out["delete provider message"] = (status, re.sub(r"[0-9a-f-]{36}", "<uuid>", body["errors"][0]["detail"]))
    # Allocating classes a provider has no inventory of: the classes named.
    empty = str(uuid.uuid4())
    assert call("POST", "/resource_providers", {"name": f"empty-{suffix}", "uuid": empty})[0] == 200
    allocation["allocations"] = {empty: {"resources": {"MEMORY_MB": 1, "CUSTOM_MMM": 1, "VCPU": 1}}}
    status, body = call("PUT", f"/allocations/{uuid.uuid4()}", allocation)
    out["no inventory message"] = (status, re.sub(r"[0-9a-f-]{36}", "<uuid>", body["errors"][0]["detail"]))
    call("DELETE", f"/resource_providers/{empty}")
    # clean up upstream's shared database for the next run
    call("DELETE", f"/allocations/{consumer}")
    call("DELETE", f"/resource_providers/{rp}")
    return out


def test_lists_come_in_upstreams_order(upstream_placement, settings):
    upstream = _scenario(Upstream(upstream_placement))
    ours = _scenario(Ours(settings))
    differences = {
        key: {"ours": ours.get(key), "upstream": value} for key, value in upstream.items() if ours.get(key) != value
    }
    assert not differences, json.dumps(differences, indent=1)
