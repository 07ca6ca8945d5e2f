"""The WSGI application every server Corral ships serves (config.wsgi):
ready for its first request (the URLconfs and every view module imported
when a worker starts), and chunked request bodies read whole, or refused
with 411 in the called API's format, never taken as empty."""

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from django.test import Client

from config import chunked
from tests.plugins.hostile_payloads import glance_format, keystone_format, placement_format
from tests.plugins.upstream_placement import free_port
from tests.process_stack import VENV_BIN, Processes, serve, wait_until

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.processes
def test_loading_the_wsgi_application_imports_every_route():
    code = (
        "import sys, config.wsgi\n"
        "wanted = ['config.urls', 'aggregates.servers.api', 'aggregates.host_aggregates.api', 'placement.urls',\n"
        "          'placement.internal_urls', 'dashboard.views']\n"
        "print(','.join(m for m in wanted if m not in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ""


# --- chunked request bodies --------------------------------------------------------------

IMAGE_MAX_BYTES = 300_000
DATA = bytes(range(256)) * 390 + b"end of the data"  # 99,855 bytes
DATA += os.urandom(100_000 - len(DATA))
COMPUTE = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.41", "Content-Type": "application/json"}
PLACEMENT = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.20", "Content-Type": "application/json"}
IMAGE = {"X-Auth-Token": "admin", "Content-Type": "application/json"}
UPLOAD = {"X-Auth-Token": "admin", "Content-Type": "application/octet-stream"}
JSON = {"Content-Type": "application/json"}
UNKNOWN_USER = {
    "auth": {
        "identity": {
            "methods": ["password"],
            "password": {"user": {"name": "nobody", "domain": {"id": "default"}, "password": "not-this"}},
        }
    }
}


def chunks(data, sizes=(1, 7, 4096, 8191, 65536)):
    """``data`` in chunks of uneven sizes: sent with Transfer-Encoding: chunked
    and no Content-Length (a generator has no length)."""
    start, index = 0, 0
    while start < len(data):
        size = sizes[index % len(sizes)]
        yield data[start : start + size]
        start, index = start + size, index + 1


def chunked_json(value):
    return chunks(json.dumps(value).encode())


def create_image(url, headers, name):
    body = {"name": name, "disk_format": "raw", "container_format": "bare"}
    response = requests.post(url + "/image/v2/images", json=body, headers=headers, timeout=30)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def image_of(url, headers, image_id):
    return requests.get(f"{url}/image/v2/images/{image_id}", headers=headers, timeout=30).json()


@pytest.fixture(scope="module")
def gunicorn_url(tmp_path_factory):
    """Corral under gunicorn (one sync worker), as deployed: config.wsgi."""
    workdir = tmp_path_factory.mktemp("gunicorn")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "DATABASE_"))},
        "CORRAL_VAR_DIR": str(workdir),
        "DATABASE_URL": f"sqlite:///{workdir}/corral.sqlite3",
        "AUTH_STRATEGY": "noauth2",
        "PLACEMENT_URL": "",
        "IMAGE_MAX_BYTES": str(IMAGE_MAX_BYTES),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(workdir, env)
    try:
        processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
        yield serve(processes, free_port())
    finally:
        processes.stop_all()


@pytest.mark.processes
def test_chunked_bodies_arrive_whole_under_gunicorn(gunicorn_url):
    url = gunicorn_url
    body = {"aggregate": {"name": "chunked-agg", "availability_zone": "chunked-az"}}
    created = requests.post(url + "/compute/v2.1/os-aggregates", data=chunked_json(body), headers=COMPUTE, timeout=30)
    assert created.status_code == 200, created.text
    assert (created.json()["aggregate"]["name"], created.json()["aggregate"]["availability_zone"]) == (
        "chunked-agg",
        "chunked-az",
    )
    listed = requests.get(url + "/compute/v2.1/os-aggregates", headers=COMPUTE, timeout=30).json()["aggregates"]
    assert [aggregate["name"] for aggregate in listed] == ["chunked-agg"]

    provider = {"name": "chunked-rp", "uuid": "5f1c9a62-0a5b-4cd5-9d2e-7f3b0c4c2a11"}
    created = requests.post(
        url + "/placement/resource_providers", data=chunked_json(provider), headers=PLACEMENT, timeout=30
    )
    assert created.status_code == 200, created.text
    assert (created.json()["name"], created.json()["uuid"]) == (provider["name"], provider["uuid"])
    found = requests.get(url + "/placement/resource_providers?name=chunked-rp", headers=PLACEMENT, timeout=30)
    assert [rp["uuid"] for rp in found.json()["resource_providers"]] == [provider["uuid"]]

    refused = requests.post(url + "/identity/v3/auth/tokens", data=chunked_json(UNKNOWN_USER), headers=JSON, timeout=30)
    assert refused.status_code == 401, refused.text  # the body was read: its user is unknown
    assert keystone_format(refused)

    image_id = create_image(url, IMAGE, "chunked-image")
    put = f"{url}/image/v2/images/{image_id}/file"
    uploaded = requests.put(put, data=chunks(DATA), headers=UPLOAD, timeout=30)
    assert uploaded.status_code == 204, uploaded.text
    image = image_of(url, IMAGE, image_id)
    assert (image["status"], image["size"]) == ("active", len(DATA))
    assert image["checksum"] == hashlib.md5(DATA).hexdigest()
    assert image["os_hash_value"] == hashlib.sha512(DATA).hexdigest()
    assert requests.get(put, headers={"X-Auth-Token": "admin"}, timeout=30).content == DATA


@pytest.mark.processes
def test_chunked_bodies_over_the_limits_are_413_in_each_apis_format(gunicorn_url):
    url = gunicorn_url
    padding = "x" * 2_700_000  # over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB)
    body = {"aggregate": {"name": "too-big", "padding": padding}}
    refused = requests.post(url + "/compute/v2.1/os-aggregates", data=chunked_json(body), headers=COMPUTE, timeout=30)
    assert refused.status_code == 413, refused.text
    assert refused.json()["overLimit"]["code"] == 413
    listed = requests.get(url + "/compute/v2.1/os-aggregates", headers=COMPUTE, timeout=30).json()["aggregates"]
    assert "too-big" not in [aggregate["name"] for aggregate in listed]

    provider = {"name": "too-big", "padding": padding}
    refused = requests.post(
        url + "/placement/resource_providers", data=chunked_json(provider), headers=PLACEMENT, timeout=30
    )
    assert refused.status_code == 413 and placement_format(refused), refused.text
    found = requests.get(url + "/placement/resource_providers?name=too-big", headers=PLACEMENT, timeout=30)
    assert found.json()["resource_providers"] == []

    refused = requests.post(
        url + "/identity/v3/auth/tokens", data=chunked_json({"auth": padding}), headers=JSON, timeout=30
    )
    assert refused.status_code == 413 and keystone_format(refused), refused.text

    image_id = create_image(url, IMAGE, "too-big-image")
    too_big = os.urandom(IMAGE_MAX_BYTES + 1)
    put = f"{url}/image/v2/images/{image_id}/file"
    refused = requests.put(put, data=chunks(too_big), headers={**UPLOAD, "Accept": "application/json"}, timeout=30)
    assert refused.status_code == 413 and glance_format(refused), refused.text
    image = image_of(url, IMAGE, image_id)
    assert (image["status"], image["size"]) == ("queued", None)


@pytest.fixture
def serve_demo_url(tmp_path):
    """The README's run command, ``manage.py serve_demo``, on a free port."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "DATABASE_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)
    try:
        processes.start("serve_demo", str(VENV_BIN / "python"), "manage.py", "serve_demo", f"127.0.0.1:{port}")
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: requests.get(url + "/compute/", timeout=2).status_code == 200, 180, "serve_demo")
        yield url
    finally:
        processes.stop_all()


def demo_token(url):
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": "admin", "domain": {"id": "default"}, "password": "corral-demo"}},
            },
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}},
        }
    }
    response = requests.post(url + "/identity/v3/auth/tokens", json=body, timeout=30)
    assert response.status_code == 201, response.text
    return response.headers["X-Subject-Token"]


@pytest.mark.processes
def test_serve_demo_reads_a_chunked_body_whole(serve_demo_url):
    """The README's run command serves with gunicorn, which ends a chunked
    body: each API reads it whole, as deployed."""
    url = serve_demo_url
    token = demo_token(url)
    compute, placement = {**COMPUTE, "X-Auth-Token": token}, {**PLACEMENT, "X-Auth-Token": token}
    image_headers, upload = {**IMAGE, "X-Auth-Token": token}, {**UPLOAD, "X-Auth-Token": token}

    body = {"aggregate": {"name": "chunked-agg"}}
    answer = requests.post(url + "/compute/v2.1/os-aggregates", data=chunked_json(body), headers=compute, timeout=30)
    assert answer.status_code == 200, answer.text
    listed = requests.get(url + "/compute/v2.1/os-aggregates", headers=compute, timeout=30).json()["aggregates"]
    assert "chunked-agg" in [aggregate["name"] for aggregate in listed]

    provider = {"name": "chunked-rp"}
    providers = url + "/placement/resource_providers"
    answer = requests.post(providers, data=chunked_json(provider), headers=placement, timeout=30)
    assert answer.status_code == 200, answer.text
    found = requests.get(url + "/placement/resource_providers?name=chunked-rp", headers=placement, timeout=30)
    assert len(found.json()["resource_providers"]) == 1

    answer = requests.post(url + "/identity/v3/auth/tokens", data=chunked_json(UNKNOWN_USER), headers=JSON, timeout=30)
    assert answer.status_code == 401 and keystone_format(answer), answer.text  # the body was read: its user is unknown

    image_id = create_image(url, image_headers, "chunked-image")
    put = f"{url}/image/v2/images/{image_id}/file"
    answer = requests.put(put, data=chunks(DATA), headers={**upload, "Accept": "application/json"}, timeout=30)
    assert answer.status_code == 204, answer.text
    image = image_of(url, image_headers, image_id)
    assert (image["status"], image["size"]) == ("active", len(DATA))
    assert image["os_hash_value"] == hashlib.sha512(DATA).hexdigest()
    assert requests.get(put, headers={"X-Auth-Token": token}, timeout=30).content == DATA


# --- the pieces, without a server -------------------------------------------------------------


def echo(environ, start_response):
    """A WSGI application answering what it was given."""
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    seen = {
        "length": environ.get("CONTENT_LENGTH"),
        "encoding": environ.get("HTTP_TRANSFER_ENCODING"),
        "refused": environ.get(chunked.LENGTH_REQUIRED, False),
        "sha": hashlib.sha256(body).hexdigest(),
    }
    answer = json.dumps(seen).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))])
    return [answer]


def call(environ):
    started = {}

    def start_response(status, headers, exc_info=None):
        started.update(status=status, headers=dict(headers))

    result = chunked.WholeBodies(echo)(environ, start_response)
    try:
        seen = json.loads(b"".join(result))
    finally:
        getattr(result, "close", lambda: None)()
    return seen, started["headers"]


def environ_of(body, content_type="application/json", **extra):
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/compute/v2.1/os-aggregates",
        "CONTENT_TYPE": content_type,
        "HTTP_TRANSFER_ENCODING": "chunked",
        "wsgi.input": io.BytesIO(body),
        **extra,
    }


def test_a_decoded_chunked_body_is_handed_on_whole_with_its_length(settings):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1000  # past it, spooled to a file
    seen, headers = call(environ_of(DATA, "application/octet-stream", **{"wsgi.input_terminated": True}))
    assert seen == {
        "length": str(len(DATA)),
        "encoding": None,
        "refused": False,
        "sha": hashlib.sha256(DATA).hexdigest(),
    }
    assert headers["Content-Length"]


def test_a_decoded_chunked_body_over_the_limit_goes_on_as_too_long_and_empty(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    settings.IMAGE_MAX_BYTES = 5000
    empty = hashlib.sha256(b"").hexdigest()
    seen, _ = call(environ_of(b"x" * 1001, **{"wsgi.input_terminated": True}))
    assert (seen["length"], seen["sha"]) == ("1001", empty)
    seen, _ = call(environ_of(b"x" * 1001, "application/octet-stream", **{"wsgi.input_terminated": True}))
    assert (seen["length"], seen["sha"]) == ("1001", hashlib.sha256(b"x" * 1001).hexdigest())
    seen, _ = call(environ_of(b"x" * 5001, "application/octet-stream", **{"wsgi.input_terminated": True}))
    assert (seen["length"], seen["sha"]) == ("5001", empty)


def test_a_chunked_body_the_server_cannot_end_is_marked_and_answered_without_a_length():
    seen, headers = call(environ_of(b'{"aggregate": {"name": "a"}}'))
    assert seen["refused"] is True and seen["length"] is None
    assert "Content-Length" not in headers  # so the development server closes the connection
    plain = {"REQUEST_METHOD": "GET", "PATH_INFO": "/compute/", "wsgi.input": io.BytesIO(b"")}
    seen, headers = call(plain)
    assert seen["refused"] is False and headers["Content-Length"]


LENGTH_REQUIRED_CALLS = [
    ("post", "/compute/v2.1/os-aggregates", {"OpenStack-API-Version": "compute 2.41"}),
    ("post", "/placement/resource_providers", {"OpenStack-API-Version": "placement 1.20"}),
    ("post", "/identity/v3/auth/tokens", {}),
    ("put", "/image/v2/images/5f1c9a62-0a5b-4cd5-9d2e-7f3b0c4c2a11/file", {}),
]


@pytest.mark.parametrize("method, path, headers", LENGTH_REQUIRED_CALLS, ids=[p for _, p, _ in LENGTH_REQUIRED_CALLS])
def test_a_chunked_body_the_server_cannot_read_is_411_in_the_apis_format(db, method, path, headers):
    response = getattr(Client(raise_request_exception=False), method)(
        path,
        b'{"aggregate": {"name": "a"}, "name": "a"}',
        content_type="application/json",
        headers={"X-Auth-Token": "not-checked", **headers},
        **{chunked.LENGTH_REQUIRED: True},
    )
    assert response.status_code == 411 and response["Content-Type"] == "application/json"
    api = path.split("/")[1]
    message = "This server cannot read a chunked request body: send the body with a Content-Length."
    body = response.json()
    if api == "compute":
        assert body == {"computeFault": {"code": 411, "message": message}}
    elif api == "placement":
        assert placement_format(response) and body["errors"][0]["code"] == "placement.undefined_code"
        assert body["errors"][0]["title"] == "Length Required"
    elif api == "identity":
        assert body == {"error": {"code": 411, "title": "Length Required", "message": message}}
    else:
        assert glance_format(response) and body["title"] == "Length Required"
    console = Client().post("/login/", {"username": "a"}, **{chunked.LENGTH_REQUIRED: True})
    assert console.status_code == 411 and console["Content-Type"].startswith("text/plain")
