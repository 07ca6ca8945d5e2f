"""The console with AUTH_STRATEGY=external-keystone, where no Keystone is
needed (fast): the login form asks for Keystone's user, password, domain and
project; Corral's own identity pages are not found; a Django user's session
is no way in; Keystone not answering is said on the form and on the pages.
The logins themselves, against a real Keystone, are in
tests/keystone/test_console_login.py."""

import time

import pytest
from django.core.cache import caches
from django.test import Client

from aggregates.identity import keystone
from dashboard.keystone_login import SESSION_TOKEN, UNAVAILABLE_MESSAGE

UNREACHABLE = "http://127.0.0.1:9"  # nothing listens: connection refused at once


@pytest.fixture
def external(settings):
    settings.AUTH_STRATEGY = "external-keystone"
    settings.KEYSTONE_AUTH_URL = UNREACHABLE
    settings.KEYSTONE_TIMEOUT = 2.0
    caches[keystone.CACHE_ALIAS].clear()
    yield
    caches[keystone.CACHE_ALIAS].clear()


def console_with_token(token, *roles):
    """A browser whose session holds ``token``, which Keystone validated
    moments ago (its answer in the validation cache, as after a login)."""
    facts = {
        "user_id": "u-" + token,
        "username": "olivia",
        "project_id": "p1",
        "project_name": "ops",
        "roles": sorted(roles),
        "expires_at": time.time() + 600,
    }
    keystone.cache_validation(token, facts)
    client = Client()
    session = client.session
    session[SESSION_TOKEN] = token
    session.save()
    return client


def test_the_login_form_asks_for_keystones_credentials(db, external, client):
    page = client.get("/login/")
    assert page.status_code == 200
    for name in ("username", "password", "domain", "project"):
        assert f'name="{name}"' in page.content.decode()


def test_corrals_own_identity_pages_are_not_found(db, external, admin_client):
    for path in ("/projects/", "/projects/p1/", "/projects/p1/quotas/", "/users/"):
        assert admin_client.get(path).status_code == 404, path
    assert admin_client.post("/users/new/", {"name": "x"}).status_code == 404


def test_a_django_users_session_is_no_way_in(db, external, admin_client):
    answer = admin_client.get("/aggregates/")
    assert answer.status_code == 302
    assert answer["Location"].startswith("/login/")


def test_keystone_not_answering_is_said_on_the_form_and_the_pages(db, external):
    client = Client()
    answer = client.post("/login/", {"username": "u", "password": "p", "domain": "Default", "project": "demo"})
    assert answer.status_code == 200
    assert UNAVAILABLE_MESSAGE in answer.content.decode()
    assert SESSION_TOKEN not in client.session

    session = client.session
    session[SESSION_TOKEN] = "a-token"
    session.save()
    answer = client.get("/aggregates/")
    assert answer.status_code == 503
    assert UNAVAILABLE_MESSAGE in answer.content.decode()


def test_corrals_own_identity_keeps_djangos_login(db, client):
    page = client.get("/login/").content.decode()
    assert 'name="username"' in page and 'name="project"' not in page
    assert client.get("/projects/").status_code == 302  # to the login page, as ever


def test_the_tokens_roles_decide_through_the_policy_table(db, external, settings, tmp_path):
    admin = console_with_token("admin-token", "admin", "manager", "member", "reader")
    page = admin.get("/aggregates/")
    assert page.status_code == 200 and "olivia" in page.content.decode()
    assert admin.get("/aggregates/new/").status_code == 200

    # A member's token says reader too: the admin's views are not its own.
    member = console_with_token("member-token", "member", "reader")
    assert member.get("/aggregates/").status_code == 403

    # An operator's policy file gives a role of its own the console, to read.
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text('"admin_reader_api": "role:admin or role:console_reader"\n')
    settings.POLICY_FILE = str(policy_file)
    viewer = console_with_token("viewer-token", "console_reader", "member", "reader")
    assert viewer.get("/aggregates/").status_code == 200
    assert viewer.get("/aggregates/new/").status_code == 403
    assert viewer.post("/aggregates/new/", {"name": "a1"}).status_code == 403
    assert member.get("/aggregates/").status_code == 403


PAGES = (
    "/", "/aggregates/", "/aggregates/new/", "/zones/", "/hosts/", "/flavors/", "/flavors/new/", "/addresses/",
    "/resource-providers/", "/images/", "/images/new/", "/servers/", "/servers/new/", "/server-groups/",
    "/scheduling/", "/maintenance/jobs/", "/images/cache-jobs/", "/events/", "/search/?q=az1",
)  # fmt: skip


def test_every_page_serves_a_keystone_admin(demo, external, settings):
    admin = console_with_token("admin-token", "admin", "manager", "member", "reader")
    # The overview reads placement with the service user's Keystone token:
    # Keystone not answering in the middle of the page is a 503 too.
    settings.PLACEMENT_URL = ""
    overview = admin.get("/")
    assert overview.status_code == 503 and UNAVAILABLE_MESSAGE in overview.content.decode()

    # The service user's token, as Keystone would have issued and validated it.
    settings.PLACEMENT_AUTH_TOKEN = "service-token"
    facts = {"user_id": "s1", "username": "corral", "project_id": "s", "project_name": "service"}
    keystone.cache_validation(
        "service-token", {**facts, "roles": ["admin", "service"], "expires_at": time.time() + 600}
    )
    assert {path: admin.get(path).status_code for path in PAGES} == dict.fromkeys(PAGES, 200)
