"""The console through Django's test client, logged in as each kind of
console user: a superuser (``admin_client``), a reader of the admin project
(Corral's read-only admin, ``reader_client``), and a user who is not staff
(``non_staff_client``)."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from aggregates.identity import services as identity


def _client_for(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin_client(db):
    user = get_user_model().objects.create_user("console-admin", password="pw", is_staff=True, is_superuser=True)
    return _client_for(user)


@pytest.fixture
def reader_client(db):
    user = get_user_model().objects.create_user("console-reader", password="pw", is_staff=True)
    identity.grant(user, identity.ensure_project("admin"), "reader")
    return _client_for(user)


@pytest.fixture
def non_staff_client(db):
    return _client_for(get_user_model().objects.create_user("plain", password="pw"))
