"""End to end: an admin manages projects, users and roles with the stock
``openstack`` CLI, and the new user logs in with it."""

from aggregates.identity import services as identity
from aggregates.identity.models import Project
from tests.plugins.openstack_cli import run_json, run_quiet


def test_project_user_role_lifecycle(openstack):
    project = run_json(openstack, "project", "create", "--description", "Team A", "team-a")
    assert (project["name"], project["description"], project["enabled"]) == ("team-a", "Team A", True)
    assert project["id"] == Project.objects.get(name="team-a").id
    assert "team-a" in [row["Name"] for row in run_json(openstack, "project", "list")]
    run_quiet(openstack, "project", "set", "--description", "The A team", "team-a")
    assert run_json(openstack, "project", "show", "team-a")["description"] == "The A team"

    user = run_json(
        openstack,
        "user",
        "create",
        "--project",
        "team-a",
        "--password",
        "carol-pw",
        "--email",
        "c@example.test",
        "carol",
    )
    assert (user["name"], user["default_project_id"], user["email"]) == ("carol", project["id"], "c@example.test")
    assert run_json(openstack, "user", "show", "carol")["id"] == user["id"]
    assert "carol" in [row["Name"] for row in run_json(openstack, "user", "list")]

    run_quiet(openstack, "role", "add", "--project", "team-a", "--user", "carol", "member")
    assignments = run_json(openstack, "role", "assignment", "list", "--project", "team-a")
    member_id = identity.role_id_of("member")
    assert [(row["Role"], row["User"], row["Project"]) for row in assignments] == [
        (member_id, user["id"], project["id"])
    ]
    named = run_json(openstack, "role", "assignment", "list", "--project", "team-a", "--names")
    assert [(row["Role"], row["User"], row["Project"]) for row in named] == [
        ("member", "carol@Default", "team-a@Default")
    ]

    as_carol = ("--os-username", "carol", "--os-password", "carol-pw", "--os-project-name", "team-a")
    token = run_json(openstack, *as_carol, "token", "issue")
    assert (token["user_id"], token["project_id"]) == (user["id"], project["id"])

    assert [row["Name"] for row in run_json(openstack, "project", "list", "--user", "carol")] == ["team-a"]
    assert [row["Name"] for row in run_json(openstack, "user", "list", "--project", "team-a")] == ["carol"]

    # carol changes her own password; then an admin resets it.
    run_quiet(openstack, *as_carol, "user", "password", "set", "--original-password", "carol-pw", "--password", "pw-2")
    as_carol = ("--os-username", "carol", "--os-password", "pw-2", "--os-project-name", "team-a")
    assert run_json(openstack, *as_carol, "token", "issue")["user_id"] == user["id"]
    run_quiet(openstack, "user", "set", "--password", "pw-3", "carol")
    returncode, _, stderr = openstack(*as_carol, "token", "issue")
    assert returncode != 0 and "HTTP 401" in stderr

    run_quiet(openstack, "role", "remove", "--project", "team-a", "--user", "carol", "member")
    assert run_json(openstack, "role", "assignment", "list", "--project", "team-a") == []
    run_quiet(openstack, "user", "delete", "carol")
    run_quiet(openstack, "project", "delete", "team-a")
    assert not Project.objects.filter(name="team-a").exists()
    assert "carol" not in [row["Name"] for row in run_json(openstack, "user", "list")]
