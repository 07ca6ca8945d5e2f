"""Quota tests run with Nova's default limits (the suite's own are out of
reach: tests/conftest.py), and a project of their own for a second caller."""

import pytest

from aggregates.identity.models import Project
from tests.plugins.api import ApiClient

NOVA_DEFAULTS = {
    "QUOTA_INSTANCES": 10,
    "QUOTA_CORES": 20,
    "QUOTA_RAM": 51200,
    "QUOTA_METADATA_ITEMS": 128,
    "QUOTA_KEY_PAIRS": 100,
    "QUOTA_SERVER_GROUPS": 10,
    "QUOTA_SERVER_GROUP_MEMBERS": 10,
    "QUOTA_INJECTED_FILES": 5,
    "QUOTA_INJECTED_FILE_CONTENT_BYTES": 10240,
    "QUOTA_INJECTED_FILE_PATH_LENGTH": 255,
}


@pytest.fixture(autouse=True)
def nova_defaults(settings):
    for name, value in NOVA_DEFAULTS.items():
        setattr(settings, name, value)


@pytest.fixture
def demo(admin_api):
    """The id of project "demo", the admin's, member's and reader's project."""
    return Project.objects.get(name="demo").id


@pytest.fixture
def other_api(token_for):
    """A member of a project of its own, "other"."""
    return ApiClient(token_for("member", username="other-user", project_name="other"))
