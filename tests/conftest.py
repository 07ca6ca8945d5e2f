"""What every test shares: the plugins of tests/plugins (fixtures and helpers
used across folders, and the test tiers), fast password hashing, and side
effects kept inside the test."""

import pytest

pytest_plugins = [
    "tests.plugins.tiers",
    "tests.plugins.provisioning",
    "tests.plugins.api",
    "tests.plugins.upstream_placement",
    "tests.plugins.placements",
    "tests.plugins.openstack_cli",
    "tests.plugins.big_cloud",
    "tests.plugins.cloud",
    "tests.plugins.browser",
    "tests.plugins.console_clients",
]


@pytest.fixture(autouse=True, scope="session")
def fast_test_settings():
    """Tests create many users; a slow hash buys nothing here. And every test
    client builds its own middleware chain: WhiteNoise would index every
    static file each time (about 50 ms a client, a third of a typical API
    test); in autorefresh mode it finds a file when one is asked for.
    Quotas are enforced everywhere but with limits no other test reaches
    (tests/quotas set Nova's defaults where they test them)."""
    from django.test.utils import override_settings

    with override_settings(
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        WHITENOISE_AUTOREFRESH=True,
        QUOTA_INSTANCES=10_000,
        QUOTA_CORES=1_000_000,
        QUOTA_RAM=1_000_000_000,
    ):
        yield


@pytest.fixture(autouse=True)
def isolated_side_effects(settings, tmp_path_factory):
    """Every test runs Celery tasks in-process (tests that need a real worker
    start their own) and waits for them, mirrors into a placement URL where nothing listens,
    unless it points PLACEMENT_URL at a placement of its own, and keeps image
    data (the demo's images, uploads) in a directory of its own."""
    from config import celery_app

    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    settings.PLACEMENT_URL = "http://127.0.0.1:9/placement"
    # A request's follow-up work (mirroring, builds, moves) is done by the
    # time the test reads its outcome, however busy the machine; the bound
    # itself has its own tests (tests/mirroring/test_brokerless_drain.py).
    settings.FOLLOW_UP_WAIT_SECONDS = 120
    settings.IMAGE_STORE_DIR = tmp_path_factory.mktemp("image-store")
    yield
    celery_app.conf.task_always_eager = saved


@pytest.fixture
def image_store(settings):
    """The directory this test's image data goes to (its own: see isolated_side_effects)."""
    return settings.IMAGE_STORE_DIR


@pytest.fixture(autouse=True, scope="session")
def quick_table_wipes():
    """A transactional test ends by emptying every table. On PostgreSQL,
    Django does it with one TRUNCATE of them all: about 150 ms here for
    seventy tables, most of them empty, after each of several hundred tests.
    A DELETE from each, in one transaction with the foreign keys checked at
    its end (Django makes them deferrable), leaves the same empty tables in
    about 10 ms. Sequences are not reset either way."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or not tables:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return ["SET CONSTRAINTS ALL DEFERRED;"] + [f"DELETE FROM {self.quote_name(table)};" for table in tables]

    DatabaseOperations.sql_flush = sql_flush
    yield
    DatabaseOperations.sql_flush = truncate


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """The follow-up threads a test started (a maintenance or pre-cache job
    runs on in one after its request answered) end before the test's
    fixtures are torn down: a job thread still writing while the tables are
    emptied deadlocked the emptying, or left rows to the next test."""
    from aggregates import after_commit

    after_commit.wait_for_threads(timeout=60)
    if nextitem is None:
        # The last test of this process: the follow-up threads end, their
        # database connections closed, before the test database is dropped.
        after_commit.stop_follow_up_threads()
    yield
