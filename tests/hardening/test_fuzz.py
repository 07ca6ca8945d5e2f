"""No single request may cause a 500 (issue 11).

Every write endpoint of every API gets hostile payloads (tests/plugins/hostile_payloads.py)
built from a valid body: deep nesting, an oversized body, lone surrogates and NUL in every
string and key, NaN/±Infinity/overflowing numbers in every number, wrong
types in every leaf, unexpected keys in every object, and NUL in path ids.
Each must be refused with a 4xx in the API's own format and leave every
table as it was (row count and a checksum of the rows of each)."""

import json
import uuid

import pytest
from django.conf import settings
from django.test import Client

from aggregates.hosts.models import Service
from aggregates.identity.models import Project
from tests.plugins.api import ApiClient
from tests.plugins.hostile_payloads import (
    changed_tables,
    check,
    dump,
    glance_format,
    keystone_format,
    mutations,
    nova_format,
    placement_format,
    snapshot,
)


def expand(endpoints, skip_unexpected=None):
    cases = []
    for method, path, body in endpoints:
        skips = (skip_unexpected or {}).get((method, path), ())
        for name, raw in mutations(body, skips):
            cases.append((name, method, path, raw))
    return cases


COUNTS = {}


def _report(api, cases, problems):
    COUNTS[api] = len(cases)
    print(f"\n{api}: {len(cases)} payloads")
    assert not problems, f"{len(problems)} of {len(cases)} payloads misbehaved:\n" + "\n".join(problems[:60])


# --- compute --------------------------------------------------------------------------


@pytest.fixture
def compute_world(admin_api, make_host):
    make_host("node1")
    make_host("node2")
    aggregate = admin_api.post("/os-aggregates", {"aggregate": {"name": "agg", "availability_zone": "az1"}})
    assert aggregate.status_code == 200, aggregate.content
    aggregate_id = aggregate.json()["aggregate"]["id"]
    admin_api.post(f"/os-aggregates/{aggregate_id}/action", {"add_host": {"host": "node1"}})
    flavor = {"name": "f1", "ram": 512, "vcpus": 1, "disk": 1, "id": "f1"}
    assert admin_api.post("/flavors", {"flavor": flavor}).status_code == 200
    private = {"name": "fp", "ram": 512, "vcpus": 1, "disk": 1, "id": "fp", "os-flavor-access:is_public": False}
    assert admin_api.post("/flavors", {"flavor": private}).status_code == 200
    admin_api.post("/flavors/fp/action", {"addTenantAccess": {"tenant": "p1"}})
    admin_api.post("/flavors/f1/os-extra_specs", {"extra_specs": {"k": "v"}})
    return {
        "aggregate": aggregate_id,
        "service": str(Service.objects.get(host="node1").uuid),
        "project": Project.objects.get(name="demo").id,
    }


def compute_endpoints(world):
    agg, svc = world["aggregate"], world["service"]
    flavor = {
        "name": "fz",
        "ram": 512,
        "vcpus": 1,
        "disk": 1,
        "id": "fz",
        "swap": 0,
        "rxtx_factor": 1.0,
        "OS-FLV-EXT-DATA:ephemeral": 0,
        "os-flavor-access:is_public": True,
        "description": "d",
    }
    registration = {
        "host": "fzhost",
        "vcpus": 4,
        "memory_mb": 1024,
        "local_gb": 10,
        "hypervisor_type": "QEMU",
        "host_ip": "10.0.0.9",
        "running_vms": 0,
        "cpu_info": {},  # free-form: any keys and values
        "cpu_allocation_ratio": 4.0,
        "reserved_host_memory_mb": 512,
    }
    return [
        ("post", "/os-aggregates", {"aggregate": {"name": "fz", "availability_zone": "fzaz"}}),
        ("put", f"/os-aggregates/{agg}", {"aggregate": {"name": "fz2", "availability_zone": "az2"}}),
        ("post", f"/os-aggregates/{agg}/action", {"add_host": {"host": "node2"}}),
        ("post", f"/os-aggregates/{agg}/action", {"remove_host": {"host": "node1"}}),
        ("post", f"/os-aggregates/{agg}/action", {"set_metadata": {"metadata": {"k2": "v2", "k3": None}}}),
        ("post", "/flavors", {"flavor": flavor}),
        ("put", "/flavors/f1", {"flavor": {"description": "new"}}),
        ("post", "/flavors/fp/action", {"addTenantAccess": {"tenant": "p2"}}),
        ("post", "/flavors/fp/action", {"removeTenantAccess": {"tenant": "p1"}}),
        # (numbers of any size are valid extra spec values, as in Nova)
        ("post", "/flavors/f1/os-extra_specs", {"extra_specs": {"k2": "v2", "k3": "3"}}),
        ("put", "/flavors/f1/os-extra_specs/k", {"k": "v3"}),
        ("put", "/os-services/disable", {"host": "node1", "binary": "nova-compute"}),
        ("put", "/os-services/disable-log-reason", {"host": "node1", "binary": "nova-compute", "disabled_reason": "r"}),
        ("put", "/os-services/force-down", {"host": "node1", "binary": "nova-compute", "forced_down": True}),
        ("put", f"/os-services/{svc}", {"status": "disabled", "disabled_reason": "r", "forced_down": False}),
        ("post", "/os-host-registrations", {"registration": registration}),
        ("put", f"/os-quota-sets/{world['project']}", {"quota_set": {"instances": 50, "cores": "60", "force": True}}),
        ("put", "/os-quota-class-sets/default", {"quota_class_set": {"instances": 50, "ram": "60000"}}),
        (
            "post",
            "/os-address-pools",
            {"address_pool": {"name": "fz", "cidr": "10.77.0.0/24", "gateway": "10.77.0.1", "kind": "external"}},
        ),
        (
            "post",
            "/os-server-groups",
            {"server_group": {"name": "fz", "policy": "anti-affinity", "rules": {"max_server_per_host": 2}}},
        ),
    ]


def compute_version(path):
    if path.startswith("/os-services/") and path.count("-") > 3:
        return "2.53"
    if path.startswith("/os-services/"):
        return "2.11"
    if path.startswith("/os-server-groups"):
        return "2.64"
    return "2.55" if path.startswith("/flavors") else None


@pytest.mark.heavy
def test_compute_api_refuses_every_hostile_payload(admin_api, compute_world):
    endpoints = compute_endpoints(compute_world)
    skips = {
        # Metadata keys and extra spec keys are the caller's own: only their
        # values' types are checked (the wrong-type variants cover them).
        ("post", f"/os-aggregates/{compute_world['aggregate']}/action"): [("set_metadata", "metadata")],
        ("post", "/flavors/f1/os-extra_specs"): [("extra_specs",)],
        ("post", "/os-host-registrations"): [("registration", "cpu_info")],
    }
    cases = expand(endpoints, skips)
    cases += [
        ("NUL in path id", "put", "/os-aggregates/%00", dump({"aggregate": {"name": "x"}})),
        ("NUL in path id", "post", "/flavors/f1%00/os-extra_specs", dump({"extra_specs": {"a": "b"}})),
        ("NUL in path id", "put", "/flavors/f1/os-extra_specs/k%00", dump({"k%00": "v"})),
        ("NUL in path id", "get", "/flavors/%00", None),
        ("NUL in path id", "put", "/os-services/%00", dump({"status": "disabled"})),
        ("NUL in query", "get", "/os-hypervisors?hypervisor_hostname_pattern=%00", None),
        ("NUL in path id", "get", "/os-server-groups/%00", None),
        ("NUL in path id", "delete", "/os-server-groups/%00", None),
        ("NUL in query", "get", "/os-server-groups?limit=%00", None),
    ]

    admin_api.client.raise_request_exception = False  # a 500 is a finding, not a crash of the test

    def send(method, path, raw):
        return admin_api.request(method, path, raw=raw, version=compute_version(path))

    _report("compute", cases, check(send, cases, nova_format))


# --- identity -------------------------------------------------------------------------


@pytest.mark.heavy
def test_identity_api_refuses_every_hostile_payload(db, token_for):
    admin = ApiClient(token_for("admin", "admin-user"))
    admin.client.raise_request_exception = False
    login = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": "admin-user", "domain": {"id": "default"}, "password": "admin-user-pw"}},
            },
            "scope": {"project": {"name": "demo", "domain": {"id": "default"}}},
        }
    }
    project = admin.post("/identity/v3/projects", {"project": {"name": "fz-existing"}}).json()["project"]
    user = admin.post("/identity/v3/users", {"user": {"name": "fz-user", "password": "pw"}}).json()["user"]
    # Keystone lets payloads of other methods ride along in "identity", and
    # its user schema takes attributes beyond the named ones (Corral takes
    # them without keeping them; tests/aggregates/test_identity_admin_api.py checks that).
    skips = {
        ("post", "/identity/v3/auth/tokens"): [("auth", "identity")],
        ("post", "/identity/v3/users"): [("user",)],
        ("patch", f"/identity/v3/users/{user['id']}"): [("user",)],
    }
    project_body = {"name": "fz", "description": "d", "enabled": True, "domain_id": "default", "parent_id": "default"}
    user_body = {
        "name": "fz",
        "password": "pw",
        "default_project_id": project["id"],
        "domain_id": "default",
        "enabled": True,
        "email": "fz@example.test",
        "description": "d",
    }
    endpoints = [
        ("post", "/identity/v3/auth/tokens", login),
        ("post", "/identity/v3/projects", {"project": project_body}),
        ("patch", f"/identity/v3/projects/{project['id']}", {"project": {**project_body, "name": "fz2"}}),
        ("post", "/identity/v3/users", {"user": user_body}),
        ("patch", f"/identity/v3/users/{user['id']}", {"user": {**user_body, "name": "fz2"}}),
    ]
    cases = expand(endpoints, skips)
    cases += [
        ("NUL in path id", "get", "/identity/v3/projects/%00", None),
        ("NUL in query", "get", "/identity/v3/projects?name=%00", None),
        ("NUL in subject token", "get", "/identity/v3/auth/tokens", None),
        ("NUL in user id", "get", "/identity/v3/users/%00", None),
        ("NUL in grant", "put", f"/identity/v3/projects/{project['id']}/users/%00/roles/%00", None),
        ("NUL in assignment filter", "get", "/identity/v3/role_assignments?user.id=%00", None),
    ]

    def send(method, path, raw):
        headers = {"X-Subject-Token": "abc\x00"} if "subject" in path else None
        return admin.request(method, path, raw=raw, headers=headers)

    _report("identity", cases, check(send, cases, keystone_format))


# --- placement --------------------------------------------------------------------------


def _placement_client():
    client = Client(raise_request_exception=False)

    def send(method, path, raw):
        headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement latest", "Accept": "application/json"}
        kwargs = {"headers": headers}
        if raw is not None:
            kwargs["data"] = raw
            kwargs["content_type"] = "application/json"
        return getattr(client, method)("/placement" + path, **kwargs)

    return send


@pytest.mark.heavy
def test_placement_api_refuses_every_hostile_payload(db, settings):
    settings.AUTH_STRATEGY = "noauth2"
    send = _placement_client()
    rp = str(uuid.uuid4())
    assert send("post", "/resource_providers", json.dumps({"name": "rp1", "uuid": rp})).status_code == 200
    inventory = {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1, "allocation_ratio": 2.0}
    put = {"resource_provider_generation": 0, "inventories": {"VCPU": inventory}}
    assert send("put", f"/resource_providers/{rp}/inventories", json.dumps(put)).status_code == 200
    generation = 1
    consumer = str(uuid.uuid4())
    allocation = {
        "allocations": {rp: {"resources": {"VCPU": 1}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    memory = {**inventory, "total": 1024, "max_unit": 1024, "resource_class": "MEMORY_MB"}
    endpoints = [
        ("post", "/resource_providers", {"name": "fz", "uuid": str(uuid.uuid4())}),
        ("put", f"/resource_providers/{rp}", {"name": "renamed"}),
        (
            "put",
            f"/resource_providers/{rp}/inventories",
            {"resource_provider_generation": generation, "inventories": {"VCPU": {**inventory, "total": 16}}},
        ),
        ("post", f"/resource_providers/{rp}/inventories", memory),
        (
            "put",
            f"/resource_providers/{rp}/inventories/VCPU",
            {**inventory, "resource_provider_generation": generation},
        ),
        (
            "put",
            f"/resource_providers/{rp}/aggregates",
            {"aggregates": [str(uuid.uuid4())], "resource_provider_generation": generation},
        ),
        ("put", f"/resource_providers/{rp}/traits", {"traits": ["HW_CPU_X86_AVX"], "resource_provider_generation": 1}),
        ("post", "/resource_classes", {"name": "CUSTOM_FZ"}),
        ("post", "/allocations", {consumer: allocation}),
        ("put", f"/allocations/{consumer}", allocation),
        (
            "post",
            "/reshaper",
            {
                "inventories": {rp: {"resource_provider_generation": generation, "inventories": {"VCPU": inventory}}},
                "allocations": {},
            },
        ),
    ]
    # Keys the caller chooses (consumers and providers are validated as uuids by
    # the schema; resource class keys by pattern): unexpected keys there are
    # refused too, so nothing is skipped.
    cases = expand(endpoints)
    cases += [
        ("int inside an inventories map", "put", f"/resource_providers/{rp}/inventories", None),
        ("int inside a reshaper inventories map", "post", "/reshaper", None),
        ("negative allocation ratio", "put", f"/resource_providers/{rp}/inventories/VCPU", None),
        ("NUL in path id", "get", "/resource_providers/%00", None),
        ("NUL in path id", "put", "/traits/CUSTOM_%00", None),
        ("NUL in path id", "put", "/resource_classes/CUSTOM_A%00", None),
        ("NUL in query", "get", "/resource_providers?name=%00", None),
    ]
    specials = {
        "int inside an inventories map": {
            "resource_provider_generation": generation,
            "inventories": {"VCPU": inventory, "unexpected": 1},
        },
        "int inside a reshaper inventories map": {
            "inventories": {
                rp: {"resource_provider_generation": generation, "inventories": {"VCPU": inventory, "x": 1}}
            },
            "allocations": {},
        },
        "negative allocation ratio": {
            **inventory,
            "allocation_ratio": -1.0,
            "resource_provider_generation": generation,
        },
    }
    cases = [(n, m, p, json.dumps(specials[n]) if n in specials else raw) for n, m, p, raw in cases]
    _report("placement", cases, check(send, cases, placement_format))


# --- image ------------------------------------------------------------------------------


@pytest.mark.heavy
def test_image_api_refuses_every_hostile_payload(db, token_for, tmp_path, settings):
    settings.IMAGE_STORE_DIR = tmp_path / "images"
    token = token_for("admin", "img-admin")
    client = Client(raise_request_exception=False)

    def send(method, path, raw, content_type="application/json"):
        headers = {"X-Auth-Token": token, "Accept": "application/json"}
        if method == "patch":
            content_type = "application/openstack-images-v2.1-json-patch"
        return client.generic(
            method.upper(), "/image/v2" + path, data=raw or "", content_type=content_type, headers=headers
        )

    created = send("post", "/images", json.dumps({"name": "img", "disk_format": "qcow2", "container_format": "bare"}))
    assert created.status_code == 201, created.content
    image = created.json()["id"]
    create = {
        "name": "fz",
        "disk_format": "qcow2",
        "container_format": "bare",
        "visibility": "private",
        "min_disk": 1,
        "min_ram": 1,
        "tags": ["t"],
        "protected": False,
    }
    patch = [{"op": "replace", "path": "/name", "value": "renamed"}, {"op": "add", "path": "/min_ram", "value": 5}]
    added = send("post", f"/images/{image}/members", json.dumps({"member": "p1"}))
    assert added.status_code == 200, added.content
    members, member = f"/images/{image}/members", f"/images/{image}/members/p1"
    # Glance keeps unknown top-level keys of a create as extra properties,
    # a JSON patch operation ignores members it does not define (RFC 6902),
    # and the member bodies' readers take their one key and ignore the rest.
    skips = {
        ("post", "/images"): [()],
        ("patch", f"/images/{image}"): [(0,), (1,)],
        ("post", members): [()],
        ("put", member): [()],
    }
    endpoints = [
        ("post", "/images", create),
        ("patch", f"/images/{image}", patch),
        ("post", members, {"member": "p2"}),
        ("put", member, {"status": "accepted"}),
    ]
    cases = expand(endpoints, skips)
    cases += [
        ("NUL in path id", "patch", "/images/%00", json.dumps(patch)),
        ("NUL in tag", "put", f"/images/{image}/tags/t%00", None),
        ("NUL in path id", "put", f"/images/{image}%00/file", None),
    ]
    _report("image", cases, check(send, cases, glance_format))


def test_payload_classes_are_all_generated():
    names = [name for name, _raw in mutations({"a": "s", "n": 1, "o": {}})]
    for expected in ("deep nesting", "oversized", "surrogate", "NUL", "NaN", "Infinity", "wrong type", "unexpected"):
        assert any(expected in name for name in names), expected
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE < 3 * 1024 * 1024


@pytest.mark.parametrize("endpoint", ["POST /allocations", "PUT /allocations/{consumer}", "POST /reshaper"])
def test_a_refused_allocation_leaves_no_rows(db, settings, endpoint):
    """The project, user and consumer type a refused write names are not
    left behind: the whole write is one transaction."""
    settings.AUTH_STRATEGY = "noauth2"
    send = _placement_client()
    rp = str(uuid.uuid4())
    assert send("post", "/resource_providers", json.dumps({"name": "rp1", "uuid": rp})).status_code == 200
    put = {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}}
    assert send("put", f"/resource_providers/{rp}/inventories", json.dumps(put)).status_code == 200
    consumer = str(uuid.uuid4())
    body = {
        "allocations": {rp: {"resources": {"VCPU": 9}}},
        "project_id": "new-project",
        "user_id": "new-user",
        "consumer_generation": None,
        "consumer_type": "NEW_TYPE",
    }
    method, path = endpoint.lower().split(" ")
    if path == "/reshaper":
        inventories = {rp: {"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 8}}}}
        payload = {"inventories": inventories, "allocations": {consumer: body}}
    elif path == "/allocations":
        payload = {consumer: body}
    else:
        payload = body
    before = snapshot()
    response = send(method, path.format(consumer=consumer), json.dumps(payload))
    assert response.status_code == 409, response.content
    assert "exceed the capacity" in response.json()["errors"][0]["detail"]
    assert changed_tables(before, snapshot()) == []
    # The same write within capacity creates them.
    body["allocations"][rp]["resources"]["VCPU"] = 8
    response = send(method, path.format(consumer=consumer), json.dumps(payload))
    assert response.status_code in (200, 204), response.content
    assert set(changed_tables(before, snapshot())) >= {"placement.project", "placement.user", "placement.consumertype"}
