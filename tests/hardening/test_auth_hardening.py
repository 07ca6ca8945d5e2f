"""Issue 11, console and authentication: the login throttle (Keystone surface
and console), the public URL and allowed hosts, same-site ``next=``, CSV
cells that a spreadsheet would run, the console's Content-Security-Policy and
no-store, and who the demo makes staff."""

import csv
import io
import json
import os
import re
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.host_aggregates import services as aggregate_services
from aggregates.identity import services as identity
from aggregates.identity.models import LoginFailure, Token
from tests.hardening.conftest import ROOT, TOKENS, password_body
from tests.plugins.api import make_user


def api_login(username, password, address="10.0.0.1"):
    return Client(REMOTE_ADDR=address).post(
        TOKENS, json.dumps(password_body(username, password)), content_type="application/json"
    )


@pytest.fixture
def throttle_settings(settings):
    settings.LOGIN_THROTTLE_USER_ATTEMPTS = 5
    settings.LOGIN_THROTTLE_ADDRESS_ATTEMPTS = 30
    settings.LOGIN_THROTTLE_WINDOW = 300
    return settings


# --- the throttle on POST /identity/v3/auth/tokens ------------------------------------------


def test_wrong_passwords_are_throttled_then_even_the_right_one_waits(alice, throttle_settings):
    for _ in range(5):
        assert api_login("alice", "wrong").status_code == 401
    response = api_login("alice", "alice-pw")
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == 429 and error["title"] == "Too Many Requests"
    assert "Too many failed login attempts" in error["message"]
    assert 1 <= int(response["Retry-After"]) <= 300
    assert "X-Subject-Token" not in response
    event = Event.objects.filter(event_type="identity.throttled").latest("id")
    assert event.payload["address"] == "10.0.0.1" and event.payload["surface"] == "api"


def test_the_throttle_is_per_user(alice, throttle_settings):
    make_user("bob", "member")
    for _ in range(5):
        api_login("alice", "wrong", address="10.0.0.1")
    assert api_login("bob", "bob-pw", address="10.0.0.2").status_code == 201
    assert api_login("alice", "alice-pw", address="10.0.0.2").status_code == 429


def test_the_throttle_is_per_source_address(alice, throttle_settings):
    throttle_settings.LOGIN_THROTTLE_ADDRESS_ATTEMPTS = 3
    for name in ("u1", "u2", "u3"):
        assert api_login(name, "guess", address="10.9.9.9").status_code == 401
    assert api_login("alice", "alice-pw", address="10.9.9.9").status_code == 429
    assert api_login("alice", "alice-pw", address="10.0.0.7").status_code == 201


def test_successful_logins_never_count(alice, throttle_settings):
    for _ in range(12):
        assert api_login("alice", "alice-pw").status_code == 201
    assert not LoginFailure.objects.exists()


def test_the_throttle_forgets_failures_past_the_window(alice, throttle_settings):
    for _ in range(5):
        api_login("alice", "wrong")
    assert api_login("alice", "alice-pw").status_code == 429
    LoginFailure.objects.update(created_at=timezone.now() - timedelta(seconds=301))
    assert api_login("alice", "alice-pw").status_code == 201


def test_a_refused_scope_is_not_a_wrong_password(alice, throttle_settings):
    """Only refused passwords count: a right password asking for a project
    the user has no role on is refused (401) but does not lock the user out."""
    identity.ensure_project("other")
    for _ in range(6):
        body = password_body("alice", "alice-pw", project="other")
        assert (
            Client(REMOTE_ADDR="10.0.0.1").post(TOKENS, json.dumps(body), content_type="application/json").status_code
            == 401
        )
    assert api_login("alice", "alice-pw").status_code == 201


# --- the throttle on the console's login ---------------------------------------------------


def test_the_console_login_is_throttled_with_a_message(db, throttle_settings):
    get_user_model().objects.create_user("op", password="secret", is_staff=True, is_superuser=True)
    client = Client(REMOTE_ADDR="10.1.1.1")
    for _ in range(5):
        response = client.post("/login/", {"username": "op", "password": "nope"})
        assert response.status_code == 200 and "_auth_user_id" not in client.session
    response = client.post("/login/", {"username": "op", "password": "secret"})
    assert response.status_code == 200
    assert b"Too many failed login attempts" in response.content
    assert "_auth_user_id" not in client.session
    assert Event.objects.filter(event_type="identity.throttled", payload__surface="console").exists()


def test_api_and_console_share_the_count(db, throttle_settings):
    get_user_model().objects.create_user("op", password="secret", is_staff=True, is_superuser=True)
    client = Client(REMOTE_ADDR="10.1.1.2")
    for _ in range(3):
        client.post("/login/", {"username": "op", "password": "nope"})
    for _ in range(2):
        assert api_login("op", "nope", address="10.1.1.3").status_code == 401
    assert api_login("op", "secret", address="10.1.1.3").status_code == 429


# --- public URL and allowed hosts ----------------------------------------------------------


def _settings_in_subprocess(env):
    code = (
        "import django, json; django.setup(); "
        "from django.conf import settings; print(json.dumps(settings.ALLOWED_HOSTS))"
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("ALLOWED_HOSTS", "PUBLIC_URL")}
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_without_a_public_url_only_local_and_own_names_are_answered():
    """Safe default: never "*" (a forged Host would rewrite the catalog)."""
    hosts = _settings_in_subprocess({})
    assert "*" not in hosts
    assert hosts[:3] == ["127.0.0.1", "localhost", "[::1]"]
    assert socket.gethostname() in hosts


def test_allowed_hosts_are_derived_from_the_public_url():
    hosts = _settings_in_subprocess({"PUBLIC_URL": "https://cloud.example.org:8443/"})
    assert hosts[:4] == ["cloud.example.org", "127.0.0.1", "localhost", "[::1]"]
    assert "*" not in hosts


def test_allowed_hosts_setting_wins():
    assert _settings_in_subprocess({"ALLOWED_HOSTS": "a.example,b.example"}) == ["a.example", "b.example"]


def test_a_forged_host_header_is_refused(alice, settings):
    settings.PUBLIC_URL = "https://cloud.example.test"
    settings.ALLOWED_HOSTS = ["cloud.example.test", "127.0.0.1", "localhost", "testserver"]
    response = Client().post(
        TOKENS,
        json.dumps(password_body("alice", "alice-pw")),
        content_type="application/json",
        HTTP_HOST="evil.example",
    )
    assert response.status_code == 400
    assert not Token.objects.exists()


def test_the_catalog_comes_from_the_public_url(alice, settings):
    settings.PUBLIC_URL = "https://cloud.example.test"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "other.example"]
    response = Client().post(
        TOKENS,
        json.dumps(password_body("alice", "alice-pw")),
        content_type="application/json",
        HTTP_HOST="other.example",
    )
    assert response.status_code == 201
    urls = [e["url"] for s in response.json()["token"]["catalog"] for e in s["endpoints"]]
    assert urls and all(url.startswith("https://cloud.example.test/") for url in urls)


# --- console: next=, CSV, CSP, no-store ------------------------------------------------------


@pytest.mark.parametrize(
    "target, expected",
    [
        ("http://evil.example/phish", "/hosts/"),
        ("//evil.example/phish", "/hosts/"),
        ("https:evil.example", "/hosts/"),
        ("/\\evil.example", "/hosts/"),
        ("javascript:alert(1)", "/hosts/"),
        ("/hosts/node1/", "/hosts/node1/"),
    ],
)
def test_next_only_goes_to_same_site_paths(admin_client, make_host, target, expected):
    make_host("node1")
    response = admin_client.post("/hosts/node1/status/", {"action": "enable", "next": target})
    assert response.status_code == 302 and response["Location"] == expected


def test_csv_export_neutralises_formulas(admin_client, system):
    for name in ("=HYPERLINK(1)", "+sum", "-1+2", "@cmd", "plain"):
        aggregate_services.create_aggregate(system, name, None)
    response = admin_client.get("/aggregates/?format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    names = sorted(row["name"] for row in rows)
    assert names == sorted(["'=HYPERLINK(1)", "'+sum", "'-1+2", "'@cmd", "plain"])


@pytest.mark.parametrize(
    "url", ["/", "/aggregates/", "/hosts/", "/zones/", "/flavors/", "/events/", "/resource-providers/"]
)
def test_console_pages_have_a_csp_and_no_store(admin_client, url):
    response = admin_client.get(url)
    assert response.status_code == 200
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "style-src 'self'" in csp and "unsafe-inline" not in csp
    assert "no-store" in response["Cache-Control"]
    html = response.content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html), "inline script"
    assert " style=" not in html and "<style" not in html, "inline style"


def test_the_login_page_has_the_csp(db):
    response = Client().get("/login/")
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_the_api_gets_no_console_csp(alice):
    assert "Content-Security-Policy" not in api_login("alice", "alice-pw")


# --- the demo's staff flags ------------------------------------------------------------------


def test_the_demo_member_is_not_staff_and_cannot_open_the_admin(db):
    from aggregates.demo import seed

    seed.seed(out=lambda line: None)
    users = get_user_model().objects
    assert users.get(username="admin").is_staff and users.get(username="reader").is_staff
    assert not users.get(username="demo").is_staff
    client = Client()
    assert client.login(username="demo", password=seed.DEMO_PASSWORD)
    response = client.get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
