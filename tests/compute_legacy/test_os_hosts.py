"""Nova's legacy os-hosts list and show (to 2.42; 404 from 2.43): the
enabled services with their zone, and a host's resource rows ((total),
(used_now), (used_max), one per project) from its node and its servers."""

from aggregates.hosts.models import Service
from aggregates.servers.models import Server
from tests.helpers import fault
from tests.plugins.cloud import cli_body


def boot(api, flavor, image, name, zone=None):
    response = api.post("/servers", cli_body(flavor, image, name=name, zone=zone), version="2.42")
    assert response.status_code == 202, response.content
    return response.json()["server"]["id"]


def test_list_names_the_enabled_services_with_their_zone(cloud, admin_api):
    cloud.hosts("h1", "h2", "h3")
    cloud.zone("az1", "h1")
    Service.objects.create(host="ctl", binary="nova-scheduler", topic="scheduler")
    Service.objects.create(host="ctl", binary="nova-conductor")  # no topic stored: Nova's from the binary
    Service.objects.create(host="api", binary="nova-osapi_compute")
    Service.objects.filter(host="h3").update(disabled=True)
    hosts = admin_api.get("/os-hosts", version="2.42").json()["hosts"]
    assert sorted(hosts, key=lambda h: (h["host_name"], h["service"])) == [
        {"host_name": "ctl", "service": "conductor", "zone": "internal"},
        {"host_name": "ctl", "service": "scheduler", "zone": "internal"},
        {"host_name": "h1", "service": "compute", "zone": "az1"},
        {"host_name": "h2", "service": "compute", "zone": "nova"},
    ]
    zoned = admin_api.get("/os-hosts?zone=az1&other=kept", version="2.1").json()["hosts"]
    assert zoned == [{"host_name": "h1", "service": "compute", "zone": "az1"}]
    assert admin_api.get("/os-hosts?zone=nowhere", version="2.1").json() == {"hosts": []}


def test_show_sums_the_host_by_project(cloud, admin_api, member_api):
    cloud.host("h1", vcpus=8, memory_mb=4096, local_gb=100)  # the one host while h1's servers boot
    small = cloud.flavor(name="small", vcpus=1, ram=512, disk=5, ephemeral=2)
    big = cloud.flavor(name="big", vcpus=2, ram=1024, disk=10)
    image = cloud.image()
    boot(admin_api, small, image, "a")
    boot(admin_api, big, image, "b")
    boot(member_api, big, image, "c")
    gone = boot(member_api, small, image, "gone")
    assert member_api.delete(f"/servers/{gone}").status_code == 204
    cloud.host("h2")
    boot(admin_api, big, image, "elsewhere", "nova:h2")
    project = admin_api.get("/servers/detail", version="2.42").json()["servers"][0]["tenant_id"]
    Server.objects.filter(name="c").update(project_id="other-project")  # a second project on h1
    rows = [r["resource"] for r in admin_api.get("/os-hosts/h1", version="2.42").json()["host"]]
    assert all(r["host"] == "h1" for r in rows)
    summary = {r["project"]: (r["cpu"], r["memory_mb"], r["disk_gb"]) for r in rows}
    assert [r["project"] for r in rows][:3] == ["(total)", "(used_now)", "(used_max)"]
    assert summary == {
        "(total)": (8, 4096, 100),
        "(used_now)": (5, 2560, 27),  # placement's usages of the node's provider
        "(used_max)": (5, 2560, 27),
        project: (3, 1536, 17),
        "other-project": (2, 1024, 10),
    }
    assert len(rows) == 5


def test_unknown_host_admins_only_and_gone_from_2_43(cloud, admin_api, member_api, reader_api):
    cloud.host("h1")
    message = fault(admin_api.get("/os-hosts/nope", version="2.1"), 404, "itemNotFound")
    assert message == "Compute host nope could not be found."
    for api in (member_api, reader_api):
        message = fault(api.get("/os-hosts", version="2.1"), 403, "forbidden")
        assert message == "Policy doesn't allow os_compute_api:os-hosts:list to be performed."
        message = fault(api.get("/os-hosts/h1", version="2.1"), 403, "forbidden")
        assert message == "Policy doesn't allow os_compute_api:os-hosts:show to be performed."
    for path in ("/os-hosts", "/os-hosts/h1"):
        assert admin_api.get(path, version="2.43").status_code == 404
        assert admin_api.get(path, version="2.42").status_code == 200
