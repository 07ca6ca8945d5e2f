"""The Keystone v3 compatible identity API at /identity."""

import hashlib
import json
import re
from datetime import datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from aggregates.audit.models import Event
from aggregates.identity import services as identity
from aggregates.identity.models import Project, Token
from tests.plugins.api import ApiClient, make_user

TOKENS = "/identity/v3/auth/tokens"
PROJECTS = "/identity/v3/projects"
KEYSTONE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000Z$")
HEX32 = re.compile(r"^[0-9a-f]{32}$")
DEFAULT_BY_NAME = {"name": "Default"}


def password_auth(username, password, project="demo", user_domain=DEFAULT_BY_NAME, project_domain=DEFAULT_BY_NAME):
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": username, "domain": user_domain, "password": password}},
            }
        }
    }
    if project is not None:
        body["auth"]["scope"] = {"project": {"name": project, "domain": project_domain}}
    return body


def token_auth(token, project="demo"):
    body = {"auth": {"identity": {"methods": ["token"], "token": {"id": token}}}}
    if project is not None:
        body["auth"]["scope"] = {"project": {"name": project, "domain": DEFAULT_BY_NAME}}
    return body


def assert_keystone_error(response, status, title, message=None):
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == status
    assert error["title"] == title
    assert set(response.json()) == {"error"}
    if message is not None:
        assert message in error["message"]
    return error["message"]


def login(body, api=None):
    return (api or ApiClient()).post(TOKENS, body)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The default hasher takes a good part of a second per password.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice(db):
    """An admin of project "demo" whose password is "alice-pw"."""
    user, _ = make_user("alice", "admin")
    return user


@pytest.fixture
def bob(db):
    """A member of project "demo" whose password is "bob-pw"."""
    user, _ = make_user("bob", "member")
    return user


def issued(username, project="demo"):
    response = login(password_auth(username, f"{username}-pw", project))
    assert response.status_code == 201, response.content
    return response.headers["X-Subject-Token"]


# --- version documents ---------------------------------------------------------


@pytest.mark.parametrize("path", ["/identity", "/identity/"])
def test_version_list_is_300_with_v3(anon_api, path):
    response = anon_api.get(path)
    assert response.status_code == 300
    (version,) = response.json()["versions"]["values"]
    assert version["id"] == "v3.14"
    assert version["status"] == "stable"
    assert version["links"] == [{"rel": "self", "href": "http://testserver/identity/v3/"}]
    assert version["media-types"] == [
        {"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}
    ]


@pytest.mark.parametrize("path", ["/identity/v3", "/identity/v3/"])
def test_v3_version_document(anon_api, path):
    response = anon_api.get(path)
    assert response.status_code == 200
    version = response.json()["version"]
    assert version["id"] == "v3.14"
    assert version["status"] == "stable"
    assert {"rel": "self", "href": "http://testserver/identity/v3/"} in version["links"]


def test_version_documents_ignore_a_stale_token(db):
    api = ApiClient("not-a-token")
    assert api.get("/identity").status_code == 300
    assert api.get("/identity/v3").status_code == 200


def test_version_links_use_public_url(anon_api, settings):
    settings.PUBLIC_URL = "https://cloud.example.test:8443"
    response = anon_api.get("/identity/v3")
    assert response.json()["version"]["links"][0]["href"] == "https://cloud.example.test:8443/identity/v3/"


def test_version_document_refuses_other_methods(anon_api):
    assert_keystone_error(anon_api.post("/identity/v3", {}), 405, "Method Not Allowed")


@pytest.mark.parametrize("path", ["/identity/v3/groups", "/identity/v2.0", "/identity/v3/auth/tokens/extra"])
def test_unknown_identity_paths_are_keystone_404(anon_api, path):
    assert_keystone_error(anon_api.get(path), 404, "Not Found", "The resource could not be found.")


# --- POST /v3/auth/tokens: success -------------------------------------------------


def test_password_login_scoped_by_names(alice):
    response = login(password_auth("alice", "alice-pw"))
    assert response.status_code == 201
    token = response.headers["X-Subject-Token"]
    body = response.json()["token"]
    project = Project.objects.get(name="demo")
    assert body["methods"] == ["password"]
    assert body["user"]["name"] == "alice"
    assert HEX32.match(body["user"]["id"])
    assert body["user"]["domain"] == {"id": "default", "name": "Default"}
    assert body["project"] == {"id": project.id, "name": "demo", "domain": {"id": "default", "name": "Default"}}
    assert sorted(role["name"] for role in body["roles"]) == ["admin", "manager", "member", "reader"]
    assert all(HEX32.match(role["id"]) for role in body["roles"])
    assert KEYSTONE_TIME.match(body["issued_at"]) and KEYSTONE_TIME.match(body["expires_at"])
    # The token works on the compute API.
    assert ApiClient(token).get("/os-aggregates").status_code == 200


def test_token_is_stored_hashed(alice):
    token = issued("alice")
    assert Token.objects.filter(token_hash=hashlib.sha256(token.encode()).hexdigest()).count() == 1
    assert not Token.objects.filter(token_hash=token).exists()


def test_token_lifetime_comes_from_settings(alice, settings):
    settings.TOKEN_EXPIRATION = 120
    body = login(password_auth("alice", "alice-pw")).json()["token"]
    issued_at = datetime.strptime(body["issued_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
    expires_at = datetime.strptime(body["expires_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert expires_at - issued_at == timedelta(seconds=120)


def test_catalog_lists_identity_compute_placement_and_image(alice, settings):
    settings.REGION_NAME = "RegionTwo"
    catalog = login(password_auth("alice", "alice-pw")).json()["token"]["catalog"]
    urls = {}
    for service in catalog:
        assert HEX32.match(service["id"])
        assert sorted(e["interface"] for e in service["endpoints"]) == ["admin", "internal", "public"]
        for endpoint in service["endpoints"]:
            assert endpoint["region"] == endpoint["region_id"] == "RegionTwo"
            assert HEX32.match(endpoint["id"])
        urls[service["type"]] = {e["url"] for e in service["endpoints"]}
    assert urls == {
        "identity": {"http://testserver/identity"},
        "compute": {"http://testserver/compute/v2.1"},
        "placement": {"http://testserver/placement"},
        "image": {"http://testserver/image"},
    }


def test_catalog_uses_public_url(alice, settings):
    settings.PUBLIC_URL = "https://cloud.example.test"
    catalog = login(password_auth("alice", "alice-pw")).json()["token"]["catalog"]
    compute = next(s for s in catalog if s["type"] == "compute")
    assert {e["url"] for e in compute["endpoints"]} == {"https://cloud.example.test/compute/v2.1"}


def test_ids_are_stable_across_logins(alice):
    first = login(password_auth("alice", "alice-pw")).json()["token"]
    second = login(password_auth("alice", "alice-pw")).json()["token"]
    assert first["user"]["id"] == second["user"]["id"]
    assert first["roles"] == second["roles"]
    assert [s["id"] for s in first["catalog"]] == [s["id"] for s in second["catalog"]]
    assert [[e["id"] for e in s["endpoints"]] for s in first["catalog"]] == [
        [e["id"] for e in s["endpoints"]] for s in second["catalog"]
    ]


def test_user_id_survives_a_rename(alice):
    before = login(password_auth("alice", "alice-pw")).json()["token"]["user"]["id"]
    alice.username = "alice2"
    alice.save()
    after = login(password_auth("alice2", "alice-pw")).json()["token"]["user"]["id"]
    assert before == after


def test_member_token_lists_member_role_only(bob):
    roles = login(password_auth("bob", "bob-pw")).json()["token"]["roles"]
    assert [role["name"] for role in roles] == ["member"]


def test_login_by_ids(alice):
    user_id = identity.user_id_of(alice)
    project_id = Project.objects.get(name="demo").id
    body = {
        "auth": {
            "identity": {"methods": ["password"], "password": {"user": {"id": user_id, "password": "alice-pw"}}},
            "scope": {"project": {"id": project_id}},
        }
    }
    response = login(body)
    assert response.status_code == 201
    assert response.json()["token"]["user"]["id"] == user_id
    assert response.json()["token"]["project"]["id"] == project_id


def test_login_with_domain_ids(alice):
    response = login(
        password_auth("alice", "alice-pw", user_domain={"id": "default"}, project_domain={"id": "default"})
    )
    assert response.status_code == 201


@pytest.mark.parametrize("scope", [None, "unscoped", {"unscoped": {}}])
def test_unscoped_token_has_no_project_roles_or_catalog(alice, scope):
    body = password_auth("alice", "alice-pw", project=None)
    if scope is not None:
        body["auth"]["scope"] = scope
    response = login(body)
    assert response.status_code == 201
    token = response.json()["token"]
    assert token["user"]["name"] == "alice"
    assert not {"project", "roles", "catalog"} & set(token)
    # It identifies the user but grants no role.
    assert_compute_forbidden(ApiClient(response.headers["X-Subject-Token"]).get("/os-aggregates"))


def assert_compute_forbidden(response):
    assert response.status_code == 403
    assert "forbidden" in response.json()


def test_token_method_rescopes_an_unscoped_token(alice):
    unscoped = login(password_auth("alice", "alice-pw", project=None))
    response = login(token_auth(unscoped.headers["X-Subject-Token"]))
    assert response.status_code == 201
    body = response.json()["token"]
    assert body["methods"] == ["token"]
    assert body["project"]["name"] == "demo"
    assert body["expires_at"] <= unscoped.json()["token"]["expires_at"]
    assert ApiClient(response.headers["X-Subject-Token"]).get("/os-aggregates").status_code == 200


def test_rescoped_token_expires_with_its_parent(alice):
    parent = issued("alice")
    Token.objects.filter(token_hash=identity.hash_token(parent)).update(
        expires_at=timezone.now() + timedelta(seconds=30)
    )
    child = login(token_auth(parent)).headers["X-Subject-Token"]
    row = Token.objects.get(token_hash=identity.hash_token(child))
    assert row.expires_at <= timezone.now() + timedelta(seconds=30)


# --- POST /v3/auth/tokens: refused (401) -------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        password_auth("alice", "wrong-pw"),
        password_auth("nobody", "alice-pw"),
        password_auth("alice", "alice-pw", user_domain={"name": "Other"}),
        password_auth("alice", "alice-pw", user_domain={"id": "other"}),
        {
            "auth": {
                "identity": {"methods": ["password"], "password": {"user": {"id": "0" * 32, "password": "alice-pw"}}}
            }
        },
    ],
    ids=["wrong-password", "unknown-user", "unknown-domain-name", "unknown-domain-id", "unknown-user-id"],
)
def test_bad_credentials_are_401_with_a_generic_message(alice, body):
    response = login(body)
    message = assert_keystone_error(response, 401, "Unauthorized")
    assert message == "The request you have made requires authentication."
    assert response.headers["WWW-Authenticate"] == 'Keystone uri="http://testserver/identity"'
    assert "X-Subject-Token" not in response.headers
    assert not Token.objects.exists()


def test_disabled_user_cannot_log_in(alice):
    alice.is_active = False
    alice.save()
    message = assert_keystone_error(login(password_auth("alice", "alice-pw")), 401, "Unauthorized")
    assert message == "The request you have made requires authentication."


@pytest.mark.parametrize("case", ["unknown", "disabled", "no-role", "other-domain"])
def test_refused_project_scope_is_401(alice, case):
    other_user, other = make_user("carol", "member", project_name="other")
    project = "demo"
    project_domain = DEFAULT_BY_NAME
    if case == "unknown":
        project = "nope"
    elif case == "disabled":
        Project.objects.filter(name="demo").update(enabled=False)
    elif case == "no-role":
        project = "other"
    else:
        project_domain = {"name": "Other"}
    response = login(password_auth("alice", "alice-pw", project=project, project_domain=project_domain))
    assert_keystone_error(response, 401, "Unauthorized", f"User alice has no access to project {project}")
    assert not Token.objects.exists()


def test_unsupported_method_is_401(alice):
    body = {"auth": {"identity": {"methods": ["totp"], "totp": {"user": {"name": "alice"}}}}}
    assert_keystone_error(login(body), 401, "Unauthorized", "unsupported method")


@pytest.mark.parametrize(
    "scope", [{"domain": {"name": "Default"}}, {"system": {"all": True}}, {"OS-TRUST:trust": {"id": "x"}}]
)
def test_domain_system_and_trust_scopes_are_refused(alice, scope):
    body = password_auth("alice", "alice-pw", project=None)
    body["auth"]["scope"] = scope
    assert_keystone_error(login(body), 401, "Unauthorized", "project-scoped and unscoped tokens only")


def test_token_method_with_an_invalid_token_is_401(alice):
    assert_keystone_error(login(token_auth("not-a-token")), 401, "Unauthorized")


def test_password_and_token_of_different_users_are_401(alice, bob):
    body = password_auth("alice", "alice-pw")
    body["auth"]["identity"]["methods"] = ["password", "token"]
    body["auth"]["identity"]["token"] = {"id": issued("bob")}
    assert_keystone_error(login(body), 401, "Unauthorized")


def test_refused_logins_are_audited_without_the_password(alice):
    login(password_auth("alice", "very-secret-guess"))
    event = Event.objects.get(event_type="identity.authenticate")
    assert event.priority == Event.ERROR
    assert event.username == "alice"
    assert event.payload["outcome"] == "failure"
    assert "very-secret-guess" not in json.dumps(event.payload)


# --- POST /v3/auth/tokens: bad input (400) -----------------------------------------


def _body(**identity_overrides):
    body = password_auth("alice", "alice-pw")
    body["auth"]["identity"].update(identity_overrides)
    return body


def _user(**changes):
    body = password_auth("alice", "alice-pw")
    user = body["auth"]["identity"]["password"]["user"]
    for key, value in changes.items():
        if value is None:
            user.pop(key)
        else:
            user[key] = value
    return body


def _scope(scope):
    body = password_auth("alice", "alice-pw")
    body["auth"]["scope"] = scope
    return body


BAD_BODIES = {
    "list-body": ([], "Invalid input for the request body: must be of type object"),
    "no-auth": ({}, "'auth' is a required property"),
    "extra-top-level": ({**password_auth("alice", "alice-pw"), "x": 1}, "Additional properties"),
    "no-identity": ({"auth": {}}, "'identity' is a required property"),
    "extra-in-auth": ({"auth": {**password_auth("alice", "alice-pw")["auth"], "x": 1}}, "Additional properties"),
    "no-methods": ({"auth": {"identity": {"password": {}}}}, "'methods' is a required property"),
    "empty-methods": (_body(methods=[]), "field 'auth/identity/methods': must not be empty"),
    "methods-not-list": (_body(methods="password"), "field 'auth/identity/methods': must be of type array"),
    "method-not-string": (_body(methods=[1]), "field 'auth/identity/methods/0': must be of type string"),
    "password-payload-missing": (
        {"auth": {"identity": {"methods": ["password"]}}},
        "Expecting to find password in identity",
    ),
    "token-payload-missing": ({"auth": {"identity": {"methods": ["token"]}}}, "Expecting to find token in identity"),
    "token-without-id": (_body(methods=["token"], token={}), "'id' is a required property"),
    "password-without-user": (_body(password={}), "'user' is a required property"),
    "user-without-id-or-name": (_user(name=None), "field 'auth/identity/password/user': id or name must be present"),
    "name-without-domain": (_user(domain=None), "'domain' is a dependency of 'name'"),
    "domain-without-id-or-name": (_user(domain={}), "id or name must be present"),
    "no-password": (_user(password=None), "'password' is a required property"),
    "password-not-string": (_user(password=12345), "password': must be of type string"),
    "name-not-string": (_user(name=["alice"]), "name': must be of type string"),
    "empty-name": (_user(name=""), "name': must not be empty"),
    "oversized-name": (_user(name="a" * 256), "name': must be at most 255 characters long"),
    "oversized-password": (_user(password="p" * 4097), "password': must be at most 4096 characters long"),
    "unknown-user-field": (_user(email="a@example.test"), "Additional properties are not allowed ('email'"),
    "unknown-domain-field": (_user(domain={"name": "Default", "x": 1}), "Additional properties"),
    "scope-bad-string": (_scope("everything"), "a string scope must be 'unscoped'"),
    "scope-not-object": (_scope(5), "field 'auth/scope': must be of type object or string"),
    "scope-unknown-key": (_scope({"cluster": {}}), "Additional properties"),
    "two-scopes": (_scope({"project": {"id": "x"}, "domain": {"id": "default"}}), "only one scope"),
    "project-without-id-or-name": (
        _scope({"project": {"domain": {"name": "Default"}}}),
        "field 'auth/scope/project': id or name must be present",
    ),
    "project-name-without-domain": (_scope({"project": {"name": "demo"}}), "'domain' is a dependency of 'name'"),
    "oversized-project-id": (_scope({"project": {"id": "x" * 65}}), "must be at most 64 characters long"),
}


@pytest.mark.parametrize("case", sorted(BAD_BODIES))
def test_malformed_login_is_400_in_keystone_format(alice, case):
    body, message = BAD_BODIES[case]
    response = login(body)
    error = assert_keystone_error(response, 400, "Bad Request", message)
    assert "alice-pw" not in error and "12345" not in error
    assert not Token.objects.exists()


def test_invalid_json_is_400(alice):
    response = ApiClient().post(TOKENS, raw="{not json")
    assert_keystone_error(response, 400, "Bad Request", "Expecting to find valid JSON in request body")


def test_non_json_content_type_is_400(alice):
    response = ApiClient().client.post(TOKENS, data="auth=1", content_type="application/x-www-form-urlencoded")
    assert_keystone_error(response, 400, "Bad Request", "application/json in Content-Type header")


def test_put_on_tokens_is_405(alice):
    assert_keystone_error(ApiClient().put(TOKENS, {}), 405, "Method Not Allowed")


# --- GET / HEAD / DELETE /v3/auth/tokens --------------------------------------------


def subject(token):
    return {"X-Subject-Token": token}


def test_user_validates_own_token(bob):
    token = issued("bob")
    response = ApiClient(token).get(TOKENS, headers=subject(token))
    assert response.status_code == 200
    assert response.headers["X-Subject-Token"] == token
    body = response.json()["token"]
    assert body["user"]["name"] == "bob"
    assert body["project"]["name"] == "demo"
    assert [s["type"] for s in body["catalog"]] == ["identity", "compute", "placement", "image"]


def test_head_validates_without_a_body(bob):
    token = issued("bob")
    response = ApiClient(token).request("head", TOKENS, headers=subject(token))
    assert response.status_code == 200
    assert response.content == b""


@pytest.mark.parametrize("role", ["admin", "reader"])
def test_admin_and_reader_validate_other_tokens(token_for, bob, role):
    response = ApiClient(token_for(role)).get(TOKENS, headers=subject(issued("bob")))
    assert response.status_code == 200
    assert response.json()["token"]["user"]["name"] == "bob"


def test_member_cannot_validate_another_users_token(member_api, alice):
    response = member_api.get(TOKENS, headers=subject(issued("alice")))
    assert_keystone_error(response, 403, "Forbidden", "identity:validate_token")


@pytest.mark.parametrize("headers", [{}, subject("not-a-token")], ids=["missing", "unknown"])
def test_validating_an_invalid_subject_token_is_404(admin_api, headers):
    assert_keystone_error(admin_api.get(TOKENS, headers=headers), 404, "Not Found", "Could not find token")


def test_expired_subject_token_is_404(admin_api, bob):
    token = issued("bob")
    Token.objects.filter(token_hash=identity.hash_token(token)).update(expires_at=timezone.now() - timedelta(1))
    assert_keystone_error(admin_api.get(TOKENS, headers=subject(token)), 404, "Not Found")


def test_validating_needs_a_token(anon_api, bob):
    response = anon_api.get(TOKENS, headers=subject(issued("bob")))
    assert_keystone_error(response, 401, "Unauthorized")
    assert response.headers["WWW-Authenticate"].startswith("Keystone uri=")


def test_user_revokes_own_token(bob):
    token = issued("bob")
    api = ApiClient(token)
    assert api.get("/os-availability-zone").status_code == 200
    response = api.delete(TOKENS, headers=subject(token))
    assert response.status_code == 204
    assert api.get("/os-availability-zone").status_code == 401
    assert not Token.objects.filter(token_hash=identity.hash_token(token)).exists()


def test_admin_revokes_another_users_token(admin_api, bob):
    token = issued("bob")
    assert admin_api.delete(TOKENS, headers=subject(token)).status_code == 204
    assert_keystone_error(admin_api.get(TOKENS, headers=subject(token)), 404, "Not Found")


def test_reader_cannot_revoke_another_users_token(reader_api, bob):
    token = issued("bob")
    response = reader_api.delete(TOKENS, headers=subject(token))
    assert_keystone_error(response, 403, "Forbidden", "identity:revoke_token")
    assert ApiClient(token).get("/os-availability-zone").status_code == 200


def test_revoking_an_unknown_token_is_404(admin_api):
    assert_keystone_error(admin_api.delete(TOKENS, headers=subject("nope")), 404, "Not Found")


def test_revoking_needs_a_token(anon_api, bob):
    assert_keystone_error(anon_api.delete(TOKENS, headers=subject(issued("bob"))), 401, "Unauthorized")


# --- token checks on the compute API -----------------------------------------------


def test_expired_token_is_refused_by_the_compute_api(alice):
    token = issued("alice")
    api = ApiClient(token)
    assert api.get("/os-aggregates").status_code == 200
    Token.objects.filter(token_hash=identity.hash_token(token)).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = api.get("/os-aggregates")
    assert response.status_code == 401
    assert response.json()["unauthorized"]["code"] == 401


def test_disabling_user_or_project_ends_its_tokens(alice):
    user_token, project_token = issued("alice"), issued("alice")
    get_user_model().objects.filter(pk=alice.pk).update(is_active=False)
    assert ApiClient(user_token).get("/os-aggregates").status_code == 401
    get_user_model().objects.filter(pk=alice.pk).update(is_active=True)
    Project.objects.filter(name="demo").update(enabled=False)
    assert ApiClient(project_token).get("/os-aggregates").status_code == 401


def test_unknown_token_is_refused_by_the_compute_api(db):
    assert ApiClient("made-up").get("/os-aggregates").status_code == 401


# --- /v3/projects -------------------------------------------------------------------


@pytest.fixture
def projects(db):
    identity.ensure_project("demo", description="the demo project")
    identity.ensure_project("ops")
    off = identity.ensure_project("retired")
    off.enabled = False
    off.save()
    return {p.name: p for p in Project.objects.all()}


@pytest.mark.parametrize("role", ["admin", "reader"])
def test_admin_and_reader_list_projects(token_for, projects, role):
    response = ApiClient(token_for(role)).get(PROJECTS)
    assert response.status_code == 200
    listed = {p["name"]: p for p in response.json()["projects"]}
    assert set(listed) == {"demo", "ops", "retired"}
    demo = projects["demo"]
    assert listed["demo"] == {
        "id": demo.id,
        "name": "demo",
        "domain_id": "default",
        "description": "the demo project",
        "enabled": True,
        "is_domain": False,
        "parent_id": "default",
        "tags": [],
        "options": {},
        "links": {"self": f"http://testserver/identity/v3/projects/{demo.id}"},
    }
    assert listed["retired"]["enabled"] is False
    assert response.json()["links"] == {
        "self": "http://testserver/identity/v3/projects",
        "previous": None,
        "next": None,
    }


def test_list_projects_filters_by_name(admin_api, projects):
    response = admin_api.get(PROJECTS + "?name=ops")
    assert [p["name"] for p in response.json()["projects"]] == ["ops"]
    assert response.json()["links"]["self"] == "http://testserver/identity/v3/projects?name=ops"
    assert admin_api.get(PROJECTS + "?name=none").json()["projects"] == []


@pytest.mark.parametrize(
    "value,names",
    [
        ("true", ["demo", "ops"]),
        ("True", ["demo", "ops"]),
        ("1", ["demo", "ops"]),
        ("false", ["retired"]),
        ("0", ["retired"]),
    ],
)
def test_list_projects_filters_by_enabled(admin_api, projects, value, names):
    response = admin_api.get(PROJECTS + f"?enabled={value}")
    assert sorted(p["name"] for p in response.json()["projects"]) == names


def test_list_projects_rejects_a_bad_enabled_filter(admin_api, projects):
    assert_keystone_error(admin_api.get(PROJECTS + "?enabled=maybe"), 400, "Bad Request", "enabled")


def test_member_cannot_list_projects(member_api):
    assert_keystone_error(
        member_api.get(PROJECTS),
        403,
        "Forbidden",
        "You are not authorized to perform the requested action: identity:list_projects.",
    )


def test_listing_projects_needs_a_token(anon_api):
    assert_keystone_error(anon_api.get(PROJECTS), 401, "Unauthorized")


def test_listing_projects_with_an_expired_token_is_401(alice):
    token = issued("alice")
    Token.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert_keystone_error(ApiClient(token).get(PROJECTS), 401, "Unauthorized")


def test_admin_shows_a_project(admin_api, projects):
    response = admin_api.get(f"{PROJECTS}/{projects['ops'].id}")
    assert response.status_code == 200
    assert response.json()["project"]["name"] == "ops"


def test_member_shows_own_project_only(member_api, projects):
    assert member_api.get(f"{PROJECTS}/{projects['demo'].id}").json()["project"]["name"] == "demo"
    assert_keystone_error(member_api.get(f"{PROJECTS}/{projects['ops'].id}"), 403, "Forbidden", "identity:get_project")


def test_unknown_project_is_404(reader_api):
    assert_keystone_error(
        reader_api.get(f"{PROJECTS}/{'f' * 32}"), 404, "Not Found", f"Could not find project: {'f' * 32}."
    )


def test_showing_a_project_needs_a_token(anon_api, projects):
    assert_keystone_error(anon_api.get(f"{PROJECTS}/{projects['demo'].id}"), 401, "Unauthorized")
