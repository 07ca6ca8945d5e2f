"""Bad input to any compute write endpoint: a 400 in Nova's format, nothing changed, never a 500."""

import json

import pytest
from django.apps import apps

from aggregates.hosts.models import Service

SNAPSHOT_EXCLUDES = {"Event", "Token"}
LONG = "x" * 256

# Sent to every endpoint: not JSON, JSON of the wrong kind, unknown fields.
COMMON_BODIES = ['{"broken": ', "[]", '"text"', "42", "null", '{"no_such_field": {"x": 1}}']

# endpoint -> (method, path, microversion, bodies of the right shape but wrong types or sizes)
ENDPOINTS = {
    "aggregate create": (
        "post",
        "/os-aggregates",
        None,
        [
            {"aggregate": {"name": LONG}},
            {"aggregate": {"name": 1}},
            {"aggregate": {"name": "ok", "availability_zone": ["az1"]}},
        ],
    ),
    "aggregate update": (
        "put",
        "/os-aggregates/{aggregate}",
        None,
        [{"aggregate": {"name": LONG}}, {"aggregate": {"availability_zone": 3}}],
    ),
    "aggregate action": (
        "post",
        "/os-aggregates/{aggregate}/action",
        None,
        [
            {"add_host": {"host": LONG}},
            {"remove_host": {"host": None}},
            {"set_metadata": {"metadata": {"k": 1}}},
            {"set_metadata": {"metadata": {LONG: "v"}}},
        ],
    ),
    "flavor create": (
        "post",
        "/flavors",
        "2.55",
        [
            {"flavor": {"name": LONG, "ram": 512, "vcpus": 1, "disk": 1}},
            {"flavor": {"name": "f", "ram": "lots", "vcpus": 1, "disk": 1}},
            {"flavor": {"name": "f", "ram": 512, "vcpus": 0, "disk": 1}},
            {"flavor": {"name": "f", "ram": 512, "vcpus": 1, "disk": -1}},
            {"flavor": {"name": "f", "ram": 2**31, "vcpus": 1, "disk": 1}},
            {"flavor": {"name": "f", "ram": 512, "vcpus": 1, "disk": 1, "id": "bad id!"}},
        ],
    ),
    "flavor update": (
        "put",
        "/flavors/{flavor}",
        "2.55",
        [{"flavor": {"description": 5}}, {"flavor": {"description": "d" * 65536}}, {"flavor": {"name": "renamed"}}],
    ),
    "flavor action": (
        "post",
        "/flavors/{flavor}/action",
        None,
        [{"addTenantAccess": {"tenant": 5}}, {"removeTenantAccess": {}}, {"addTenantAccess": {"tenant": LONG}}],
    ),
    "extra specs create": (
        "post",
        "/flavors/{flavor}/os-extra_specs",
        None,
        [
            {"extra_specs": {"k": "v" * 256}},
            {"extra_specs": {LONG: "v"}},
            {"extra_specs": {"k": []}},
            {"extra_specs": "k=v"},
        ],
    ),
    "extra spec update": (
        "put",
        "/flavors/{flavor}/os-extra_specs/k",
        None,
        [{"k": "v" * 256}, {"k": {}}, {"other": "v"}],
    ),
    "service update (action)": (
        "put",
        "/os-services/disable",
        "2.11",
        [
            {"host": LONG, "binary": "nova-compute"},
            {"host": 5, "binary": "nova-compute"},
            {"host": "node1", "binary": ""},
        ],
    ),
    "service update (uuid)": (
        "put",
        "/os-services/{service}",
        "2.53",
        [{"status": "sideways"}, {"status": "disabled", "disabled_reason": LONG}, {"forced_down": "maybe"}],
    ),
    "host registration": (
        "post",
        "/os-host-registrations",
        None,
        [
            {"registration": {"host": LONG, "vcpus": 1, "memory_mb": 1, "local_gb": 1}},
            {"registration": {"host": "h", "vcpus": "many", "memory_mb": 1, "local_gb": 1}},
            {"registration": {"host": "h", "vcpus": -1, "memory_mb": 1, "local_gb": 1}},
            {"registration": {"host": "h", "vcpus": 1, "memory_mb": 1, "local_gb": 1, "host_ip": "999.1.1.1"}},
        ],
    ),
}


def snapshot():
    """Every row of every compute table except the audit log and tokens."""
    tables = {}
    for model in apps.get_app_config("aggregates").get_models():
        if model.__name__ not in SNAPSHOT_EXCLUDES:
            tables[model.__name__] = sorted(map(repr, model.objects.values_list()))
    return tables


@pytest.fixture
def world(admin_api, make_host):
    make_host("node1")
    aggregate = admin_api.post("/os-aggregates", {"aggregate": {"name": "agg", "availability_zone": "az1"}})
    flavor = admin_api.post("/flavors", {"flavor": {"name": "f1", "ram": 512, "vcpus": 1, "disk": 1, "id": "f1"}})
    assert aggregate.status_code == 200 and flavor.status_code == 200, (aggregate.content, flavor.content)
    admin_api.post("/flavors/f1/os-extra_specs", {"extra_specs": {"k": "v"}})
    return {
        "aggregate": aggregate.json()["aggregate"]["id"],
        "flavor": "f1",
        "service": str(Service.objects.get(host="node1").uuid),
    }


def cases():
    for name, (method, path, version, bodies) in ENDPOINTS.items():
        for body in COMMON_BODIES:
            yield pytest.param(method, path, version, body, id=f"{name}: {body[:20]}")
        for body in bodies:
            yield pytest.param(method, path, version, json.dumps(body), id=f"{name}: {json.dumps(body)[:40]}")


@pytest.mark.parametrize("method, path, version, raw", list(cases()))
def test_bad_input_is_a_400_that_changes_nothing(admin_api, world, method, path, version, raw):
    before = snapshot()
    response = admin_api.request(method, path.format(**world), raw=raw, version=version)
    assert response.status_code == 400, response.content
    body = response.json()
    assert list(body) == ["badRequest"]
    assert body["badRequest"]["code"] == 400 and body["badRequest"]["message"]
    assert snapshot() == before
