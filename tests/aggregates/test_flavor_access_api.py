"""``/flavors/{id}/os-flavor-access`` and the addTenantAccess / removeTenantAccess actions."""

import pytest

from aggregates.audit.models import Event
from aggregates.flavors import services as flavors
from aggregates.flavors.models import FlavorAccess
from aggregates.identity import services as identity
from tests.plugins.api import ApiClient


@pytest.fixture
def private(db, system):
    return flavors.create_flavor(system, "private", 512, 1, 1, flavorid="p1", is_public=False)


@pytest.fixture
def public(db, system):
    return flavors.create_flavor(system, "public", 512, 1, 1, flavorid="pub")


@pytest.fixture
def other_project(db):
    return identity.ensure_project("other")


@pytest.fixture
def other_member(token_for):
    return ApiClient(token_for("member", username="other-member", project_name="other"))


def add(api, project_id, flavorid="p1", version=None):
    return api.post(f"/flavors/{flavorid}/action", {"addTenantAccess": {"tenant": project_id}}, version=version)


def remove(api, project_id, flavorid="p1", version=None):
    return api.post(f"/flavors/{flavorid}/action", {"removeTenantAccess": {"tenant": project_id}}, version=version)


def granted():
    return sorted(FlavorAccess.objects.values_list("flavor__flavorid", "project_id"))


# --- reading the access list ------------------------------------------------------------


def test_a_new_private_flavor_has_an_empty_access_list(admin_api, private):
    response = admin_api.get("/flavors/p1/os-flavor-access")
    assert response.status_code == 200
    assert response.json() == {"flavor_access": []}


def test_public_flavors_have_no_access_list(admin_api, public):
    response = admin_api.get("/flavors/pub/os-flavor-access")
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Access list not available for public flavors."


def test_access_list_of_unknown_flavor(admin_api, db):
    response = admin_api.get("/flavors/nope/os-flavor-access")
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Flavor nope could not be found."


def test_access_list_permissions(reader_api, member_api, anon_api, private):
    assert reader_api.get("/flavors/p1/os-flavor-access").status_code == 200
    response = member_api.get("/flavors/p1/os-flavor-access")
    assert response.status_code == 403
    assert "os_compute_api:os-flavor-access" in response.json()["forbidden"]["message"]
    assert anon_api.get("/flavors/p1/os-flavor-access").status_code == 401


# --- addTenantAccess ----------------------------------------------------------------------


def test_add_tenant_access(admin_api, private, other_project, other_member):
    assert other_member.get("/flavors/p1").status_code == 404
    response = add(admin_api, other_project.pk)
    assert response.status_code == 200
    assert response.json() == {"flavor_access": [{"flavor_id": "p1", "tenant_id": other_project.pk}]}
    assert admin_api.get("/flavors/p1/os-flavor-access").json() == response.json()
    # Members of the project now see the flavor, in lists and alone.
    assert other_member.get("/flavors/p1").status_code == 200
    assert [flavor["id"] for flavor in other_member.get("/flavors").json()["flavors"]] == ["p1"]
    event = Event.objects.get(event_type="flavor.update")
    assert (event.object_type, event.object_id, event.payload["projects"]) == ("flavor", "p1", [other_project.pk])


@pytest.mark.parametrize("accept", ["", "text/html"])
def test_actions_answer_json_whatever_the_accept_header(admin_api, private, other_project, accept):
    # openstacksdk sends flavor actions with an empty Accept header.
    response = admin_api.post(
        "/flavors/p1/action", {"addTenantAccess": {"tenant": other_project.pk}}, headers={"Accept": accept}
    )
    assert response.status_code == 200
    assert response.json()["flavor_access"] == [{"flavor_id": "p1", "tenant_id": other_project.pk}]


def test_add_two_projects_lists_both(admin_api, private, other_project):
    demo = identity.ensure_project("demo")
    add(admin_api, other_project.pk)
    response = add(admin_api, demo.pk)
    assert [entry["tenant_id"] for entry in response.json()["flavor_access"]] == [other_project.pk, demo.pk]


def test_add_unknown_project_is_400(admin_api, private):
    response = add(admin_api, "no-such-project")
    assert response.status_code == 400
    assert "Project ID no-such-project is not a valid project." in response.json()["badRequest"]["message"]
    assert granted() == []


def test_project_is_checked_before_the_flavor(admin_api, db):
    assert add(admin_api, "no-such-project", flavorid="nope").status_code == 400


def test_add_to_unknown_flavor_is_404(admin_api, other_project):
    response = add(admin_api, other_project.pk, flavorid="nope")
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Flavor nope could not be found."


def test_add_twice_is_409(admin_api, private, other_project):
    add(admin_api, other_project.pk)
    response = add(admin_api, other_project.pk)
    assert response.status_code == 409
    assert response.json()["conflictingRequest"]["message"] == (
        f"Flavor access already exists for flavor p1 and project {other_project.pk} combination."
    )
    assert granted() == [("p1", other_project.pk)]
    assert Event.objects.filter(event_type="flavor.update").count() == 1


def test_add_to_public_flavor_is_409_from_2_7(admin_api, public, other_project):
    response = add(admin_api, other_project.pk, flavorid="pub", version="2.7")
    assert response.status_code == 409
    assert response.json()["conflictingRequest"]["message"] == "Can not add access to a public flavor."
    assert granted() == []
    before = add(admin_api, other_project.pk, flavorid="pub", version="2.6")
    assert before.status_code == 200
    assert granted() == [("pub", other_project.pk)]


@pytest.mark.parametrize("role_api", ["reader_api", "member_api"])
def test_add_and_remove_are_admin_only(request, role_api, private, other_project):
    api = request.getfixturevalue(role_api)
    response = add(api, other_project.pk)
    assert response.status_code == 403
    assert "os_compute_api:os-flavor-access:add_tenant_access" in response.json()["forbidden"]["message"]
    FlavorAccess.objects.create(flavor=private, project_id=other_project.pk)
    response = remove(api, other_project.pk)
    assert response.status_code == 403
    assert "os_compute_api:os-flavor-access:remove_tenant_access" in response.json()["forbidden"]["message"]
    assert granted() == [("p1", other_project.pk)]


def test_actions_need_a_token(anon_api, private):
    assert add(anon_api, "x").status_code == 401


# --- removeTenantAccess ------------------------------------------------------------------


def test_remove_tenant_access(admin_api, private, other_project, other_member):
    add(admin_api, other_project.pk)
    response = remove(admin_api, other_project.pk)
    assert response.status_code == 200
    assert response.json() == {"flavor_access": []}
    assert granted() == []
    assert other_member.get("/flavors/p1").status_code == 404
    assert Event.objects.filter(event_type="flavor.update").latest("id").payload["projects"] == []


def test_remove_not_granted_is_404(admin_api, private, other_project):
    response = remove(admin_api, other_project.pk)
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == (
        f"Flavor access not found for p1 / {other_project.pk} combination."
    )


def test_remove_grant_of_a_vanished_project(admin_api, private):
    FlavorAccess.objects.create(flavor=private, project_id="gone")
    assert remove(admin_api, "gone").status_code == 200
    assert granted() == []


def test_remove_from_unknown_flavor_is_404(admin_api, other_project):
    assert remove(admin_api, other_project.pk, flavorid="nope").status_code == 404


# --- malformed action bodies ------------------------------------------------------------


@pytest.mark.parametrize(
    "body, message",
    [
        ({"addTenantAccess": {"tenant": "x"}, "removeTenantAccess": {"tenant": "x"}}, "exactly one key"),
        ({}, "exactly one key"),
        (["addTenantAccess"], "exactly one key"),
        ({"grantAccess": {"tenant": "x"}}, "There is no such action: grantAccess"),
        ({"addTenantAccess": {}}, "'tenant' is a required property"),
        ({"addTenantAccess": {"tenant": ""}}, "tenant"),
        ({"addTenantAccess": {"tenant": 5}}, "is not of type 'string'"),
        ({"addTenantAccess": {"tenant": "x" * 256}}, "is too long"),
        ({"addTenantAccess": {"tenant": "x", "role": "admin"}}, "Additional properties"),
        ({"addTenantAccess": "x"}, "is not of type 'object'"),
        ({"removeTenantAccess": None}, "is not of type 'object'"),
    ],
)
def test_bad_action_bodies_are_400(admin_api, private, other_project, body, message):
    FlavorAccess.objects.create(flavor=private, project_id=other_project.pk)
    response = admin_api.post("/flavors/p1/action", body)
    assert response.status_code == 400
    assert message in response.json()["badRequest"]["message"]
    assert granted() == [("p1", other_project.pk)]


def test_malformed_json_action_is_400(admin_api, private):
    response = admin_api.post("/flavors/p1/action", raw='{"addTenantAccess": ')
    assert response.status_code == 400
    assert granted() == []
