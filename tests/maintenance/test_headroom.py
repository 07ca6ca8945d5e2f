"""GET /os-capacity-headroom against hand-computed cases: no class
exhausted, one (MEMORY_MB), several (all three); a zone; a constraint
(the pinned zone) that strands a server whatever the room."""

from aggregates.servers.models import Server
from tests.plugins.cloud import EXACT

from .conftest import V, boot_on, fault


def headroom(api, query, status=200):
    response = api.get(f"/os-capacity-headroom?{query}", version=V)
    assert response.status_code == status, response.content
    return response.json().get("headroom")


def figures(body):
    return {rc: (f["capacity"], f["used"], f["free_after"]) for rc, f in body["resources"].items()}


def memory_cloud(cloud, admin_api):
    """H1..H4 of 8 VCPU / 8192 MB / 100 GB; 4096 MB servers: two on H1, one on each other host."""
    cloud.hosts("H1", "H2", "H3", "H4", vcpus=8, memory_mb=8192, local_gb=100, **EXACT)
    aggregate = cloud.aggregate("agg", ["H1", "H2", "H3", "H4"])
    flavor, image = cloud.flavor(name="mem", vcpus=1, ram=4096, disk=10), cloud.image()
    boot_on(admin_api, flavor, image, "H1", count=2, name="one")
    for host in ("H2", "H3", "H4"):
        boot_on(admin_api, flavor, image, host, name=f"on-{host}")
    return aggregate


def test_losing_one_host_fits_with_nothing_exhausted(cloud, admin_api):
    aggregate = memory_cloud(cloud, admin_api)
    body = headroom(admin_api, f"aggregate={aggregate.id}&hosts=1")
    assert (body["scope"], body["name"], body["aggregate_id"], body["hosts"]) == ("aggregate", "agg", aggregate.id, 4)
    assert body["lost_hosts"] == ["H1"]  # the most loaded
    assert body["servers"] == 2
    assert body["fits"] is True and body["stranded"] == []
    # Remaining H2-H4: capacity 24 / 24576 / 300; used 3 servers there + the 2 moved.
    assert figures(body) == {"VCPU": (24, 5, 19), "MEMORY_MB": (24576, 20480, 4096), "DISK_GB": (300, 50, 250)}
    assert body["resources"]["MEMORY_MB"]["moved"] == 8192
    assert body["resources"]["MEMORY_MB"]["lost_capacity"] == 8192


def test_losing_two_hosts_exhausts_memory(cloud, admin_api):
    aggregate = memory_cloud(cloud, admin_api)
    body = headroom(admin_api, f"aggregate={aggregate.id}&hosts=2")
    assert body["lost_hosts"] == ["H1", "H2"]  # H2-H4 tie: by name
    assert body["servers"] == 3
    # Remaining H3, H4: 16 / 16384 / 200; used: their 2 servers + the 3 moved.
    assert figures(body) == {"VCPU": (16, 5, 11), "MEMORY_MB": (16384, 20480, -4096), "DISK_GB": (200, 50, 150)}
    assert body["fits"] is False
    (stranded,) = body["stranded"]
    assert stranded["source"] in ("H1", "H2") and stranded["target"] is None
    assert stranded["flavor"] == "mem" and stranded["resources"] == {"VCPU": 1, "MEMORY_MB": 4096, "DISK_GB": 10}
    assert "No valid host" in stranded["explanation"] and "MEMORY_MB 0," in stranded["explanation"]


def test_several_classes_exhausted(cloud, admin_api):
    cloud.hosts("F1", "F2", "F3", vcpus=4, memory_mb=4096, local_gb=40, **EXACT)
    aggregate = cloud.aggregate("fat", ["F1", "F2", "F3"])
    flavor, image = cloud.flavor(name="fat", vcpus=4, ram=4096, disk=40), cloud.image()
    boot_on(admin_api, flavor, image, "F1", name="f1")
    boot_on(admin_api, flavor, image, "F2", name="f2")

    body = headroom(admin_api, f"aggregate={aggregate.id}")  # hosts defaults to 1
    assert body["lost_hosts"] == ["F1"]
    assert figures(body) == {"VCPU": (8, 8, 0), "MEMORY_MB": (8192, 8192, 0), "DISK_GB": (80, 80, 0)}
    assert body["fits"] is True

    body = headroom(admin_api, f"aggregate={aggregate.id}&hosts=2")
    assert body["lost_hosts"] == ["F1", "F2"]
    assert figures(body) == {"VCPU": (4, 8, -4), "MEMORY_MB": (4096, 8192, -4096), "DISK_GB": (40, 80, -40)}
    assert len(body["stranded"]) == 1 and body["fits"] is False


def test_zone_headroom_and_a_pinned_server_stranded_by_its_zone(cloud, admin_api):
    cloud.hosts("A", "B", vcpus=4, memory_mb=8192, local_gb=100, **EXACT)
    cloud.host("C", vcpus=16, memory_mb=65536, local_gb=1000, **EXACT)
    cloud.aggregate("z1", ["A", "B"], zone="z1")
    cloud.aggregate("z2", ["C"], zone="z2")
    everything = cloud.aggregate("all", ["A", "B", "C"])
    flavor, image = cloud.flavor(vcpus=4, ram=2048, disk=10), cloud.image()
    pinned = boot_on(admin_api, flavor, image, "A", name="pinned", zone="z1")
    boot_on(admin_api, flavor, image, "B", name="filler", zone="z1")
    Server.objects.filter(name__startswith="filler").update(pinned_availability_zone=None)
    assert pinned[0].pinned_availability_zone == "z1"

    body = headroom(admin_api, f"aggregate={everything.id}&hosts=1")
    assert body["lost_hosts"] == ["C"] or body["lost_hosts"] == ["A"]
    body = headroom(admin_api, "availability_zone=z1&hosts=1")
    assert (body["scope"], body["name"], body["hosts"], body["lost_hosts"]) == ("availability_zone", "z1", 2, ["A"])
    assert figures(body)["VCPU"] == (4, 8, -4)
    (stranded,) = body["stranded"]
    assert stranded["id"] == str(pinned[0].uuid)
    assert "No valid host" in stranded["explanation"]
    assert stranded["rejected_by"] == {"resources": 1}, stranded


def test_bad_headroom_requests(cloud, admin_api, member_api):
    cloud.hosts("A", "B")
    aggregate = cloud.aggregate("agg", ["A", "B"])
    cloud.aggregate("z", ["A"], zone="z")
    cases = [
        ("", 400),
        (f"aggregate={aggregate.id}&availability_zone=z", 400),
        ("aggregate=abc", 400),
        (f"aggregate={aggregate.id}&hosts=-1", 400),
        (f"aggregate={aggregate.id}&hosts=0", 400),
        (f"aggregate={aggregate.id}&hosts=2", 400),  # nothing would remain
        ("availability_zone=z&hosts=1", 400),  # one host: nothing would remain
        (f"aggregate={aggregate.id}&color=red", 400),
        ("aggregate=999999", 404),
        ("availability_zone=nowhere", 404),
    ]
    for query, status in cases:
        response = admin_api.get(f"/os-capacity-headroom?{query}", version=V)
        assert fault(response)[0] == status, (query, response.content)
    status, name, message = fault(member_api.get(f"/os-capacity-headroom?aggregate={aggregate.id}", version=V))
    assert (status, message) == (403, "Policy doesn't allow corral:os-capacity-headroom to be performed.")


def test_a_disabled_host_adds_no_capacity(cloud, admin_api):
    """H4 disabled: losing H1 leaves H2 and H3 to take its two servers; H4's
    room is not counted (the scheduler would not use it) and is named."""
    aggregate = memory_cloud(cloud, admin_api)
    cloud.disable("H4")
    body = headroom(admin_api, f"aggregate={aggregate.id}&hosts=1")
    assert body["lost_hosts"] == ["H1"] and body["closed_hosts"] == ["H4"]
    # H2, H3: 16 / 16384 / 200; used: their 2 servers + the 2 moved.
    assert figures(body) == {"VCPU": (16, 4, 12), "MEMORY_MB": (16384, 16384, 0), "DISK_GB": (200, 40, 160)}
    assert body["fits"] is True
