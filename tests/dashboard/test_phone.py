"""The markup the phone layout relies on, on every console page (the browser
test tests/browser/test_phone_layout.py measures the result at 390 px): the
viewport meta, the folding navigation, tables that scroll inside their card,
and no inline style the Content-Security-Policy would drop."""

import re

import pytest

from aggregates.flavors.models import Flavor
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts.models import Service
from aggregates.identity.models import Project


@pytest.fixture
def pages(demo):
    aggregate = Aggregate.objects.order_by("id").first()
    host = Service.objects.filter(binary="nova-compute").order_by("host").first().host
    flavor = Flavor.objects.order_by("flavorid").first()
    return [
        "/",
        "/aggregates/",
        "/aggregates/new/",
        f"/aggregates/{aggregate.id}/",
        f"/aggregates/{aggregate.id}/edit/",
        "/zones/",
        "/hosts/",
        f"/hosts/{host}/",
        "/flavors/",
        "/flavors/new/",
        f"/flavors/{flavor.flavorid}/",
        "/resource-providers/",
        "/projects/",
        f"/projects/{Project.objects.get(name='demo').id}/",
        "/users/",
        "/events/",
        "/search/?q=az1",
    ]


def test_every_page_is_built_for_a_phone(admin_client, pages):
    for url in pages:
        response = admin_client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html, url
        assert 'id="nav-toggle"' in html and '<label for="nav-toggle"' in html, url
        assert " style=" not in html, url
        for match in re.finditer(r"<table([^>]*)>", html):
            before = html[: match.start()].rstrip()
            assert before.endswith('<div class="table-wrap">') or "kv-rows" in match.group(1), (url, match.group(0))


def test_the_login_page_has_no_navigation_to_fold(db, client):
    html = client.get("/login/").content.decode()
    assert 'id="nav-toggle"' not in html and '<meta name="viewport"' in html


def test_the_favicon_answers(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("dashboard/favicon.svg")
