"""No request to /servers may cause a 500 or change anything when refused:
the hostile variants of the CLI's create body, and of the bodies that
change a server (tests/hardening/test_fuzz.py's payloads), each get a Nova
4xx fault and leave every table as it was."""

import pytest
from django.utils import timezone

from aggregates.flavors import services as flavors
from aggregates.images.models import Image
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body
from tests.plugins.hostile_payloads import check, dump, mutations, nova_format


@pytest.mark.heavy
def test_create_refuses_every_hostile_payload(db, admin_api, system):
    flavor = flavors.create_flavor(system, name="m1", ram=512, vcpus=1, disk=1)
    image = Image.objects.create(name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, size=1024)
    body = cli_body(flavor, image, metadata={"k": "v"}, description="d")
    body["os:scheduler_hints"] = {"different_host": ["6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"]}
    # Metadata keys are the caller's own and scheduler hints are open-ended
    # (Nova's additionalProperties: true): an unexpected key there is no error.
    skips = {("server", "metadata"), ("os:scheduler_hints",)}
    cases = [(name, "post", "/servers", raw) for name, raw in mutations(body, skips)]
    cases += [
        ("NUL in path id", "get", "/servers/%00", None),
        ("NUL in path id", "delete", "/servers/%00", None),
        ("NUL in query", "get", "/servers/detail?name=%00", None),
        ("huge count", "post", "/servers", dump(cli_body(flavor, image, min_count="9" * 40, max_count="9" * 40))),
        ("bad changes-since", "get", "/servers/detail?changes-since=yesterday", None),
    ]
    admin_api.client.raise_request_exception = False

    def send(method, path, raw):
        return admin_api.request(method, path, raw=raw, version="2.100")

    problems = check(send, cases, nova_format)
    assert len(cases) > 70
    assert not problems, "\n".join(problems[:40])
    # A limit above the maximum is the maximum, as in Nova.
    assert admin_api.get("/servers/detail?limit=" + "9" * 40).status_code == 200


@pytest.mark.heavy
def test_metadata_tags_update_and_admin_actions_refuse_every_hostile_payload(db, admin_api, system):
    """The same for the routes that change a server: its update, metadata,
    tags, the state reset, resize and revertResize, on an active server of the admin's own."""
    server = Server.objects.create(
        name="vm1", project_id="p", vm_state=Server.ACTIVE, launched_at=timezone.now(), metadata={"k": "v"}
    )
    base = f"/servers/{server.uuid}"
    endpoints = [
        ("put", base, {"server": {"name": "n", "description": "d", "accessIPv4": "192.0.2.1", "hostname": "h"}}),
        ("post", f"{base}/metadata", {"metadata": {"k": "v2"}}),
        ("put", f"{base}/metadata", {"metadata": {"k": "v2"}}),
        ("put", f"{base}/metadata/k", {"meta": {"k": "v2"}}),
        ("put", f"{base}/tags", {"tags": ["a", "b"]}),
        ("post", f"{base}/action", {"os-resetState": {"state": "error"}}),
        ("post", f"{base}/action", {"resize": {"flavorRef": "1", "OS-DCF:diskConfig": "AUTO"}}),
        ("post", f"{base}/action", {"revertResize": None}),
    ]
    cases = [(name, method, path, raw) for method, path, body in endpoints for name, raw in mutations(body)]
    cases += [
        ("NUL in path id", "put", f"{base}/tags/a%00", None),
        ("NUL in path id", "get", f"{base}/metadata/k%00", None),
        ("NUL in path id", "get", "/servers/%00/os-instance-actions", None),
        ("NUL in query", "get", f"{base}/os-instance-actions?marker=%00", None),
        ("bad changes-since", "get", f"{base}/os-instance-actions?changes-since=yesterday", None),
        ("tag body", "put", f"{base}/tags/a", dump({"tag": "a"})),
        ("NUL in path id", "get", "/servers/%00/os-server-password", None),
        ("NUL in path id", "get", "/os-simple-tenant-usage/%00", None),
        ("NUL in query", "get", "/os-simple-tenant-usage?start=%00", None),
        ("bad start", "get", "/os-simple-tenant-usage?start=yesterday", None),
        ("bad marker", "get", "/os-simple-tenant-usage?marker=nope", None),
        ("bad timestamp", "get", "/os-instance_usage_audit_log/yesterday", None),
        ("NUL in path id", "get", "/os-instance_usage_audit_log/%00", None),
    ]
    admin_api.client.raise_request_exception = False

    def send(method, path, raw):
        return admin_api.request(method, path, raw=raw, version="2.100")

    problems = check(send, cases, nova_format)
    assert len(cases) > 60
    assert not problems, "\n".join(problems[:40])
