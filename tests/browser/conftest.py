"""Browser tests: Debian's chromium driven by Playwright, against a live
server loaded with the demo cloud. They skip, saying why, when chromium or
Playwright is missing. Screenshots go to tests/browser/screenshots/ (git-ignored);
the docs' (README.md, docs/console.md) go to docs/screenshots/."""

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "tests" / "browser" / "screenshots"
README_SCREENSHOTS = ROOT / "docs" / "screenshots"
VIEWPORT = {"width": 1400, "height": 900}
DEMO_PASSWORD = "corral-demo"


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser tests need Playwright's Python package (pip install playwright)")
    # Playwright's sync API keeps an event loop in this thread; the ORM calls
    # the tests make between browser steps are synchronous all the same.
    saved = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if saved is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = saved


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


def _new_page(browser, color_scheme):
    context = browser.new_context(viewport=VIEWPORT, color_scheme=color_scheme)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.set_default_timeout(15000)
    return page


@pytest.fixture
def page(browser):
    page = _new_page(browser, "light")
    yield page
    page.context.close()


@pytest.fixture
def dark_page(browser):
    page = _new_page(browser, "dark")
    yield page
    page.context.close()


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
