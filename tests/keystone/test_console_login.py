"""The console logs in and out through a real Keystone 30.0.0
(AUTH_STRATEGY=external-keystone; the session's Keystone and Corral of
tests/keystone/conftest.py), in Debian's chromium: the admin sees the admin
pages and may change them; a member (whose token also says reader) is
refused them; logging out revokes the token in Keystone; a token revoked
in Keystone sends the user back to the login page with a message, once its
cache entry expires. One test: every step needs the browser and Keystone."""

import time

import pytest
import requests
from django.contrib.sessions.backends.db import SessionStore

from dashboard.keystone_login import ENDED_MESSAGE, SESSION_TOKEN
from dashboard.login_views import LOGGED_OUT_MESSAGE
from tests.browser.conftest import screenshot
from tests.keystone.conftest import ADMIN_PASSWORD, PASSWORD

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need Playwright's Python package").expect

pytestmark = [pytest.mark.processes, pytest.mark.slow, pytest.mark.xdist_group("keystone")]

PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1400, "height": 900}


def log_in(tab, url, username, password, project, domain="Default"):
    tab.goto(f"{url}/login/")
    tab.fill("input[name=username]", username)
    tab.fill("input[name=password]", password)
    tab.fill("input[name=domain]", domain)
    tab.fill("input[name=project]", project)
    tab.click("main button:has-text('Log in')")


def console_token(tab):
    """The Keystone token the console's session keeps (read from the session store)."""
    session_key = next(c["value"] for c in tab.context.cookies() if c["name"] == "sessionid")
    return SessionStore(session_key=session_key)[SESSION_TOKEN]


def keystone_knows(keystone, token):
    """Keystone's own answer on ``token``: 200 valid, 404 revoked or expired."""
    headers = {"X-Auth-Token": keystone.admin_token(), "X-Subject-Token": token}
    return requests.get(f"{keystone.url}/v3/auth/tokens", headers=headers, timeout=30).status_code


@pytest.mark.browser
def test_console_logs_in_and_out_through_keystone(cloud, keystone, page, settings):
    # The login page asks for Keystone's four things; screenshots at both widths.
    page.set_viewport_size(PHONE)
    page.goto(f"{cloud}/login/")
    for name in ("username", "password", "domain", "project"):
        expect(page.locator(f"input[name={name}]")).to_be_visible()
    expect(page.locator("input[name=domain]")).to_have_value("Default")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "keystone-login-phone", readme=True)
    page.set_viewport_size(WIDE)
    screenshot(page, "keystone-login", readme=True)

    # Wrong password: Keystone refuses, the form says so.
    log_in(page, cloud, "admin", "not-the-password", "admin")
    expect(page.locator(".errorlist.nonfield")).to_contain_text("Keystone refused these credentials")

    # The admin: the admin pages, with changes offered; Corral's own identity pages are not there.
    log_in(page, cloud, "admin", ADMIN_PASSWORD, "admin")
    page.wait_for_url(f"{cloud}/")
    expect(page.locator("header .username")).to_have_text("admin")
    expect(page.locator("header .badge.info")).to_have_text("admin")
    nav = page.locator("header nav")
    expect(nav.locator("a", has_text="Aggregates")).to_be_visible()
    expect(nav.locator("a", has_text="Identity")).to_have_count(0)
    expect(nav.locator("a", has_text="Tables")).to_have_count(0)
    assert page.goto(f"{cloud}/aggregates/new/").status == 200
    assert page.goto(f"{cloud}/projects/").status == 404
    token = console_token(page)
    assert keystone_knows(keystone, token) == 200

    # Logging out revokes the token in Keystone itself.
    page.goto(f"{cloud}/")
    page.click("header button:has-text('Log out')")
    page.wait_for_url(f"{cloud}/login/")
    expect(page.locator("main .alert")).to_contain_text(LOGGED_OUT_MESSAGE)
    assert keystone_knows(keystone, token) == 404
    assert page.goto(f"{cloud}/aggregates/").url.startswith(f"{cloud}/login/")

    # A member (whose token also says reader): the admin pages are refused, no navigation offered.
    log_in(page, cloud, "alice", PASSWORD, "demo")
    page.wait_for_url(f"{cloud}/")
    expect(page.locator("#refused, main .alert")).to_contain_text("Ask an admin")
    expect(page.locator("header nav")).to_have_count(0)
    assert page.goto(f"{cloud}/aggregates/").status == 403
    assert page.goto(f"{cloud}/hosts/").status == 403
    page.click("main button:has-text('Log out')")
    page.wait_for_url(f"{cloud}/login/")

    # A token revoked in Keystone: once its cache entry expires, back to the login page with a message.
    settings.KEYSTONE_TOKEN_CACHE_SECONDS = 1
    log_in(page, cloud, "admin", ADMIN_PASSWORD, "admin")
    page.wait_for_url(f"{cloud}/")
    keystone.revoke(console_token(page))
    time.sleep(1.5)
    page.goto(f"{cloud}/aggregates/")
    page.wait_for_url(f"{cloud}/login/?next=/aggregates/")
    expect(page.locator("main .alert")).to_contain_text(ENDED_MESSAGE)
    expect(page.locator("input[name=project]")).to_be_visible()
