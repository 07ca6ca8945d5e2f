"""Browser tests: Debian's chromium driven by Playwright, against a live
server loaded with the demo cloud. They skip, saying why, when chromium or
Playwright is missing. Screenshots go to tests/browser/screenshots/ (git-ignored);
the docs' (README.md, docs/console.md) go to docs/screenshots/. The browser
and its pages are tests/plugins/browser.py's (one per test process, shared
with the Keystone console test)."""

import pytest

from tests.plugins.browser import README_SCREENSHOTS, SCREENSHOTS

DEMO_PASSWORD = "corral-demo"


@pytest.fixture
def server_url(live_server, transactional_db):
    """The live server's URL, with an empty database."""
    return live_server.url


def _seed_demo():
    from tests.plugins.demo_snapshot import seeded_demo

    seeded_demo()


@pytest.fixture
def demo_url(server_url):
    """The live server serving the demo cloud; placement mirroring fails quietly (it is not watched)."""
    _seed_demo()
    return server_url


@pytest.fixture
def mirrored_demo_url(server_url, settings, monkeypatch):
    """The live server serving the demo cloud, mirrored into its own placement."""
    from aggregates.identity import service_token
    from placement.standards import sync_standard_names

    # Transactional tests empty the tables, standard resource classes and traits included.
    sync_standard_names()
    # Corral's own placement, in process (the embedded default): the same
    # tables the live server's /placement serves, without a socket per call.
    settings.PLACEMENT_URL = ""
    settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY = "", "keystone"
    service_token.forget_service_token()
    _seed_demo()
    return server_url


def log_in(page, base_url, username):
    page.goto(f"{base_url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{base_url}/")


def screenshot(page, name, readme=False):
    """Save a full-page screenshot for review (and, with ``readme``, for the docs)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    if readme:
        README_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(README_SCREENSHOTS / f"{name}.png"), full_page=True)
