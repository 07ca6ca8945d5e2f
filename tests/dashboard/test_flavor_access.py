"""The flavor page's project access: listed, added by name or id, removed,
through the same service functions as the compute API's os-flavor-access."""

import pytest
from django.contrib.messages import get_messages

from aggregates.audit.models import Event
from aggregates.flavors import services as flavor_services
from aggregates.flavors.models import FlavorAccess
from aggregates.identity import services as identity


def messages_of(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


@pytest.fixture
def private(system, db):
    return flavor_services.create_flavor(system, "acme.small", 2048, 2, 20, flavorid="acme.small", is_public=False)


@pytest.fixture
def acme(db):
    return identity.ensure_project("acme")


@pytest.fixture
def globex(db):
    return identity.ensure_project("globex")


def granted():
    return sorted(FlavorAccess.objects.values_list("project_id", flat=True))


def test_private_flavor_lists_the_projects_with_access_and_a_remove_button_each(
    admin_client, system, private, acme, globex
):
    flavor_services.add_tenant_access(system, "acme.small", acme.id)
    content = admin_client.get("/flavors/acme.small/").content.decode()
    assert 'id="access-projects"' in content and "acme" in content and acme.id in content
    assert f'name="project_id" value="{acme.id}"' in content
    assert f'name="project_id" value="{globex.id}"' not in content
    assert 'action="/flavors/acme.small/access/"' in content


def test_add_a_project_by_name(admin_client, private, acme):
    before = Event.objects.latest("id").id
    response = admin_client.post("/flavors/acme.small/access/", {"project": "acme"})
    assert response.status_code == 302 and response["Location"] == "/flavors/acme.small/#access"
    assert granted() == [acme.id]
    assert Event.objects.filter(id__gt=before, event_type="flavor.update", object_id="acme.small").count() == 1
    assert messages_of(response) == [f"Project acme ({acme.id}) may now use this flavor."]


def test_add_a_project_by_id(admin_client, private, acme):
    response = admin_client.post("/flavors/acme.small/access/", {"project": acme.id})
    assert response.status_code == 302
    assert granted() == [acme.id]


def test_an_unknown_project_name_is_a_form_error_naming_it(admin_client, private, acme):
    before = Event.objects.latest("id").id
    response = admin_client.post("/flavors/acme.small/access/", {"project": "initech"})
    assert response.status_code == 400
    assert response.context["access_form"].errors["project"] == ["No project is named initech or has that id."]
    assert "No project is named initech" in response.content.decode()
    assert response.context["canonical_url"] == "/flavors/acme.small/#access"
    assert granted() == []
    assert not Event.objects.filter(id__gt=before).exists()


def test_adding_a_project_twice_shows_the_service_refusal(admin_client, system, private, acme):
    flavor_services.add_tenant_access(system, "acme.small", acme.id)
    response = admin_client.post("/flavors/acme.small/access/", {"project": "acme"})
    assert response.status_code == 400
    assert "Flavor access already exists" in response.context["access_form"].errors["project"][0]
    assert granted() == [acme.id]


def test_remove_a_project(admin_client, system, private, acme, globex):
    flavor_services.add_tenant_access(system, "acme.small", acme.id)
    flavor_services.add_tenant_access(system, "acme.small", globex.id)
    response = admin_client.post("/flavors/acme.small/access/remove/", {"project_id": acme.id})
    assert response.status_code == 302 and response["Location"] == "/flavors/acme.small/#access"
    assert granted() == [globex.id]
    assert messages_of(response) == [f"Project acme ({acme.id}) no longer has access to this flavor."]


def test_removing_a_project_without_access_says_so(admin_client, private, acme):
    response = admin_client.post("/flavors/acme.small/access/remove/", {"project_id": acme.id})
    assert response.status_code == 302
    assert "Flavor access not found" in messages_of(response)[0]


def test_public_flavor_says_access_lists_are_for_private_flavors(admin_client, system, acme):
    flavor_services.create_flavor(system, "m1.small", 2048, 1, 20, flavorid="m1.small")
    content = admin_client.get("/flavors/m1.small/").content.decode()
    assert "Access lists only apply to private flavors." in content
    assert 'action="/flavors/m1.small/access/"' not in content
    response = admin_client.post("/flavors/m1.small/access/", {"project": "acme"})
    assert response.status_code == 400
    assert "Can not add access to a public flavor" in response.context["access_form"].errors["project"][0]
    assert granted() == []


def test_access_changes_are_for_admins_only(reader_client, private, acme):
    content = reader_client.get("/flavors/acme.small/").content.decode()
    assert 'id="add-access"' not in content
    assert reader_client.post("/flavors/acme.small/access/", {"project": "acme"}).status_code == 403
    assert granted() == []
