"""AUTH_STRATEGY=external-keystone against a real Keystone 30.0.0 (one per
session, tests/keystone/conftest.py): the stock CLI authenticated by that
Keystone drives Corral, whose catalog ``register_keystone_catalog`` put
there; Keystone's roles as upstream's defaults (a member's token also says
reader, which reads no admin view); a revoked token refused once its cache
entry expires; Keystone frozen or gone answers 503 in each API's format
within the timeout; an operator policy file takes effect."""

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest
import requests

from aggregates.hostagent.client import CorralClient, keystone_tokens
from tests.keystone.conftest import ADMIN_PASSWORD, PASSWORD, SERVICE_PASSWORD
from tests.plugins.upstream_placement import free_port

# One Keystone for the module: its tests run on one xdist worker.
pytestmark = [pytest.mark.processes, pytest.mark.slow, pytest.mark.xdist_group("keystone")]

TIMEOUT = 2.0  # the fault test's bound (the others allow a loaded machine's Keystone 15 s)

CLOUDS_YAML = """\
clouds:
  kscloud:
    auth_type: password
    auth:
      auth_url: {auth_url}/v3
      username: admin
      password: {password}
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    identity_api_version: 3
    interface: public
    region_name: RegionOne
"""


def get(url, token, **headers):
    return requests.get(url, headers={"X-Auth-Token": token, **headers}, timeout=30)


def short_lived_token(keystone, username, project, seconds):
    """A token of ``username`` on ``project`` that has expired: issued for an
    application credential that expires in ``seconds`` (Keystone ends the
    token with its credential), returned once that time has passed."""
    user_token = keystone.token(username, PASSWORD, project)
    user_id = keystone.id_of("user", username)
    expires = datetime.now(UTC) + timedelta(seconds=seconds)
    body = {
        "application_credential": {"name": f"short-{time.time()}", "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%S")}
    }
    created = requests.post(
        f"{keystone.url}/v3/users/{user_id}/application_credentials",
        json=body,
        headers={"X-Auth-Token": user_token},
        timeout=60,
    )
    assert created.status_code == 201, created.text
    credential = created.json()["application_credential"]
    method = {"id": credential["id"], "secret": credential["secret"]}
    auth = {"auth": {"identity": {"methods": ["application_credential"], "application_credential": method}}}
    issued = requests.post(f"{keystone.url}/v3/auth/tokens", json=auth, timeout=60)
    assert issued.status_code == 201, issued.text
    time.sleep(max(0.0, (expires - datetime.now(UTC)).total_seconds()) + 1.5)
    return issued.headers["X-Subject-Token"]


@pytest.mark.cli
def test_stock_cli_through_keystone(cloud, keystone, openstack_cli, make_host, tmp_path):
    (tmp_path / "clouds.yaml").write_text(CLOUDS_YAML.format(auth_url=keystone.url, password=ADMIN_PASSWORD))
    env = {key: value for key, value in os.environ.items() if not key.startswith("OS_")}
    env["HOME"] = str(tmp_path)
    env.pop("XDG_CONFIG_HOME", None)

    def cli(*args):
        done = subprocess.run(
            [openstack_cli, "--os-cloud", "kscloud", *args, "-f", "json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None

    # The catalog is Keystone's, with Corral's three services in it.
    services = {row["Type"] for row in cli("catalog", "list")}
    assert {"compute", "placement", "image", "identity"} <= services

    make_host("ks-h1")
    node = make_host("ks-h2")
    aggregate = cli("aggregate", "create", "--zone", "az1", "fast")
    cli("aggregate", "add", "host", "fast", "ks-h2")
    assert cli("aggregate", "show", "fast")["hosts"] == ["ks-h2"]
    flavor = cli(
        "flavor",
        "create",
        "--ram",
        "512",
        "--vcpus",
        "1",
        "--disk",
        "1",
        "--property",
        "hw:cpu_policy=shared",
        "m1.tiny",
    )
    assert flavor["properties"] == {"hw:cpu_policy": "shared"}

    source = tmp_path / "disk.img"
    source.write_bytes(b"corral through keystone" * 100)
    image = cli("image", "create", "--file", str(source), "--disk-format", "qcow2", "--public", "cirros")
    assert image["status"] == "active" and image["size"] == source.stat().st_size

    server = cli(
        "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--availability-zone", "az1",
        "--nic", "none", "--wait", "vm1",
    )  # fmt: skip
    assert server["status"] == "ACTIVE" and server["OS-EXT-SRV-ATTR:host"] == "ks-h2"

    # Corral's own calls to its placement (the mirroring, the claim) carried
    # Keystone tokens of its service user: placement took them.
    providers = {row["name"]: row["uuid"] for row in cli("resource", "provider", "list")}
    assert str(node.uuid) in providers.values()
    assert cli("resource", "provider", "aggregate", "list", str(node.uuid)) == [{"uuid": aggregate["uuid"]}]

    # Nova's project managers move their project's servers without naming a
    # host (the server is the admin project's); a member may not, nor may a
    # manager name the host.
    keystone.ensure_user("mia", "admin", "manager")
    keystone.ensure_user("moe", "admin", "member")
    manager, member = keystone.token("mia", PASSWORD, "admin"), keystone.token("moe", PASSWORD, "admin")

    def act(token, body):
        headers = {"X-Auth-Token": token, "OpenStack-API-Version": "compute 2.56"}
        return requests.post(
            f"{cloud}/compute/v2.1/servers/{server['id']}/action", json=body, headers=headers, timeout=60
        )

    live = {"os-migrateLive": {"host": None, "block_migration": "auto"}}
    assert act(member, {"migrate": None}).status_code == 403
    assert act(member, live).status_code == 403
    assert act(manager, {"migrate": {"host": "ks-h1"}}).status_code == 403
    moved = act(manager, {"migrate": None})
    assert moved.status_code == 202, moved.text


def test_roles_as_upstream_defaults(cloud, keystone):
    member = keystone.token("alice", PASSWORD, "demo")
    reader = keystone.token("rita", PASSWORD, "demo")
    admin = keystone.token("admin", ADMIN_PASSWORD, "admin")

    # A member is refused the admin operations, in each API's format; its
    # token says reader too, but that reads no admin view here.
    refused = requests.post(
        f"{cloud}/compute/v2.1/os-aggregates",
        json={"aggregate": {"name": "nope"}},
        headers={"X-Auth-Token": member},
        timeout=30,
    )
    assert refused.status_code == 403
    assert (
        refused.json()["forbidden"]["message"]
        == "Policy doesn't allow os_compute_api:os-aggregates:create to be performed."
    )
    assert get(f"{cloud}/compute/v2.1/os-aggregates", member).status_code == 403
    assert get(f"{cloud}/compute/v2.1/os-hypervisors", member).status_code == 403
    placement = get(f"{cloud}/placement/resource_providers", member)
    assert placement.status_code == 403 and placement.json()["errors"][0]["status"] == 403
    assert get(f"{cloud}/compute/v2.1/os-aggregates", admin).status_code == 200
    assert get(f"{cloud}/placement/resource_providers", admin).status_code == 200

    # A reader lists but cannot write.
    assert get(f"{cloud}/compute/v2.1/flavors", reader).status_code == 200
    assert get(f"{cloud}/image/v2/images", reader).status_code == 200
    written = requests.post(
        f"{cloud}/image/v2/images",
        json={"name": "nope", "disk_format": "raw", "container_format": "bare"},
        headers={"X-Auth-Token": reader},
        timeout=30,
    )
    assert written.status_code == 403, written.text
    member_image = requests.post(
        f"{cloud}/image/v2/images",
        json={"name": "mine", "disk_format": "raw", "container_format": "bare"},
        headers={"X-Auth-Token": member},
        timeout=30,
    )
    assert member_image.status_code == 201, member_image.text

    # A bad token is refused, naming the Keystone to get one from; an
    # invalid X-Service-Token refuses the request even with a good token.
    bad = get(f"{cloud}/compute/v2.1/flavors", "not-a-token")
    assert bad.status_code == 401 and bad.headers["WWW-Authenticate"] == f'Keystone uri="{keystone.url}"'
    assert get(f"{cloud}/compute/v2.1/flavors", member, **{"X-Service-Token": "not-a-token"}).status_code == 401
    service = keystone.token("corral", SERVICE_PASSWORD, "service")
    assert get(f"{cloud}/compute/v2.1/flavors", member, **{"X-Service-Token": service}).status_code == 200

    # An expired user token: refused alone, let through by a service's token
    # (a service finishing a user's long operation), not by a user's.
    expired = short_lived_token(keystone, "alice", "demo", seconds=5)
    assert get(f"{cloud}/compute/v2.1/servers", expired).status_code == 401
    with_service = get(f"{cloud}/compute/v2.1/servers", expired, **{"X-Service-Token": service})
    assert with_service.status_code == 200, with_service.text
    assert get(f"{cloud}/compute/v2.1/servers", expired, **{"X-Service-Token": reader}).status_code == 401

    # Corral serves no identity API of its own in this mode.
    assert requests.get(f"{cloud}/identity/v3", timeout=30).status_code == 404


def test_policy_file_grants_a_role_one_more_rule(cloud, keystone, settings, tmp_path):
    member = keystone.token("alice", PASSWORD, "demo")
    assert get(f"{cloud}/compute/v2.1/os-aggregates", member).status_code == 403
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text('"os_compute_api:os-aggregates:index": "rule:context_is_admin or role:member"\n')
    settings.POLICY_FILE = str(policy_file)
    assert get(f"{cloud}/compute/v2.1/os-aggregates", member).status_code == 200
    assert get(f"{cloud}/compute/v2.1/os-hypervisors", member).status_code == 403


def test_revoked_token_refused_once_its_cache_entry_expires(cloud, keystone, settings):
    settings.KEYSTONE_TOKEN_CACHE_SECONDS = 2
    token = keystone.token("alice", PASSWORD, "demo", fresh=True)
    assert get(f"{cloud}/compute/v2.1/flavors", token).status_code == 200
    keystone.revoke(token)
    time.sleep(2.5)  # the cache's bound, and a margin
    assert get(f"{cloud}/compute/v2.1/flavors", token).status_code == 401
    assert get(f"{cloud}/image/v2/images", token).status_code == 401
    assert get(f"{cloud}/placement/resource_providers", token).status_code == 401


TOKEN_CACHE_REDIS = "redis://127.0.0.1:6379/8"

# Another Corral process (a second web worker, say) asked about a token: its
# validation, or the error that stopped it.
CHECK_IN_ANOTHER_PROCESS = """
import django, json, sys
django.setup()
from aggregates.identity import keystone
from config.policy import TokenCheckUnavailable
try:
    facts = keystone.validate(sys.argv[1])
    print(json.dumps({"user": facts and facts["username"]}))
except TokenCheckUnavailable as exc:
    print(json.dumps({"unavailable": str(exc)}))
"""


def test_validations_are_shared_by_every_process_through_redis(cloud, keystone, settings):
    """KEYSTONE_TOKEN_CACHE_URL naming a Redis: a token the live server
    validated is known to another Corral process while Keystone is frozen
    (it never asks Keystone), and a token nobody validated is not (that
    process cannot reach Keystone: 503 material)."""
    settings.CACHES = {
        **settings.CACHES,
        "keystone_tokens": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": TOKEN_CACHE_REDIS},
    }
    seen = keystone.token("alice", PASSWORD, "demo", fresh=True)
    unseen = keystone.token("rita", PASSWORD, "demo", fresh=True)
    assert get(f"{cloud}/compute/v2.1/flavors", seen).status_code == 200
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "AUTH_STRATEGY": "external-keystone",
        "KEYSTONE_AUTH_URL": keystone.url,
        "KEYSTONE_SERVICE_PASSWORD": SERVICE_PASSWORD,
        "KEYSTONE_TOKEN_CACHE_URL": TOKEN_CACHE_REDIS,
        "KEYSTONE_TIMEOUT": str(TIMEOUT),
    }

    def check_in_another_process(token):
        done = subprocess.run(
            [sys.executable, "-c", CHECK_IN_ANOTHER_PROCESS, token],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    keystone.freeze()
    try:
        assert check_in_another_process(seen) == {"user": "alice"}
        assert "unavailable" in check_in_another_process(unseen)
    finally:
        keystone.thaw()


@pytest.mark.parametrize("fault", ["frozen", "down"])
def test_keystone_unavailable_answers_503_in_each_format(cloud, keystone, settings, fault):
    """Keystone accepting connections but never answering (stopped with
    SIGSTOP), or not listening: each API answers 503 in its format within
    the timeout (KEYSTONE_TIMEOUT, here 2 s)."""
    token = keystone.token("alice", PASSWORD, "demo", fresh=True)  # a token no cache holds
    settings.KEYSTONE_TIMEOUT = TIMEOUT
    if fault == "down":
        settings.KEYSTONE_AUTH_URL = f"http://127.0.0.1:{free_port()}"
    else:
        keystone.freeze()
    try:
        compute = get(f"{cloud}/compute/v2.1/flavors", token)
        placement = get(f"{cloud}/placement/resource_providers", token)
        image = get(f"{cloud}/image/v2/images", token, Accept="application/json")
    finally:
        if fault == "frozen":
            keystone.thaw()
    assert compute.status_code == 503 and compute.json()["serviceUnavailable"]["code"] == 503
    assert placement.status_code == 503 and placement.json()["errors"][0]["status"] == 503
    assert image.status_code == 503 and image.json()["code"] == "503 Service Unavailable"
    for answer in (compute, placement, image):
        assert answer.elapsed.total_seconds() < TIMEOUT + 3


def test_host_agent_registers_with_keystone_tokens(cloud, keystone):
    """The host agent's client logs in to Keystone with the OS_* variables
    (no Corral token) and registers its host."""
    environ = {
        "OS_AUTH_URL": f"{keystone.url}/v3",
        "OS_USERNAME": "corral",
        "OS_PASSWORD": SERVICE_PASSWORD,
        "OS_PROJECT_NAME": "service",
    }
    client = CorralClient(cloud, keystone_tokens(environ))
    registered = client.register({"host": "agent-h1", "vcpus": 2, "memory_mb": 2048, "local_gb": 20})
    assert registered["host"] == "agent-h1"
    assert keystone_tokens({}) is None
