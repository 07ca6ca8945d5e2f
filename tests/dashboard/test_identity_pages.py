"""The console's Identity pages: projects, users and role grants, changed
through the same service functions as the Keystone API."""

import pytest
from django.contrib.auth import get_user_model

from aggregates.identity import services as identity
from aggregates.identity.models import Project, RoleAssignment, Token
from tests.plugins.api import ApiClient


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def team(system):
    """Project team-a with carol (password carol-pw) as its member."""
    project = identity.create_project(system, "team-a", description="Team A")
    carol = identity.create_user(system, "carol", password="carol-pw")
    identity.grant_role(system, project.id, identity.user_id_of(carol), identity.role_id_of("member"))
    return project, carol


def login(username, password, project):
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": username, "domain": {"id": "default"}, "password": password}},
            },
            "scope": {"project": {"name": project, "domain": {"id": "default"}}},
        }
    }
    return ApiClient().post("/identity/v3/auth/tokens", body)


def test_admins_see_projects_users_and_the_forms(admin_client, team):
    project, _ = team
    listing = admin_client.get("/projects/").content.decode()
    assert "team-a" in listing and project.id in listing and 'id="create-project"' in listing
    detail = admin_client.get(f"/projects/{project.id}/").content.decode()
    assert "carol" in detail and "member" in detail and 'id="grant"' in detail
    users = admin_client.get("/users/").content.decode()
    assert "carol" in users and "member on team-a" in users and 'id="create-user"' in users
    assert 'class="active">Identity</a>' in listing


def test_readers_see_the_pages_without_forms_and_change_nothing(reader_client, team):
    project, carol = team
    for url in ("/projects/", f"/projects/{project.id}/", "/users/"):
        response = reader_client.get(url)
        assert response.status_code == 200
        assert 'method="post" action="/projects' not in response.content.decode()
        assert 'action="/users' not in response.content.decode()
    carol_id = identity.user_id_of(carol)
    posts = [
        ("/projects/new/", {"name": "x"}),
        (f"/projects/{project.id}/grant/", {"user": carol_id, "role": identity.role_id_of("admin")}),
        (f"/projects/{project.id}/revoke/", {"user_id": carol_id, "role_id": identity.role_id_of("member")}),
        (f"/projects/{project.id}/enable/", {"enabled": "false"}),
        (f"/projects/{project.id}/delete/", {}),
        ("/users/new/", {"name": "eve", "password": "pw"}),
        ("/users/enable/", {"user_id": carol_id, "enabled": "false"}),
        ("/users/delete/", {"user_id": carol_id}),
    ]
    for url, data in posts:
        assert reader_client.post(url, data).status_code == 403, url
    assert Project.objects.get(pk=project.id).enabled and not Project.objects.filter(name="x").exists()
    assert list(RoleAssignment.objects.filter(user=carol).values_list("role", flat=True)) == ["member"]
    assert not get_user_model().objects.filter(username="eve").exists()
    assert get_user_model().objects.get(username="carol").is_active


def test_an_unknown_project_page_is_404(admin_client, db):
    assert admin_client.get(f"/projects/{'f' * 32}/").status_code == 404


def test_admin_creates_a_project_and_a_duplicate_is_refused_on_the_form(admin_client, db):
    response = admin_client.post("/projects/new/", {"name": "team-b", "description": "B"})
    project = Project.objects.get(name="team-b")
    assert response.status_code == 302 and response["Location"] == f"/projects/{project.id}/"
    assert project.description == "B"
    refused = admin_client.post("/projects/new/", {"name": "team-b"})
    assert refused.status_code == 400
    assert "Duplicate entry found with name team-b" in refused.content.decode()
    assert Project.objects.filter(name="team-b").count() == 1
    blank = admin_client.post("/projects/new/", {"name": "   "})
    assert blank.status_code == 400 and "must not be empty or blank" in blank.content.decode()


def test_admin_creates_a_user_with_a_role_who_then_logs_in(admin_client, team):
    project, _ = team
    response = admin_client.post(
        "/users/new/",
        {
            "name": "dave",
            "password": "dave-pw",
            "email": "d@example.test",
            "project": project.id,
            "role": identity.role_id_of("member"),
        },
    )
    assert response.status_code == 302
    dave = get_user_model().objects.get(username="dave")
    assert identity.attributes_of(dave).default_project_id == project.id
    token = login("dave", "dave-pw", "team-a")
    assert token.status_code == 201 and [r["name"] for r in token.json()["token"]["roles"]] == ["member"]
    refused = admin_client.post("/users/new/", {"name": "dave", "password": "x"})
    assert refused.status_code == 400 and "Duplicate entry found with name dave" in refused.content.decode()


def test_grant_and_revoke_on_the_project_page_show_in_the_api(admin_client, admin_api, team):
    project, carol = team
    carol_id = identity.user_id_of(carol)
    reader = identity.role_id_of("reader")
    assert admin_client.post(f"/projects/{project.id}/grant/", {"user": carol_id, "role": reader}).status_code == 302
    listed = admin_api.get(f"/identity/v3/role_assignments?scope.project.id={project.id}").json()["role_assignments"]
    assert sorted(a["role"]["id"] for a in listed) == sorted([reader, identity.role_id_of("member")])
    revoke = {"user_id": carol_id, "role_id": identity.role_id_of("member")}
    assert admin_client.post(f"/projects/{project.id}/revoke/", revoke).status_code == 302
    listed = admin_api.get(f"/identity/v3/role_assignments?scope.project.id={project.id}").json()["role_assignments"]
    assert [a["role"]["id"] for a in listed] == [reader]
    again = admin_client.post(f"/projects/{project.id}/revoke/", revoke, follow=True)
    assert "Could not find role assignment" in again.content.decode()


def test_disabling_and_deleting_a_project_ends_its_tokens(admin_client, team):
    project, _ = team
    assert login("carol", "carol-pw", "team-a").status_code == 201
    admin_client.post(f"/projects/{project.id}/enable/", {"enabled": "false"})
    assert not Project.objects.get(pk=project.id).enabled
    assert login("carol", "carol-pw", "team-a").status_code == 401
    admin_client.post(f"/projects/{project.id}/enable/", {"enabled": "true"})
    assert login("carol", "carol-pw", "team-a").status_code == 201
    response = admin_client.post(f"/projects/{project.id}/delete/")
    assert response.status_code == 302 and response["Location"] == "/projects/"
    assert not Project.objects.filter(pk=project.id).exists()
    assert not Token.objects.filter(project_id=project.id).exists()


def test_deleting_a_user_revokes_its_tokens(admin_client, team):
    _, carol = team
    token = login("carol", "carol-pw", "team-a").headers["X-Subject-Token"]
    assert identity.caller_for_token(token) is not None
    response = admin_client.post("/users/delete/", {"user_id": identity.user_id_of(carol)})
    assert response.status_code == 302
    assert identity.caller_for_token(token) is None
    assert not get_user_model().objects.filter(username="carol").exists()


def test_disabling_a_user_ends_its_tokens_until_enabled(admin_client, team):
    _, carol = team
    token = login("carol", "carol-pw", "team-a").headers["X-Subject-Token"]
    carol_id = identity.user_id_of(carol)
    response = admin_client.post("/users/enable/", {"user_id": carol_id, "enabled": "false"}, follow=True)
    assert "User carol disabled." in response.content.decode()
    assert identity.caller_for_token(token) is None
    assert login("carol", "carol-pw", "team-a").status_code == 401
    admin_client.post("/users/enable/", {"user_id": carol_id, "enabled": "true"})
    assert login("carol", "carol-pw", "team-a").status_code == 201
    assert identity.caller_for_token(token) is None  # revoked, not suspended
