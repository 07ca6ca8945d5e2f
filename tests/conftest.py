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
]


@pytest.fixture(autouse=True, scope="session")
def fast_test_settings():
    """Tests create many users; a slow hash buys nothing here. And every test
    client builds its own middleware chain: WhiteNoise would index every
    static file each time (about 50 ms a client, a third of a typical API
    test); in autorefresh mode it finds a file when one is asked for."""
    from django.test.utils import override_settings

    with override_settings(
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"], WHITENOISE_AUTOREFRESH=True
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
