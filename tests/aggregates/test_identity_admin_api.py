"""Managing who may use the cloud through Keystone's v3 admin routes at
/identity: projects, users, role grants, role assignments, roles, domains."""

import re
from unittest import mock

import pytest
from django.contrib.auth import get_user_model

from aggregates.audit.models import Event
from aggregates.identity import services as identity
from aggregates.identity.models import Project, RoleAssignment, Token
from aggregates.images.models import Image
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

V3 = "/identity/v3"
PROJECTS, USERS, ROLES = f"{V3}/projects", f"{V3}/users", f"{V3}/roles"
ASSIGNMENTS, DOMAINS = f"{V3}/role_assignments", f"{V3}/domains"
HEX32 = re.compile(r"^[0-9a-f]{32}$")
BASE = "http://testserver/identity/v3"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def keystone_error(response, status, message=None):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == status
    if message is not None:
        assert message in body["error"]["message"], body["error"]["message"]
    return body["error"]["message"]


def login(username, password, project):
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": username, "domain": {"name": "Default"}, "password": password}},
            },
            "scope": {"project": {"name": project, "domain": {"name": "Default"}}},
        }
    }
    return ApiClient().post(f"{V3}/auth/tokens", body)


def logged_in(username, password, project):
    response = login(username, password, project)
    assert response.status_code == 201, response.content
    return ApiClient(response.headers["X-Subject-Token"])


def token_works(api):
    return api.get(f"{V3}/auth/tokens", headers={"X-Subject-Token": api.token}).status_code == 200


def create_project(api, name, **fields):
    response = api.post(PROJECTS, {"project": {"name": name, **fields}})
    assert response.status_code == 201, response.content
    return response.json()["project"]


def create_user(api, name, password="pw-1", **fields):
    response = api.post(USERS, {"user": {"name": name, "password": password, **fields}})
    assert response.status_code == 201, response.content
    return response.json()["user"]


def role_id(name):
    return identity.role_id_of(name)


def grant_path(project_id, user_id, role):
    return f"{PROJECTS}/{project_id}/users/{user_id}/roles/{role_id(role)}"


# --- projects ------------------------------------------------------------------------


def test_admin_creates_a_project_in_keystones_shape(admin_api):
    project = create_project(admin_api, "team-a", description="Team A")
    assert HEX32.match(project["id"])
    assert project == {
        "id": project["id"],
        "name": "team-a",
        "description": "Team A",
        "domain_id": "default",
        "enabled": True,
        "is_domain": False,
        "parent_id": "default",
        "tags": [],
        "options": {},
        "links": {"self": f"{BASE}/projects/{project['id']}"},
    }
    assert admin_api.get(f"{PROJECTS}/{project['id']}").json()["project"] == project
    assert Event.objects.filter(event_type="identity.project.created", object_id=project["id"]).exists()


def test_a_duplicate_project_name_is_409(admin_api):
    create_project(admin_api, "team-a")
    keystone_error(
        admin_api.post(PROJECTS, {"project": {"name": "team-a"}}),
        409,
        "Conflict occurred attempting to store project - Duplicate entry found with name team-a at domain ID default.",
    )
    assert Project.objects.filter(name="team-a").count() == 1


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"project": {"name": ""}}, 400, "Invalid input for field 'project/name'"),
        ({"project": {"name": "   "}}, 400, "Invalid input for field 'project/name'"),
        (
            {"project": {"name": "x" * 65}},
            400,
            "Invalid input for field 'project/name': must be at most 64 characters long.",
        ),
        ({"project": {"name": 7}}, 400, "Invalid input for field 'project/name': must be of type string."),
        ({"project": {"description": "no name"}}, 400, "'name' is a required property"),
        ({"project": {"name": "p", "enabled": "yes"}}, 400, "Invalid input for field 'project/enabled'"),
        ({"project": {"name": "p", "colour": "red"}}, 400, "'colour'"),
        ({"project": {"name": "p", "is_domain": True}}, 400, "cannot act as a domain"),
        ({"project": {"name": "p", "parent_id": "f" * 32}}, 400, "no project hierarchy"),
        ({"project": {"name": "p", "tags": ["a"]}}, 400, "Invalid input for field 'project/tags'"),
        ({"project": {"name": "p", "domain_id": "other"}}, 400, "Could not find domain: other."),
        ({"name": "p"}, 400, "Expecting to find project in request body."),
        (["p"], 400, "Expecting to find project in request body."),
    ],
)
def test_bad_project_input_is_refused_and_changes_nothing(admin_api, body, status, message):
    before = Project.objects.count()
    keystone_error(admin_api.post(PROJECTS, body), status, message)
    assert Project.objects.count() == before


@pytest.mark.parametrize("role", ["member", "reader"])
def test_only_admins_change_projects(token_for, role, admin_api):
    api = ApiClient(token_for(role))
    project = create_project(admin_api, "team-a")
    keystone_error(api.post(PROJECTS, {"project": {"name": "x"}}), 403, "identity:create_project")
    keystone_error(api.patch(f"{PROJECTS}/{project['id']}", {"project": {"name": "y"}}), 403, "identity:update_project")
    keystone_error(api.delete(f"{PROJECTS}/{project['id']}"), 403, "identity:delete_project")
    assert list(Project.objects.filter(name__in=["x", "y", "team-a"]).values_list("name", flat=True)) == ["team-a"]


def test_writes_need_a_token(anon_api):
    keystone_error(anon_api.post(PROJECTS, {"project": {"name": "x"}}), 401)
    keystone_error(anon_api.post(USERS, {"user": {"name": "x"}}), 401)
    assert not Project.objects.filter(name="x").exists()


def test_projects_filter_by_domain(admin_api):
    create_project(admin_api, "team-a")
    names = [p["name"] for p in admin_api.get(f"{PROJECTS}?domain_id=default").json()["projects"]]
    assert "team-a" in names
    assert admin_api.get(f"{PROJECTS}?domain_id=other").json()["projects"] == []
    assert [p["name"] for p in admin_api.get(f"{PROJECTS}?name=team-a").json()["projects"]] == ["team-a"]


def test_admin_updates_a_project(admin_api):
    project = create_project(admin_api, "team-a")
    response = admin_api.patch(
        f"{PROJECTS}/{project['id']}", {"project": {"name": "team-b", "description": "B", "enabled": False}}
    )
    assert response.status_code == 200, response.content
    updated = response.json()["project"]
    assert (updated["id"], updated["name"], updated["description"], updated["enabled"]) == (
        project["id"],
        "team-b",
        "B",
        False,
    )
    assert Project.objects.get(pk=project["id"]).name == "team-b"


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"project": {}}, 400, "Invalid input for field 'project'"),
        ({"project": {"name": "taken"}}, 409, "Duplicate entry found with name taken"),
        ({"project": {"domain_id": "other"}}, 400, "Cannot change Domain ID"),
        ({"project": {"is_domain": True}}, 400, "Update of `is_domain` is not allowed."),
        ({"project": {"parent_id": "f" * 32}}, 400, "Update of `parent_id` is not allowed."),
    ],
)
def test_bad_project_updates_are_refused_and_change_nothing(admin_api, body, status, message):
    create_project(admin_api, "taken")
    project = create_project(admin_api, "team-a")
    keystone_error(admin_api.patch(f"{PROJECTS}/{project['id']}", body), status, message)
    assert Project.objects.get(pk=project["id"]).name == "team-a"


def test_unknown_projects_are_404_on_every_write(admin_api):
    ghost = "f" * 32
    keystone_error(
        admin_api.patch(f"{PROJECTS}/{ghost}", {"project": {"name": "x"}}), 404, f"Could not find project: {ghost}."
    )
    keystone_error(admin_api.delete(f"{PROJECTS}/{ghost}"), 404, f"Could not find project: {ghost}.")


def test_disabling_a_project_ends_its_tokens_for_good(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    assert admin_api.put(grant_path(project["id"], user["id"], "member")).status_code == 204
    carol = logged_in("carol", "pw-1", "team-a")
    assert token_works(carol)
    admin_api.patch(f"{PROJECTS}/{project['id']}", {"project": {"enabled": False}})
    assert not token_works(carol)
    keystone_error(login("carol", "pw-1", "team-a"), 401)
    admin_api.patch(f"{PROJECTS}/{project['id']}", {"project": {"enabled": True}})
    assert not token_works(carol)  # revoked, not only suspended
    assert token_works(logged_in("carol", "pw-1", "team-a"))


def test_deleting_a_project_revokes_its_tokens_and_grants(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol", default_project_id=project["id"])
    admin_api.put(grant_path(project["id"], user["id"], "member"))
    carol = logged_in("carol", "pw-1", "team-a")
    response = admin_api.delete(f"{PROJECTS}/{project['id']}")
    assert response.status_code == 204 and response.content == b""
    keystone_error(admin_api.get(f"{PROJECTS}/{project['id']}"), 404)
    assert not token_works(carol)
    assert not RoleAssignment.objects.filter(project_id=project["id"]).exists()
    # As Keystone, the user's default project is cleared with the project.
    assert "default_project_id" not in admin_api.get(f"{USERS}/{user['id']}").json()["user"]


def test_deleting_a_project_that_owns_servers_and_images_leaves_them(cloud, admin_api):
    """Keystone deletes a project whatever other services hold for it."""
    cloud.host("h1")
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    admin_api.put(grant_path(project["id"], user["id"], "member"))
    carol = logged_in("carol", "pw-1", "team-a")
    flavor, image = cloud.flavor(), cloud.image(owner=project["id"], visibility=Image.PRIVATE)
    response = carol.post("/servers", cli_body(flavor, image), version="2.100")
    assert response.status_code == 202, response.content
    server_id = response.json()["server"]["id"]

    assert admin_api.delete(f"{PROJECTS}/{project['id']}").status_code == 204
    shown = admin_api.get(f"/servers/{server_id}", version="2.100")
    assert shown.status_code == 200 and shown.json()["server"]["tenant_id"] == project["id"]
    listed = admin_api.get("/servers/detail?all_tenants=1", version="2.100")
    assert [s["id"] for s in listed.json()["servers"]] == [server_id]
    image_response = admin_api.client.get(f"/image/v2/images/{image.id}", headers={"X-Auth-Token": admin_api.token})
    assert image_response.status_code == 200 and image_response.json()["owner"] == project["id"]
    assert admin_api.delete(f"/servers/{server_id}", version="2.100").status_code == 204


# --- users ---------------------------------------------------------------------------


def test_admin_creates_a_user_in_keystones_shape(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(
        admin_api,
        "carol",
        default_project_id=project["id"],
        email="carol@example.test",
        description="Carol from team A",
        domain_id="default",
        enabled=True,
    )
    assert HEX32.match(user["id"])
    assert user == {
        "id": user["id"],
        "name": "carol",
        "domain_id": "default",
        "enabled": True,
        "password_expires_at": None,
        "options": {},
        "default_project_id": project["id"],
        "email": "carol@example.test",
        "description": "Carol from team A",
        "links": {"self": f"{BASE}/users/{user['id']}"},
    }
    assert admin_api.get(f"{USERS}/{user['id']}").json()["user"] == user
    assert user["id"] == identity.user_id_of(get_user_model().objects.get(username="carol"))


def test_a_new_user_logs_in_once_granted_a_role(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol", default_project_id=project["id"])
    keystone_error(login("carol", "pw-1", "team-a"), 401)  # a default project grants nothing
    assert admin_api.put(grant_path(project["id"], user["id"], "member")).status_code == 204
    response = login("carol", "pw-1", "team-a")
    assert response.status_code == 201
    assert [r["name"] for r in response.json()["token"]["roles"]] == ["member"]


def test_a_user_without_a_password_cannot_log_in(admin_api):
    project = create_project(admin_api, "team-a")
    response = admin_api.post(USERS, {"user": {"name": "svc", "password": None}})
    assert response.status_code == 201
    admin_api.put(grant_path(project["id"], response.json()["user"]["id"], "member"))
    keystone_error(login("svc", "", "team-a"), 401)


@pytest.mark.parametrize(
    "body, status, message",
    [
        (
            {"user": {"name": "taken"}},
            409,
            "Conflict occurred attempting to store user - Duplicate entry found with name taken at domain ID default.",
        ),
        ({"user": {"name": ""}}, 400, "Invalid input for field 'user/name'"),
        ({"user": {"name": "x" * 151}}, 400, "at most 150 characters"),
        (
            {"user": {"name": "u", "password": 5}},
            400,
            "Invalid input for field 'user/password': must be of type string or null.",
        ),
        ({"user": {"name": "u", "domain_id": "other"}}, 404, "Could not find domain: other."),
        ({"user": {"name": "u", "options": {"lock_password": True}}}, 400, "Invalid input for field 'user/options'"),
        ({"user": {"password": "pw"}}, 400, "'name' is a required property"),
        ({"name": "u"}, 400, "Expecting to find user in request body."),
    ],
)
def test_bad_user_input_is_refused_and_changes_nothing(admin_api, body, status, message):
    create_user(admin_api, "taken")
    before = get_user_model().objects.count()
    keystone_error(admin_api.post(USERS, body), status, message)
    assert get_user_model().objects.count() == before


def test_extra_user_attributes_are_taken_as_keystone_takes_them(admin_api):
    """Keystone's user schema allows other attributes (Tempest sends
    ``project_id`` with every user it creates); Corral takes them and keeps
    none (docs/compatibility.md)."""
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol", project_id=project["id"], email="carol@example.test")
    assert "project_id" not in user and user["email"] == "carol@example.test"
    response = admin_api.patch(f"{USERS}/{user['id']}", {"user": {"favourite": "tea", "description": "C"}})
    assert response.status_code == 200, response.content
    assert response.json()["user"] == {**user, "description": "C"}


def test_passwords_are_never_echoed(admin_api):
    response = admin_api.post(USERS, {"user": {"name": "u", "password": "s3cret", "enabled": "s3cret"}})
    assert "s3cret" not in keystone_error(response, 400)
    user = create_user(admin_api, "carol", password="s3cret")
    assert "password" not in user and "s3cret" not in admin_api.get(USERS).content.decode()


def test_users_are_listed_and_filtered(admin_api):
    create_user(admin_api, "carol")
    create_user(admin_api, "dave", enabled=False)
    response = admin_api.get(USERS)
    assert response.status_code == 200
    names = [user["name"] for user in response.json()["users"]]
    assert {"carol", "dave", "admin-user"} <= set(names)
    assert response.json()["links"] == {"self": f"{BASE}/users", "previous": None, "next": None}
    assert [u["name"] for u in admin_api.get(f"{USERS}?name=carol").json()["users"]] == ["carol"]
    assert [u["name"] for u in admin_api.get(f"{USERS}?enabled=false").json()["users"]] == ["dave"]
    assert admin_api.get(f"{USERS}?domain_id=other").json()["users"] == []


def test_a_user_may_read_itself_only(admin_api, token_for):
    member = ApiClient(token_for("member", username="mia"))
    mia_id = identity.user_id_of(get_user_model().objects.get(username="mia"))
    other = create_user(admin_api, "carol")
    assert member.get(f"{USERS}/{mia_id}").json()["user"]["name"] == "mia"
    keystone_error(member.get(f"{USERS}/{other['id']}"), 403, "identity:get_user")
    keystone_error(member.get(USERS), 403, "identity:list_users")
    keystone_error(member.patch(f"{USERS}/{mia_id}", {"user": {"name": "boss"}}), 403, "identity:update_user")
    keystone_error(member.delete(f"{USERS}/{other['id']}"), 403, "identity:delete_user")
    keystone_error(member.post(USERS, {"user": {"name": "eve"}}), 403, "identity:create_user")
    assert not get_user_model().objects.filter(username__in=["boss", "eve"]).exists()


def test_unknown_users_are_404(admin_api):
    ghost = "f" * 32
    keystone_error(admin_api.get(f"{USERS}/{ghost}"), 404, f"Could not find user: {ghost}.")
    keystone_error(admin_api.patch(f"{USERS}/{ghost}", {"user": {"name": "x"}}), 404, f"Could not find user: {ghost}.")
    keystone_error(admin_api.delete(f"{USERS}/{ghost}"), 404, f"Could not find user: {ghost}.")


def test_a_new_password_replaces_the_old_and_revokes_tokens(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    admin_api.put(grant_path(project["id"], user["id"], "member"))
    carol = logged_in("carol", "pw-1", "team-a")
    response = admin_api.patch(f"{USERS}/{user['id']}", {"user": {"password": "pw-2", "email": "c@example.test"}})
    assert response.status_code == 200 and response.json()["user"]["email"] == "c@example.test"
    assert not token_works(carol)
    keystone_error(login("carol", "pw-1", "team-a"), 401)
    assert token_works(logged_in("carol", "pw-2", "team-a"))


def test_disabling_a_user_revokes_its_tokens_and_refuses_logins(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    admin_api.put(grant_path(project["id"], user["id"], "member"))
    carol = logged_in("carol", "pw-1", "team-a")
    response = admin_api.patch(f"{USERS}/{user['id']}", {"user": {"enabled": False}})
    assert response.status_code == 200 and response.json()["user"]["enabled"] is False
    assert not token_works(carol)
    keystone_error(login("carol", "pw-1", "team-a"), 401)
    admin_api.patch(f"{USERS}/{user['id']}", {"user": {"enabled": True}})
    assert not token_works(carol)
    assert token_works(logged_in("carol", "pw-1", "team-a"))


def test_renaming_a_user_keeps_its_id_and_refuses_a_taken_name(admin_api):
    user = create_user(admin_api, "carol")
    create_user(admin_api, "dave")
    keystone_error(admin_api.patch(f"{USERS}/{user['id']}", {"user": {"name": "dave"}}), 409, "name dave")
    keystone_error(
        admin_api.patch(f"{USERS}/{user['id']}", {"user": {"domain_id": "x"}}), 400, "Cannot change Domain ID"
    )
    keystone_error(admin_api.patch(f"{USERS}/{user['id']}", {"user": {}}), 400, "Invalid input for field 'user'")
    renamed = admin_api.patch(f"{USERS}/{user['id']}", {"user": {"name": "caroline", "description": None}}).json()
    assert (renamed["user"]["id"], renamed["user"]["name"]) == (user["id"], "caroline")


def test_deleting_a_user_revokes_its_tokens_and_grants(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    admin_api.put(grant_path(project["id"], user["id"], "member"))
    carol = logged_in("carol", "pw-1", "team-a")
    response = admin_api.delete(f"{USERS}/{user['id']}")
    assert response.status_code == 204 and response.content == b""
    assert not token_works(carol)
    assert not Token.objects.filter(user__username="carol").exists()
    keystone_error(admin_api.get(f"{USERS}/{user['id']}"), 404)
    assert admin_api.get(f"{ASSIGNMENTS}?scope.project.id={project['id']}").json()["role_assignments"] == []


# --- roles and grants ------------------------------------------------------------------


def test_roles_are_listed_and_found_by_name(reader_api):
    roles = reader_api.get(ROLES).json()["roles"]
    assert sorted(role["name"] for role in roles) == ["admin", "manager", "member", "reader"]
    member = next(role for role in roles if role["name"] == "member")
    assert member == {
        "id": role_id("member"),
        "name": "member",
        "domain_id": None,
        "description": None,
        "options": {},
        "links": {"self": f"{BASE}/roles/{role_id('member')}"},
    }
    assert reader_api.get(f"{ROLES}?name=member").json()["roles"] == [member]
    assert reader_api.get(f"{ROLES}/{member['id']}").json()["role"] == member
    # A name is not an id: the clients then look the name up in the list.
    keystone_error(reader_api.get(f"{ROLES}/member"), 404, "Could not find role: member.")


def test_grant_check_list_and_revoke(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    path = grant_path(project["id"], user["id"], "member")
    assert admin_api.head(path).status_code == 404
    keystone_error(
        admin_api.get(path),
        404,
        f"Could not find role assignment with role: {role_id('member')}, user or group: {user['id']}, "
        f"project, domain, or system: {project['id']}.",
    )
    assert admin_api.put(path).status_code == 204
    assert admin_api.put(path).status_code == 204  # granting twice changes nothing
    assert admin_api.put(grant_path(project["id"], user["id"], "reader")).status_code == 204
    assert admin_api.head(path).status_code == 204
    response = admin_api.get(path)
    assert response.status_code == 204 and response.content == b""
    listed = admin_api.get(f"{PROJECTS}/{project['id']}/users/{user['id']}/roles").json()["roles"]
    assert sorted(role["name"] for role in listed) == ["member", "reader"]

    assert admin_api.delete(path).status_code == 204
    assert admin_api.head(path).status_code == 404
    keystone_error(admin_api.delete(path), 404, "Could not find role assignment")
    listed = admin_api.get(f"{PROJECTS}/{project['id']}/users/{user['id']}/roles").json()["roles"]
    assert [role["name"] for role in listed] == ["reader"]


def test_keystones_manager_role_is_granted_and_implies_member(admin_api):
    """Keystone's bootstrap has a manager role; clients (Tempest's dynamic
    credentials) look it up by name and grant it."""
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    (manager,) = admin_api.get(f"{ROLES}?name=manager").json()["roles"]
    assert manager["id"] == role_id("manager")
    assert admin_api.put(f"{PROJECTS}/{project['id']}/users/{user['id']}/roles/{manager['id']}").status_code == 204
    response = login("carol", "pw-1", "team-a")
    assert response.status_code == 201, response.content
    assert [role["name"] for role in response.json()["token"]["roles"]] == ["manager", "member"]


def test_grants_name_existing_things(admin_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    ghost = "f" * 32
    keystone_error(
        admin_api.put(f"{PROJECTS}/{project['id']}/users/{user['id']}/roles/{ghost}"),
        404,
        f"Could not find role: {ghost}.",
    )
    keystone_error(
        admin_api.put(f"{PROJECTS}/{project['id']}/users/{user['id']}/roles/member"),
        404,
        "Could not find role: member.",
    )
    keystone_error(admin_api.put(grant_path(project["id"], ghost, "member")), 404, f"Could not find user: {ghost}.")
    keystone_error(admin_api.put(grant_path(ghost, user["id"], "member")), 404, f"Could not find project: {ghost}.")
    assert not RoleAssignment.objects.filter(project_id=project["id"]).exists()


@pytest.mark.parametrize("role", ["member", "reader"])
def test_only_admins_grant_and_revoke(token_for, role, admin_api):
    api = ApiClient(token_for(role))
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    keystone_error(api.put(grant_path(project["id"], user["id"], "admin")), 403, "identity:create_grant")
    admin_api.put(grant_path(project["id"], user["id"], "member"))
    keystone_error(api.delete(grant_path(project["id"], user["id"], "member")), 403, "identity:revoke_grant")
    assert list(RoleAssignment.objects.filter(project_id=project["id"]).values_list("role", flat=True)) == ["member"]


# --- role assignments ----------------------------------------------------------------


@pytest.fixture
def granted(admin_api):
    """carol is a member of team-a and a reader of team-b; dave an admin of team-b."""
    a, b = create_project(admin_api, "team-a"), create_project(admin_api, "team-b")
    carol, dave = create_user(admin_api, "carol"), create_user(admin_api, "dave")
    for project, user, role in ((a, carol, "member"), (b, carol, "reader"), (b, dave, "admin")):
        assert admin_api.put(grant_path(project["id"], user["id"], role)).status_code == 204
    return {"team-a": a, "team-b": b, "carol": carol, "dave": dave}


def triples(response, granted):
    assert response.status_code == 200, response.content
    names = {granted[k]["id"]: k for k in granted}
    return sorted(
        (names.get(a["scope"]["project"]["id"]), names.get(a["user"]["id"]), identity.role_named(a["role"]["id"]))
        for a in response.json()["role_assignments"]
    )


def test_role_assignments_filter_by_project_user_and_role(admin_api, granted):
    a, b, carol = granted["team-a"], granted["team-b"], granted["carol"]
    assert triples(admin_api.get(f"{ASSIGNMENTS}?scope.project.id={b['id']}"), granted) == [
        ("team-b", "carol", "reader"),
        ("team-b", "dave", "admin"),
    ]
    assert triples(admin_api.get(f"{ASSIGNMENTS}?user.id={carol['id']}"), granted) == [
        ("team-a", "carol", "member"),
        ("team-b", "carol", "reader"),
    ]
    query = f"user.id={carol['id']}&role.id={role_id('member')}"
    assert triples(admin_api.get(f"{ASSIGNMENTS}?{query}"), granted) == [("team-a", "carol", "member")]
    response = admin_api.get(f"{ASSIGNMENTS}?scope.project.id={a['id']}")
    (only,) = response.json()["role_assignments"]
    assert only == {
        "scope": {"project": {"id": a["id"]}},
        "user": {"id": carol["id"]},
        "role": {"id": role_id("member")},
        "links": {"assignment": f"{BASE}/projects/{a['id']}/users/{carol['id']}/roles/{role_id('member')}"},
    }
    assert response.json()["links"]["self"] == f"{BASE}/role_assignments?scope.project.id={a['id']}"


def test_role_assignments_with_names(admin_api, granted):
    a, carol = granted["team-a"], granted["carol"]
    response = admin_api.get(f"{ASSIGNMENTS}?scope.project.id={a['id']}&include_names")
    (only,) = response.json()["role_assignments"]
    default = {"id": "default", "name": "Default"}
    assert only["scope"] == {"project": {"id": a["id"], "name": "team-a", "domain": default}}
    assert only["user"] == {"id": carol["id"], "name": "carol", "domain": default}
    assert only["role"] == {"id": role_id("member"), "name": "member"}


def test_effective_role_assignments_add_implied_roles(admin_api, granted):
    dave, b = granted["dave"], granted["team-b"]
    response = admin_api.get(f"{ASSIGNMENTS}?user.id={dave['id']}&effective")
    assert triples(response, granted) == [
        ("team-b", "dave", "admin"),
        ("team-b", "dave", "manager"),
        ("team-b", "dave", "member"),
        ("team-b", "dave", "reader"),
    ]
    implied = next(a for a in response.json()["role_assignments"] if a["role"]["id"] == role_id("reader"))
    assert implied["links"]["assignment"].endswith(f"/projects/{b['id']}/users/{dave['id']}/roles/{role_id('admin')}")
    assert "prior_role" in implied["links"]


@pytest.mark.parametrize(
    "query, message",
    [
        ("user.id=u&group.id=g", "Specify a user or group, not both"),
        ("scope.project.id=p&scope.domain.id=default", "Specify a domain or project, not both"),
        ("scope.project.id=p&scope.system=all", "Specify system or project, not both"),
        ("effective&group.id=g", "Combining effective and group filter will always result in an empty list."),
        ("include_subtree", "scope.project.id must be specified if include_subtree is also specified"),
    ],
)
def test_contradictory_assignment_filters_are_400(admin_api, granted, query, message):
    keystone_error(admin_api.get(f"{ASSIGNMENTS}?{query}"), 400, message)


def test_groups_domains_and_system_hold_no_assignments(admin_api, granted):
    for query in ("group.id=g", "scope.domain.id=default", "scope.system=all"):
        assert admin_api.get(f"{ASSIGNMENTS}?{query}").json()["role_assignments"] == []


def test_members_cannot_list_role_assignments(member_api, reader_api, granted):
    keystone_error(member_api.get(ASSIGNMENTS), 403, "identity:list_role_assignments")
    assert reader_api.get(ASSIGNMENTS).status_code == 200


# --- domains ---------------------------------------------------------------------------


DEFAULT_DOMAIN = {
    "id": "default",
    "name": "Default",
    "description": "The default domain",
    "enabled": True,
    "tags": [],
    "options": {},
    "links": {"self": f"{BASE}/domains/default"},
}


def test_the_one_domain_is_listed_and_found_by_name(admin_api):
    assert admin_api.get(DOMAINS).json()["domains"] == [DEFAULT_DOMAIN]
    response = admin_api.get(f"{DOMAINS}?name=Default")
    assert response.json() == {
        "domains": [DEFAULT_DOMAIN],
        "links": {"self": f"{BASE}/domains?name=Default", "previous": None, "next": None},
    }
    assert admin_api.get(f"{DOMAINS}?name=Other").json()["domains"] == []
    assert admin_api.get(f"{DOMAINS}/default").json() == {"domain": DEFAULT_DOMAIN}
    keystone_error(admin_api.get(f"{DOMAINS}/other"), 404, "Could not find domain: other.")


def test_members_read_their_domain_but_do_not_list_domains(member_api):
    assert member_api.get(f"{DOMAINS}/default").json() == {"domain": DEFAULT_DOMAIN}
    keystone_error(member_api.get(DOMAINS), 403, "identity:list_domains")
    keystone_error(member_api.get(f"{DOMAINS}/other"), 403, "identity:get_domain")


# --- a user's own password and projects --------------------------------------------------


def test_a_user_changes_its_own_password_without_a_token(admin_api, anon_api):
    project = create_project(admin_api, "team-a")
    user = create_user(admin_api, "carol")
    admin_api.put(grant_path(project["id"], user["id"], "member"))
    carol = logged_in("carol", "pw-1", "team-a")
    path = f"{USERS}/{user['id']}/password"
    wrong = anon_api.post(path, {"user": {"original_password": "nope", "password": "pw-2"}})
    keystone_error(wrong, 401, "Error when changing user password: Invalid user / password")
    assert token_works(carol)
    response = anon_api.post(path, {"user": {"original_password": "pw-1", "password": "pw-2"}})
    assert response.status_code == 204 and response.content == b""
    assert not token_works(carol)
    keystone_error(login("carol", "pw-1", "team-a"), 401)
    assert token_works(logged_in("carol", "pw-2", "team-a"))
    keystone_error(
        anon_api.post(path, {"user": {"password": "pw-3"}}), 400, "'original_password' is a required property"
    )
    keystone_error(anon_api.get(path), 405)


def test_changing_the_password_of_an_unknown_user_is_401(anon_api):
    path = f"{USERS}/{'f' * 32}/password"
    keystone_error(anon_api.post(path, {"user": {"original_password": "a", "password": "b"}}), 401)


def test_a_user_lists_its_own_projects(admin_api, token_for):
    a, b = create_project(admin_api, "team-a"), create_project(admin_api, "team-b")
    create_project(admin_api, "team-c")
    user = create_user(admin_api, "carol")
    admin_api.put(grant_path(a["id"], user["id"], "member"))
    admin_api.put(grant_path(b["id"], user["id"], "member"))
    admin_api.put(grant_path(b["id"], user["id"], "reader"))
    carol = logged_in("carol", "pw-1", "team-a")
    response = carol.get(f"{USERS}/{user['id']}/projects")
    assert response.status_code == 200, response.content
    assert [p["name"] for p in response.json()["projects"]] == ["team-a", "team-b"]
    assert [p["name"] for p in carol.get(f"{USERS}/{user['id']}/projects?name=team-b").json()["projects"]] == ["team-b"]
    admin_id = identity.user_id_of(get_user_model().objects.get(username="admin-user"))
    keystone_error(carol.get(f"{USERS}/{admin_id}/projects"), 403, "identity:list_user_projects")
    keystone_error(admin_api.get(f"{USERS}/{'f' * 32}/projects"), 404, "Could not find user")


def test_a_name_taken_by_a_concurrent_request_is_409_not_500(admin_api):
    """The name check and the insert are not one statement: when another
    request takes the name in between, the unique constraint answers."""
    create_project(admin_api, "team-a")
    create_user(admin_api, "carol")
    with mock.patch("django.db.models.query.QuerySet.exists", return_value=False):
        keystone_error(admin_api.post(PROJECTS, {"project": {"name": "team-a"}}), 409, "name team-a")
        keystone_error(admin_api.post(USERS, {"user": {"name": "carol"}}), 409, "name carol")
    assert Project.objects.filter(name="team-a").count() == 1
