"""Moves keep a server's group: a migration or evacuation of a member
never lands beside another member of its anti-affinity group, and a
drain's dry run plans the members one after another and says when it
cannot keep the group's policy."""

import pytest

from aggregates.hosts.models import Service
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

V = "2.100"


@pytest.fixture(autouse=True)
def group_filters(settings):
    settings.ENABLED_FILTERS = ["ComputeFilter", "ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter"]
    settings.MAINTENANCE_CONCURRENCY = 2


def group(api, policy="anti-affinity", name="web"):
    response = api.post("/os-server-groups", {"server_group": {"name": name, "policy": policy}}, version="2.64")
    assert response.status_code == 200, response.content
    return response.json()["server_group"]["id"]


def boot(api, flavor, image, group_id, name, zone=None):
    body = cli_body(flavor, image, name=name, zone=zone)
    body["os:scheduler_hints"] = {"group": group_id}
    response = api.post("/servers", body, version=V)
    assert response.status_code == 202, response.content
    server = Server.objects.get(uuid=response.json()["server"]["id"])
    assert server.vm_state == "active", server.fault
    return server


def test_migration_and_evacuation_keep_anti_affinity(cloud, admin_api):
    cloud.hosts("h1", "h2", "h3")
    flavor, image = cloud.flavor(), cloud.image()
    web = group(admin_api)
    a, b = boot(admin_api, flavor, image, web, "a"), boot(admin_api, flavor, image, web, "b")
    (free,) = {"h1", "h2", "h3"} - {a.host, b.host}

    response = admin_api.post(f"/servers/{a.uuid}/action", {"migrate": None}, version=V)
    assert response.status_code == 202, response.content
    a.refresh_from_db()
    assert a.host == free  # never b's host, though it has the same room
    assert admin_api.post(f"/servers/{a.uuid}/action", {"confirmResize": None}, version=V).status_code == 204

    # a's host goes down: the only host without a member is the one a left
    Service.objects.filter(host=a.host, binary=Service.COMPUTE).update(forced_down=True)
    old = a.host
    response = admin_api.post(f"/servers/{a.uuid}/action", {"evacuate": {}}, version="2.94")
    assert response.status_code == 200, response.content
    a.refresh_from_db()
    assert a.host not in {old, b.host}
    assert a.decision.explanation["rejected_by"]["ServerGroupAntiAffinityFilter"] == 1


def test_a_drain_plans_members_apart_or_says_it_cannot(cloud, admin_api):
    cloud.host("A")
    cloud.host("B", memory_mb=65536)
    cloud.host("C", memory_mb=8192)  # less free RAM: B is preferred for every server
    flavor, image = cloud.flavor(), cloud.image()
    web = group(admin_api)
    Service.objects.filter(host__in=["B", "C"], binary=Service.COMPUTE).update(disabled=True)
    m1 = boot(admin_api, flavor, image, web, "m1")
    Service.objects.filter(host__in=["B", "C"], binary=Service.COMPUTE).update(disabled=False)
    Service.objects.filter(host__in=["A", "C"], binary=Service.COMPUTE).update(disabled=True)
    m2 = boot(admin_api, flavor, image, web, "m2")
    Service.objects.filter(host__in=["A", "C"], binary=Service.COMPUTE).update(disabled=False)
    assert (m1.host, m2.host) == ("A", "B")
    Server.objects.filter(pk=m2.pk).update(host="A")  # both on A now (as after a forced move)

    def plan():
        response = admin_api.post("/os-hosts/A/maintenance", {"maintenance": {"action": "start", "dry_run": True}})
        assert response.status_code == 200, response.content
        return {s["name"]: s for s in response.json()["plan"]["servers"]}

    planned = plan()
    assert {planned["m1"]["target"], planned["m2"]["target"]} == {"B", "C"}

    Service.objects.filter(host="C", binary=Service.COMPUTE).update(disabled=True)
    planned = plan()
    targets = [planned["m1"]["target"], planned["m2"]["target"]]
    assert targets.count("B") == 1 and targets.count(None) == 1
    stuck = planned["m1"] if planned["m1"]["target"] is None else planned["m2"]
    assert stuck["status"] == "would_stay"
    assert "cannot keep the anti-affinity policy of server group web" in stuck["explanation"]
    assert "already runs member" in stuck["explanation"]


def test_a_drain_of_an_affinity_group_says_it_cannot_keep_it(cloud, admin_api):
    cloud.hosts("A", "B")
    flavor, image = cloud.flavor(), cloud.image()
    db = group(admin_api, "affinity", "db")
    boot(admin_api, flavor, image, db, "d1")
    boot(admin_api, flavor, image, db, "d2")
    (host,) = set(Server.objects.values_list("host", flat=True))
    response = admin_api.post(f"/os-hosts/{host}/maintenance", {"maintenance": {"action": "start", "dry_run": True}})
    plan = response.json()["plan"]
    assert plan["movable"] == 0
    for server in plan["servers"]:
        assert server["status"] == "would_stay"
        assert "runs no member of affinity group db" in server["explanation"], server["explanation"]
