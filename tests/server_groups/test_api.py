"""os-server-groups through the compute API (per microversion), and the
``group`` hint of a boot: the members, the 2.71 server_groups key, and
the policies as the scheduler keeps them, explained host by host."""

import pytest

from aggregates.scheduling.models import SchedulingDecision
from aggregates.servers.models import Server
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body


def create(api, name="g1", version="2.64", **group):
    group = group or {"policy": "anti-affinity"}
    return api.post("/os-server-groups", {"server_group": {"name": name, **group}}, version=version)


def boot(api, flavor, image, group_id, name="vm", count=1, version="2.100"):
    body = cli_body(flavor, image, name=name)
    body["server"]["min_count"] = body["server"]["max_count"] = count
    body["os:scheduler_hints"] = {"group": group_id}
    response = api.post("/servers", body, version=version)
    return response


def test_create_show_list_delete_per_microversion(admin_api, member_api):
    old = create(member_api, "old", "2.1", policies=["affinity"])
    assert old.status_code == 200, old.content
    body = old.json()["server_group"]
    assert set(body) == {"id", "name", "policies", "members", "metadata"}
    assert (body["policies"], body["members"], body["metadata"]) == (["affinity"], [], {})

    soft = create(member_api, "soft", "2.15", policies=["soft-anti-affinity"])
    assert soft.status_code == 200 and set(soft.json()["server_group"]) >= {"project_id", "user_id"}
    assert create(member_api, "soft", "2.14", policies=["soft-affinity"]).status_code == 400

    new = create(member_api, "new", "2.64", policy="anti-affinity", rules={"max_server_per_host": 2})
    assert new.status_code == 200, new.content
    group = new.json()["server_group"]
    assert set(group) == {"id", "name", "policy", "rules", "members", "project_id", "user_id"}
    assert (group["policy"], group["rules"]) == ("anti-affinity", {"max_server_per_host": 2})

    shown = member_api.get(f"/os-server-groups/{group['id']}", version="2.64").json()["server_group"]
    assert shown == group
    names = [g["name"] for g in member_api.get("/os-server-groups", version="2.64").json()["server_groups"]]
    assert names == ["old", "soft", "new"]
    assert member_api.get("/os-server-groups?limit=1&offset=1", version="2.64").json()["server_groups"][0]["name"] == (
        "soft"
    )

    assert member_api.delete(f"/os-server-groups/{group['id']}", version="2.64").status_code == 204
    missing = member_api.get(f"/os-server-groups/{group['id']}", version="2.64")
    assert missing.status_code == 404
    assert missing.json()["itemNotFound"]["message"] == f"Instance group {group['id']} could not be found."


@pytest.mark.parametrize(
    "group, message",
    [
        ({"policy": "affinity", "rules": {"max_server_per_host": 2}}, "Only anti-affinity policy supports rules."),
        ({"policy": "anti-affinity", "rules": {"max_server_per_host": 0}}, "Invalid input"),
        ({"policy": "anti-affinity", "rules": {"other": 1}}, "Invalid input"),
        ({"policy": "anti-affinity", "rules": {"max_server_per_host": 2**31}}, "Invalid input for field/attribute"),
        ({"policy": "anti-affinity", "rules": {"max_server_per_host": "0"}}, "Invalid input for field/attribute"),
        ({"policy": "spread"}, "Invalid input"),
        ({"policies": ["affinity"]}, "Invalid input"),
    ],
)
def test_bad_bodies_are_refused_and_change_nothing(member_api, group, message):
    response = create(member_api, **group)
    assert response.status_code == 400
    assert response.json()["badRequest"]["message"].startswith(message)
    assert member_api.get("/os-server-groups", version="2.64").json()["server_groups"] == []


def test_projects_see_their_own_groups_and_admins_all(admin_api, member_api, token_for):
    mine = create(member_api, "mine").json()["server_group"]
    other_api = ApiClient(token_for("member", "other-user", project_name="other"))
    theirs = create(other_api, "theirs").json()["server_group"]
    assert [g["name"] for g in member_api.get("/os-server-groups?all_projects=1").json()["server_groups"]] == ["mine"]
    assert [g["name"] for g in admin_api.get("/os-server-groups?all_projects=True").json()["server_groups"]] == [
        "mine",
        "theirs",
    ]
    assert member_api.get(f"/os-server-groups/{theirs['id']}").status_code == 403
    assert member_api.delete(f"/os-server-groups/{theirs['id']}").status_code == 403
    assert admin_api.get(f"/os-server-groups/{mine['id']}").status_code == 200
    assert member_api.get("/os-server-groups?bogus=1", version="2.75").status_code == 400


def test_anti_affinity_boots_spread_and_explain_the_refusal(cloud, member_api, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter"]
    cloud.hosts("cmp-1", "cmp-2")
    flavor, image = cloud.flavor(), cloud.image()
    group = create(member_api, "web").json()["server_group"]
    for name in ("a", "b", "c"):
        assert boot(member_api, flavor, image, group["id"], name).status_code == 202
    servers = {s.name: s for s in Server.objects.all()}
    assert {servers["a"].host, servers["b"].host} == {"cmp-1", "cmp-2"}
    assert servers["c"].vm_state == "error" and servers["c"].fault["message"].startswith("No valid host")
    assert "ServerGroupAntiAffinityFilter: 2" in servers["c"].fault["message"]
    fates = {row["host"]: row for row in servers["c"].decision.explanation["hosts"]}
    for server in (servers["a"], servers["b"]):
        assert fates[server.host]["reason"] == (
            f"host {server.host} already runs member {server.uuid} of anti-affinity group web"
        )
    assert servers["c"].decision.request["group"] == group["id"]

    shown = member_api.get(f"/os-server-groups/{group['id']}").json()["server_group"]
    assert sorted(shown["members"]) == sorted(str(s.uuid) for s in servers.values())
    body = member_api.get(f"/servers/{servers['a'].uuid}", version="2.71").json()["server"]
    assert body["server_groups"] == [group["id"]]
    assert "server_groups" not in member_api.get(f"/servers/{servers['a'].uuid}", version="2.70").json()["server"]

    # a deleted server leaves the member list, and its host is free again
    assert member_api.delete(f"/servers/{servers['a'].uuid}").status_code == 204
    shown = member_api.get(f"/os-server-groups/{group['id']}").json()["server_group"]
    assert str(servers["a"].uuid) not in shown["members"]
    assert boot(member_api, flavor, image, group["id"], "d").status_code == 202
    assert Server.objects.get(name="d").host == servers["a"].host


def test_max_server_per_host_and_one_request_of_several(cloud, member_api, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "ServerGroupAntiAffinityFilter"]
    cloud.hosts("h1", "h2")
    flavor, image = cloud.flavor(), cloud.image()
    group = create(member_api, "pairs", policy="anti-affinity", rules={"max_server_per_host": 2})
    group = group.json()["server_group"]
    assert boot(member_api, flavor, image, group["id"], count=4).status_code == 202
    hosts = sorted(Server.objects.values_list("host", flat=True))
    assert hosts == ["h1", "h1", "h2", "h2"]
    assert boot(member_api, flavor, image, group["id"], "extra").status_code == 202
    extra = Server.objects.get(name="extra")
    assert extra.vm_state == "error"
    reasons = {row["reason"] for row in extra.decision.explanation["hosts"]}
    assert any("already runs 2 members of anti-affinity group pairs" in r for r in reasons), reasons


def test_affinity_keeps_members_together(cloud, member_api, settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "ServerGroupAffinityFilter"]
    cloud.hosts("h1", "h2", "h3")
    flavor, image = cloud.flavor(), cloud.image()
    group = create(member_api, "db", policy="affinity").json()["server_group"]
    assert boot(member_api, flavor, image, group["id"], count=3).status_code == 202
    assert boot(member_api, flavor, image, group["id"], "later").status_code == 202
    assert len(set(Server.objects.values_list("host", flat=True))) == 1
    assert set(Server.objects.values_list("vm_state", flat=True)) == {"active"}


@pytest.mark.parametrize("policy, together", [("soft-affinity", True), ("soft-anti-affinity", False)])
def test_soft_policies_weigh(cloud, member_api, settings, policy, together):
    settings.ENABLED_FILTERS = ["ComputeFilter"]
    settings.SOFT_AFFINITY_WEIGHT_MULTIPLIER = settings.SOFT_ANTI_AFFINITY_WEIGHT_MULTIPLIER = 100.0
    cloud.hosts("h1", "h2", "h3")
    flavor, image = cloud.flavor(), cloud.image()
    group = create(member_api, "soft", policy=policy).json()["server_group"]
    for name in ("a", "b", "c"):
        assert boot(member_api, flavor, image, group["id"], name).status_code == 202
    hosts = set(Server.objects.values_list("host", flat=True))
    assert len(hosts) == (1 if together else 3)
    weigher = "ServerGroupSoftAffinityWeigher" if together else "ServerGroupSoftAntiAffinityWeigher"
    last = Server.objects.get(name="c").decision
    assert last.outcome == SchedulingDecision.CHOSEN
    assert all(weigher in row["weights"] for row in last.explanation["hosts"] if row["result"] != "rejected")


def test_the_group_hint_must_name_a_group_of_the_project(cloud, member_api, token_for):
    cloud.hosts("h1")
    flavor, image = cloud.flavor(), cloud.image()
    other_api = ApiClient(token_for("member", "other-user", project_name="other"))
    theirs = create(other_api, "theirs").json()["server_group"]
    for group_id in (theirs["id"], "9b4f2c1e-0000-4000-8000-000000000000"):
        response = boot(member_api, flavor, image, group_id)
        assert response.status_code == 400
        assert response.json()["badRequest"]["message"] == f"Instance group {group_id} could not be found."
    assert boot(member_api, flavor, image, "not-a-uuid").status_code == 400
    assert not Server.objects.exists()


def test_groups_and_members_stop_at_their_quotas(cloud, admin_api, member_api):
    project = member_api.get("/limits").json()  # the member's own project, by its token
    assert project["limits"]["absolute"]["totalServerGroupsUsed"] == 0
    first = create(member_api, "first").json()["server_group"]
    admin_api.put(
        f"/os-quota-sets/{first['project_id']}",
        {"quota_set": {"server_groups": 1, "server_group_members": 2}},
    )
    refused = create(member_api, "second")
    assert refused.status_code == 403, refused.content
    assert refused.json()["forbidden"]["message"] == "Quota exceeded, too many server groups."
    assert [g["name"] for g in member_api.get("/os-server-groups").json()["server_groups"]] == ["first"]
    assert member_api.get("/limits").json()["limits"]["absolute"]["totalServerGroupsUsed"] == 1

    for name in ("h1", "h2", "h3"):
        cloud.host(name)
    flavor, image = cloud.flavor(), cloud.image()
    assert boot(member_api, flavor, image, first["id"], count=2).status_code == 202
    over = boot(member_api, flavor, image, first["id"], name="third")
    assert over.status_code == 403, over.content
    assert over.json()["forbidden"]["message"] == "Quota exceeded, too many servers in group"
    assert Server.objects.count() == 2
