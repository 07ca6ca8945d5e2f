"""The test tiers. Every test is in the fast tier unless it needs something
slow, and then it carries the marker of what that is (registered in
pyproject.toml):

- ``processes``: starts real servers or workers (gunicorn, Celery, host agents, python -c).
- ``browser``: drives Debian's chromium with Playwright.
- ``cli``: runs the stock ``openstack`` CLI (or openstacksdk's cloud layer and Ansible).
- ``upstream``: runs upstream OpenStack Placement.
- ``heavy``: sweeps hundreds of hostile payloads, races fifty boots, or
  builds 5,000 hosts for a query-count baseline.

Each marker is given by the fixture that brings the slow thing, so a new test
cannot forget it; files that start processes by other means say so with
``pytestmark``. Every marked test is also marked ``slow``: the fast tier is
``pytest -m "not slow"``."""

import contextlib
import fcntl
import os

import pytest

TIERS = ("processes", "browser", "cli", "upstream", "heavy")

# The fixtures that bring each slow thing.
FIXTURE_TIERS = {
    "browser": "browser",
    "openstack": "cli",
    "sdk_clients": "cli",
    "upstream_placement": "upstream",
    "process_stack": "processes",
    "keystone": "processes",
    "brokerless_server": "processes",
    "big_cloud": "heavy",
}


# The fixtures whose subject does not depend on Corral's database: a real
# Keystone; the clients (the stock CLI, openstacksdk and Ansible) and the
# console in a browser, which check what a client sends and sees, against a
# live server whose queries the fast tier already runs on both databases.
# Their tests run on the embedded default only. CI runs the suite on
# PostgreSQL and then on SQLite, and these minutes of processes would
# otherwise run twice.
ONE_DATABASE_FIXTURES = ("keystone", "sdk_clients", "openstack", "browser")


def on_postgresql() -> bool:
    return os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))


def pytest_collection_modifyitems(config, items):
    if on_postgresql():
        once = [item for item in items if any(f in item.fixturenames for f in ONE_DATABASE_FIXTURES)]
        if once:
            config.hook.pytest_deselected(items=once)
            items[:] = [item for item in items if item not in once]
    for item in items:
        for fixture, tier in FIXTURE_TIERS.items():
            if fixture in item.fixturenames:
                item.add_marker(tier)
        # any_placement asks for upstream's placement by its parameter, at run time.
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("any_placement") == "upstream":
            item.add_marker("upstream")
        if any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter):
    """Everything pip can install runs (tests/provision.py); only the browser
    tests may skip, and then one line says how to enable them."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "browser" in r.keywords]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} browser test(s) skipped: install Debian's chromium (apt-get install chromium) "
            "to run them; Playwright drives /usr/bin/chromium."
        )


# Tests that open tens of database connections at once (threads racing each
# other, a deployment in processes of its own) take turns, whichever xdist
# workers run them: two at once would pass PostgreSQL's default limit of
# 100 connections.
many_connections = pytest.mark.usefixtures("one_connection_hungry_test_at_a_time")


@pytest.fixture
def one_connection_hungry_test_at_a_time(tmp_path_factory):
    """An exclusive lock shared by every worker of this run, held for the whole test."""
    with connection_hungry(tmp_path_factory):
        yield


@contextlib.contextmanager
def connection_hungry(tmp_path_factory):
    """The lock above, for a fixture of a wider scope to hold (a module's
    processes kept for several tests). Every worker of a run shares it:
    their temporary directories share a parent."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-gw") else base
    with open(shared / "many-database-connections.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
