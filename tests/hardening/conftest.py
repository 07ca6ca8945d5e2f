"""What the hardening tests share: the Keystone token route, a password
login's body, and alice, a member of project demo."""

import os

import pytest

from tests.plugins.api import make_user

TOKENS = "/identity/v3/auth/tokens"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def password_body(username, password, project="demo"):
    return {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": username, "domain": {"name": "Default"}, "password": password}},
            },
            "scope": {"project": {"name": project, "domain": {"name": "Default"}}},
        }
    }


@pytest.fixture
def alice(db):
    user, _ = make_user("alice", "member")
    return user
