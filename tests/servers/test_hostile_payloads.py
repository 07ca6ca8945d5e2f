"""No request to /servers may cause a 500 or change anything when refused:
the hostile variants of the CLI's create body (tests/hardening/test_fuzz.py's
payloads) each get a Nova 4xx fault and leave every table as it was."""

import pytest

from aggregates.flavors import services as flavors
from aggregates.images.models import Image
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
