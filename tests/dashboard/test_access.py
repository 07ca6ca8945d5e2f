"""Who reaches the console: anonymous and non-staff users are sent to log in,
readers see every page but change nothing, admins may change."""

import pytest

from aggregates.audit.models import Event
from aggregates.flavors.models import Flavor, FlavorExtraSpec
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from aggregates.hosts.models import Service


@pytest.fixture
def world(system, make_host):
    make_host("node1")
    make_host("node2")
    aggregate = services.create_aggregate(system, "fast-io", "nova")
    services.add_host(system, aggregate.id, "node1")
    from aggregates.flavors import services as flavors

    flavors.create_flavor(system, name="ssd.large", flavorid="ssd.large", ram=1024, vcpus=1, disk=10)
    flavors.set_extra_specs(system, "ssd.large", {"aggregate_instance_extra_specs:ssd": "true"})
    return aggregate


def read_pages(aggregate):
    return [
        "/",
        "/aggregates/",
        f"/aggregates/{aggregate.id}/",
        "/zones/",
        "/hosts/",
        "/hosts/node1/",
        "/flavors/",
        "/flavors/ssd.large/",
        "/resource-providers/",
        "/events/",
    ]


def form_pages(aggregate):
    return [f"/aggregates/{aggregate.id}/edit/", "/aggregates/new/", "/flavors/new/"]


def pages(aggregate):
    return read_pages(aggregate) + form_pages(aggregate) + ["/aggregates/?format=csv"]


def actions(aggregate):
    """Every write the console offers, with a body that an admin's request would apply."""
    meta = {"meta-TOTAL_FORMS": "1", "meta-INITIAL_FORMS": "0", "meta-0-key": "gpu", "meta-0-value": "1"}
    return [
        ("/aggregates/new/", {"name": "new-agg", "hosts": "node2"}),
        (f"/aggregates/{aggregate.id}/edit/", {"name": "renamed", "availability_zone": "nova"}),
        (f"/aggregates/{aggregate.id}/metadata/", meta),
        (f"/aggregates/{aggregate.id}/hosts/add/", {"hosts": ["node2"]}),
        (f"/aggregates/{aggregate.id}/hosts/remove/", {"host": "node1"}),
        (f"/aggregates/{aggregate.id}/delete/", {}),
        ("/hosts/node1/status/", {"action": "disable", "disabled_reason": "maintenance"}),
        ("/flavors/new/", {"name": "f2", "ram": "1", "vcpus": "1", "disk": "0", "ephemeral": "0", "swap": "0"}),
        ("/flavors/ssd.large/extra-specs/", {"key": "hw:cpu_policy", "value": "dedicated"}),
        ("/flavors/ssd.large/extra-specs/delete/", {"key": "aggregate_instance_extra_specs:ssd"}),
        ("/flavors/ssd.large/delete/", {}),
    ]


def state():
    """Everything the console's writes could change."""
    return (
        list(Aggregate.objects.values_list("name", flat=True)),
        list(AggregateHost.objects.values_list("aggregate_id", "host")),
        list(AggregateMetadata.objects.values_list("aggregate_id", "key", "value")),
        list(Service.objects.values_list("host", "disabled")),
        list(Flavor.objects.values_list("flavorid", flat=True)),
        list(FlavorExtraSpec.objects.values_list("key", "value")),
        Event.objects.count(),
    )


def test_anonymous_users_are_sent_to_login_from_every_page(client, world):
    for url in pages(world):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/?next="), url


def test_non_staff_users_are_sent_to_login(non_staff_client, world):
    for url in pages(world):
        assert non_staff_client.get(url).status_code == 302, url


@pytest.mark.parametrize("role", [None, "member"])
def test_staff_without_reader_or_admin_role_are_refused(db, role):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from aggregates.identity import services as identity

    user = get_user_model().objects.create_user("staff", password="pw", is_staff=True)
    if role:
        identity.grant(user, identity.ensure_project("demo"), role)
    client = Client()
    client.force_login(user)
    response = client.get("/aggregates/")
    assert response.status_code == 403 and b"holds neither role" in response.content


def test_readers_see_every_page_without_change_controls(reader_client, world):
    assert reader_client.get("/aggregates/?format=csv").status_code == 200
    for url in read_pages(world):
        response = reader_client.get(url)
        assert response.status_code == 200, url
        assert response.context["can_change"] is False
    detail = reader_client.get(f"/aggregates/{world.id}/").content
    assert b"Add selected hosts" not in detail and b"Save metadata" not in detail and b">Remove<" not in detail
    assert b"Create aggregate" not in reader_client.get("/aggregates/").content


def test_readers_do_not_get_the_forms(reader_client, world):
    for url in form_pages(world):
        assert reader_client.get(url).status_code == 403, url


def test_readers_cannot_change_anything(reader_client, world):
    before = state()
    for url, body in actions(world):
        response = reader_client.post(url, body)
        assert response.status_code == 403, url
    assert state() == before


def test_anonymous_writes_change_nothing(client, world):
    before = state()
    for url, body in actions(world):
        response = client.post(url, body)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url
    assert state() == before


def test_admins_can_apply_every_action(admin_client, world):
    for url, body in actions(world):
        response = admin_client.post(url, body)
        assert response.status_code == 302, (url, response.content[:2000])
    assert not Flavor.objects.filter(flavorid="ssd.large").exists()


def test_every_form_has_a_csrf_token(admin_client, world):
    for url in (
        f"/aggregates/{world.id}/",
        "/aggregates/new/",
        f"/aggregates/{world.id}/edit/",
        "/hosts/node1/",
        "/flavors/new/",
        "/flavors/ssd.large/",
    ):
        content = admin_client.get(url).content.decode()
        assert content.count('method="post"') == content.count("csrfmiddlewaretoken"), url


def test_posts_without_csrf_token_are_refused(world):
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.create_user("a", password="pw", is_staff=True, is_superuser=True))
    response = client.post("/aggregates/new/", {"name": "sneaky"})
    assert response.status_code == 403 and not Aggregate.objects.filter(name="sneaky").exists()


def test_login_and_logout(client, world):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("op", password="secret", is_staff=True, is_superuser=True)
    response = client.post("/login/", {"username": "op", "password": "secret", "next": "/aggregates/"})
    assert response.status_code == 302 and response["Location"] == "/aggregates/"
    assert client.get("/aggregates/").status_code == 200
    client.post("/logout/")
    assert client.get("/aggregates/").status_code == 302
    response = client.post("/login/", {"username": "op", "password": "secret", "next": ""})
    assert response.status_code == 302 and response["Location"] == "/"


def test_a_wrong_password_is_refused_on_the_form(client, db):
    response = client.post("/login/", {"username": "op", "password": "nope"})
    assert response.status_code == 200 and b"enter a correct username and password" in response.content


def test_the_django_admin_registers_every_model(admin_client):
    from django.apps import apps
    from django.contrib import admin

    for app in ("aggregates", "placement"):
        for model in apps.get_app_config(app).get_models():
            assert admin.site.is_registered(model), model
    assert admin_client.get("/admin/").status_code == 200


def test_static_assets_are_served_by_the_app(client, db):
    response = client.get("/static/dashboard/console.css")
    assert response.status_code == 200 and b"prefers-color-scheme: dark" in b"".join(response.streaming_content)
