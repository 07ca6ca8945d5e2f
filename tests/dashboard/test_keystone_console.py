"""The console with AUTH_STRATEGY=external-keystone, where no Keystone is
needed (fast): the login form asks for Keystone's user, password, domain and
project; Corral's own identity pages are not found; a Django user's session
is no way in; Keystone not answering is said on the form and on the pages.
The logins themselves, against a real Keystone, are in
tests/keystone/test_console_login.py."""

import pytest
from django.test import Client

from dashboard.keystone_login import SESSION_TOKEN, UNAVAILABLE_MESSAGE

UNREACHABLE = "http://127.0.0.1:9"  # nothing listens: connection refused at once


@pytest.fixture
def external(settings):
    settings.AUTH_STRATEGY = "external-keystone"
    settings.KEYSTONE_AUTH_URL = UNREACHABLE
    settings.KEYSTONE_TIMEOUT = 2.0


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
