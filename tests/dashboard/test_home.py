"""The console's overview page."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client


@pytest.fixture
def staff_client(db):
    user = get_user_model().objects.create_user("op", password="pw", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    return client


def test_anonymous_is_sent_to_login(db):
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_login_page_renders(db):
    response = Client().get("/login/")
    assert response.status_code == 200 and b"csrfmiddlewaretoken" in response.content


def test_overview_counts_what_exists(staff_client, admin_api, make_host):
    make_host("node1")
    make_host("node2")
    admin_api.post("/os-aggregates", {"aggregate": {"name": "fast-io", "availability_zone": "az1"}})
    response = staff_client.get("/")
    assert response.status_code == 200
    counts = response.context["counts"]
    assert counts["aggregates"] == 1 and counts["zones"] == 1 and counts["hosts"] == 2 and counts["hosts_up"] == 2
    assert b"fast-io" in response.content and b"aggregate.create.end" in response.content
