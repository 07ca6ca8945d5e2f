"""os-scheduler-explain through HTTP: the placement query as sent, one row for
every compute host, and the stage, filter and reason of each host's fate,
for the seed scenarios (aggregate extra specs, tenant isolation, zones,
disabled hosts)."""

from urllib.parse import parse_qsl

import pytest

from tests.helpers import fault

SOME_FILTERS = [
    "ComputeFilter",
    "AggregateInstanceExtraSpecsFilter",
    "AggregateMultiTenancyIsolation",
    "AggregateTypeAffinityFilter",
]


@pytest.fixture(autouse=True)
def filters(settings):
    settings.ENABLED_FILTERS = SOME_FILTERS


def explain(api, **body):
    response = api.post("/os-scheduler-explain", {"explain": body})
    assert response.status_code == 200, response.content
    explanation = response.json()["explanation"]
    return explanation, {row["host"]: row for row in explanation["hosts"]}


def test_ssd_flavor_only_on_ssd_aggregate_hosts(cloud, admin_api):
    cloud.hosts("node1", "node2", "node3")
    cloud.aggregate("fast-io", ["node1", "node2"], ssd="true")
    flavor = cloud.flavor(
        "ssd.large", vcpus=2, ram=2048, disk=10, extra_specs={"aggregate_instance_extra_specs:ssd": "true"}
    )
    explanation, rows = explain(admin_api, flavorRef=flavor.flavorid)

    assert explanation["candidates"] == 3
    assert len(explanation["chosen"]) == 1 and explanation["chosen"][0] in ("node1", "node2")
    assert {rows["node1"]["result"], rows["node2"]["result"]} == {"chosen", "passed"}
    assert rows["node3"]["result"] == "rejected"
    assert rows["node3"]["stage"] == "filter"
    assert rows["node3"]["filter"] == "AggregateInstanceExtraSpecsFilter"
    assert "ssd" in rows["node3"]["reason"] and "node3" in rows["node3"]["reason"]
    assert rows["node1"]["weight"] is not None and "RAMWeigher" in rows["node1"]["weights"]
    params = dict(parse_qsl(explanation["placement_query"]))
    assert params["resources"] == "DISK_GB:10,MEMORY_MB:2048,VCPU:2"
    assert params["root_required"] == "!COMPUTE_STATUS_DISABLED"
    assert params["limit"] == "1000"


def test_zone_request_is_a_member_of_query_and_explains_other_zones(cloud, admin_api):
    cloud.hosts("a1", "b1")
    az1 = cloud.aggregate("agg-az1", ["a1"], zone="az1")
    cloud.aggregate("agg-az2", ["b1"], zone="az2")
    flavor = cloud.flavor("small")
    explanation, rows = explain(admin_api, flavorRef=flavor.flavorid, availability_zone="az1")
    assert ("member_of", f"in:{az1.uuid}") in parse_qsl(explanation["placement_query"])
    assert explanation["chosen"] == ["a1"]
    assert rows["b1"]["stage"] == "placement"
    assert rows["b1"]["filter"] == "map_az_to_placement_aggregate"
    assert "az1" in rows["b1"]["reason"] and "az2" in rows["b1"]["reason"]


def test_disabled_host_explained_by_compute_status_prefilter(cloud, admin_api):
    cloud.hosts("h1", "h2")
    cloud.disable("h2", reason="disk swap")
    flavor = cloud.flavor("small")
    explanation, rows = explain(admin_api, flavorRef=flavor.flavorid)
    assert explanation["chosen"] == ["h1"]
    assert rows["h2"]["filter"] == "compute_status_filter"
    assert "disk swap" in rows["h2"]["reason"]


def test_tenant_isolation_filter_and_prefilter(cloud, admin_api, settings):
    cloud.hosts("t1", "t2")
    cloud.aggregate("tenant-a", ["t1"], filter_tenant_id="project-a")
    flavor = cloud.flavor("small")
    # The filter keeps other tenants out of the isolated aggregate.
    _, rows = explain(admin_api, flavorRef=flavor.flavorid, project_id="project-b")
    assert rows["t1"]["filter"] == "AggregateMultiTenancyIsolation"
    assert rows["t2"]["result"] == "chosen"
    # It does not keep the tenant in...
    _, rows = explain(admin_api, flavorRef=flavor.flavorid, project_id="project-a")
    assert rows["t2"]["result"] in ("chosen", "passed")
    # ...the placement pre-filter does.
    settings.LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE = True
    explanation, rows = explain(admin_api, flavorRef=flavor.flavorid, project_id="project-a")
    assert explanation["chosen"] == ["t1"]
    assert rows["t2"]["filter"] == "require_tenant_aggregate"


def test_no_room_is_explained_with_the_resource_class(cloud, admin_api):
    cloud.hosts("tiny", vcpus=1, memory_mb=1024)
    flavor = cloud.flavor("huge", vcpus=1, ram=8192)
    explanation, rows = explain(admin_api, flavorRef=flavor.flavorid)
    assert explanation["chosen"] == [] and explanation["candidates"] == 0
    assert rows["tiny"]["filter"] == "resources"
    assert "MEMORY_MB" in rows["tiny"]["reason"] and "8192" in rows["tiny"]["reason"]


def test_allocation_ratio_metadata_is_noted_as_ignored(cloud, admin_api):
    cloud.hosts("r1")
    cloud.aggregate("dense", ["r1"], cpu_allocation_ratio="16.0")
    flavor = cloud.flavor("small")
    explanation, _ = explain(admin_api, flavorRef=flavor.flavorid)
    assert any("dense" in note and "cpu_allocation_ratio" in note for note in explanation["notes"])


def test_stored_explanation_can_be_read_back(cloud, admin_api):
    cloud.hosts("s1")
    flavor = cloud.flavor("small")
    response = admin_api.post("/os-scheduler-explain", {"explain": {"flavorRef": flavor.flavorid}})
    decision_id = response.json()["explanation"]["id"]
    again = admin_api.get(f"/os-scheduler-explain/{decision_id}")
    assert again.status_code == 200
    assert again.json()["explanation"]["hosts"] == response.json()["explanation"]["hosts"]
    fault(admin_api.get("/os-scheduler-explain/not-a-uuid"), 404, "itemNotFound")


@pytest.mark.parametrize(
    "body, status, name",
    [
        ({"explain": {}}, 400, "badRequest"),
        ({"explain": {"flavorRef": "nope"}}, 400, "badRequest"),
        ({"explain": {"flavorRef": "FLAVOR", "availability_zone": "a:b:c:d"}}, 400, "badRequest"),
        ({"explain": {"flavorRef": "FLAVOR", "availability_zone": "no-such-zone"}}, 400, "badRequest"),
        ({"explain": {"flavorRef": "FLAVOR", "num_instances": 0}}, 400, "badRequest"),
        ({"explain": {"flavorRef": "FLAVOR", "imageRef": "no-such-image"}}, 400, "badRequest"),
        ({"explain": {"flavorRef": "FLAVOR", "extra": 1}}, 400, "badRequest"),
        ({"nope": {}}, 400, "badRequest"),
    ],
)
def test_bad_input_is_refused_and_stores_nothing(cloud, admin_api, body, status, name):
    from aggregates.scheduling.models import SchedulingDecision

    cloud.hosts("b1")
    flavor = cloud.flavor("small")
    if "flavorRef" in body.get("explain", {}) and body["explain"]["flavorRef"] == "FLAVOR":
        body["explain"]["flavorRef"] = flavor.flavorid
    fault(admin_api.post("/os-scheduler-explain", body), status, name)
    assert not SchedulingDecision.objects.exists()


def test_explain_is_for_admins(cloud, member_api):
    flavor = cloud.flavor("small")
    fault(member_api.post("/os-scheduler-explain", {"explain": {"flavorRef": flavor.flavorid}}), 403, "forbidden")


def test_image_type_support_prefilter(cloud, admin_api, settings, tmp_path):
    """With QUERY_PLACEMENT_FOR_IMAGE_TYPE_SUPPORT on, hosts report the disk
    formats they boot as traits and a vmdk image finds only a host that boots it."""
    from aggregates.images.models import Image

    settings.QUERY_PLACEMENT_FOR_IMAGE_TYPE_SUPPORT = True
    cloud.hosts("kvm1")
    cloud.make_host("vmw1", hypervisor_type="VMware vCenter Server")
    flavor = cloud.flavor("small")
    image = Image.objects.create(name="win", status="active", visibility="public", disk_format="vmdk")
    explanation, rows = explain(admin_api, flavorRef=flavor.flavorid, imageRef=str(image.id))
    assert "COMPUTE_IMAGE_TYPE_VMDK" in dict(parse_qsl(explanation["placement_query"]))["root_required"]
    assert explanation["chosen"] == ["vmw1"]
    assert rows["kvm1"]["filter"] == "require_image_type_support"
    assert "vmdk" in rows["kvm1"]["reason"]


def test_a_servers_decision_is_read_by_the_server_id(cloud, admin_api, member_api):
    """GET /os-scheduler-explain/servers/{server_id}: the stored decision of a
    server's build, for admins; the server show's Link header names it too."""
    from aggregates.servers.models import Server

    cloud.hosts("s1")
    flavor, image = cloud.flavor("small"), cloud.image()
    body = {"server": {"name": "vm1", "imageRef": str(image.id), "flavorRef": flavor.flavorid, "networks": "none"}}
    server_id = admin_api.post("/servers", body, version="2.37").json()["server"]["id"]
    decision = Server.objects.get().decision

    by_server = admin_api.get(f"/os-scheduler-explain/servers/{server_id}")
    assert by_server.status_code == 200, by_server.content
    assert by_server.json() == admin_api.get(f"/os-scheduler-explain/{decision.uuid}").json()
    assert by_server.json()["explanation"]["id"] == str(decision.uuid)
    assert by_server.json()["explanation"]["chosen"] == ["s1"]
    link = admin_api.get(f"/servers/{server_id}")["Link"]
    assert link.startswith(f"<http://testserver/compute/v2.1/os-scheduler-explain/{decision.uuid}>;")

    fault(member_api.get(f"/os-scheduler-explain/servers/{server_id}"), 403, "forbidden")
    unknown = "0b5a5a36-5c5e-4c4e-9d0a-1f3f2e2d1c0b"
    assert fault(admin_api.get(f"/os-scheduler-explain/servers/{unknown}"), 404, "itemNotFound") == (
        f"Instance {unknown} could not be found."
    )
    fault(admin_api.get("/os-scheduler-explain/servers/not-a-uuid"), 404, "itemNotFound")
    Server.objects.update(decision=None)  # a server not scheduled yet
    assert fault(admin_api.get(f"/os-scheduler-explain/servers/{server_id}"), 404, "itemNotFound") == (
        f"Server {server_id} has no scheduling decision."
    )


def test_a_boots_decision_keeps_the_chosen_host_and_its_best_alternates(cloud, admin_api, monkeypatch):
    """A boot's stored decision keeps the host chosen and the ten best other
    hosts that passed, in weight order, each with its weights; hosts whose
    claim lost a race (placement's 409) say so, and the host finally chosen
    is the one tried after them, however far down the order."""
    from aggregates.scheduling import services
    from aggregates.servers.models import Server

    cloud.hosts(*[f"w{n:02d}" for n in range(20)])
    flavor, image = cloud.flavor("small"), cloud.image()
    tried: list[str] = []
    real_claim = services._claim

    def the_first_fourteen_conflict(placement, spec, consumer_uuid, allocation):
        tried.append(next(iter(allocation["allocations"])))
        return False if len(tried) <= 14 else real_claim(placement, spec, consumer_uuid, allocation)

    monkeypatch.setattr(services, "_claim", the_first_fourteen_conflict)
    body = {"server": {"name": "vm1", "imageRef": str(image.id), "flavorRef": flavor.flavorid, "networks": "none"}}
    server_id = admin_api.post("/servers", body, version="2.37").json()["server"]["id"]
    server = Server.objects.get(uuid=server_id)
    assert server.vm_state == Server.ACTIVE, server.fault
    assert len(tried) == 15 and len(set(tried)) == 15  # a host each, in pick order

    explanation = admin_api.get(f"/os-scheduler-explain/servers/{server_id}").json()["explanation"]
    rows = explanation["hosts"]
    assert explanation["chosen"] == [server.host]
    assert [row["result"] for row in rows] == ["chosen"] + ["passed"] * 10
    assert rows[0]["host"] == server.host and rows[0]["weights"]
    alternates = rows[1:]
    assert all(row["weights"] and row["weight"] is not None for row in alternates)
    assert [row["weight"] for row in alternates] == sorted((row["weight"] for row in alternates), reverse=True)
    assert all("lost a race" in row["reason"] for row in alternates)  # the ten best were all tried and lost
