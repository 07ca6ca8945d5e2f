"""The browser: Debian's chromium driven by Playwright, one per test
process (a session fixture defined once: two definitions, one per folder,
would start a second Playwright inside the first one's event loop), and
its pages. It skips, saying why, when chromium or Playwright is missing."""

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


def watched_page(browser, viewport):
    """A page of a new light-scheme context at ``viewport``, and the list the
    console's Content-Security-Policy refusals are gathered in as it goes."""
    context = browser.new_context(viewport=viewport, color_scheme="light")
    page = context.new_page()
    page.set_default_timeout(15000)
    violations = []
    page.on("console", lambda message: "Content Security Policy" in message.text and violations.append(message.text))
    return page, violations


def overflow(page):
    """How many pixels the page is wider than the window (0: no sideways scroll)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
