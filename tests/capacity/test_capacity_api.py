"""GET /os-capacity against hand-computed cases: a flavor confined to an
aggregate by extra specs, a tenant-isolated aggregate (with and without the
project, and its quota), a disabled host, free addresses, lose_hosts; the
reported number booted for real, then one more refused; bad input."""

import threading

import pytest

from aggregates.addressing import services as addressing
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body

from .conftest import V, capacity, figures, project_id


def test_a_flavor_confined_to_an_aggregate_by_extra_specs(cloud, admin_api, three_hosts):
    body = capacity(admin_api)
    assert [f["name"] for f in body["capacity"]["flavors"]] == ["fast", "plain"]  # public flavors, smallest first
    assert (body["capacity"]["project_id"], body["capacity"]["lose_hosts"]) == (None, 0)
    # plain: each host min(4 VCPU, 8192/2048 = 4 MB, 100/10 = 10 GB) = 4; ties go to VCPU.
    # fast: only A (ssd=true): min(4, 8, 10) = 4.
    assert figures(body) == {
        "z1": {"plain": (8, "VCPU"), "fast": (4, "VCPU")},
        "z2": {"plain": (4, "VCPU"), "fast": (0, "AggregateInstanceExtraSpecsFilter")},
    }
    assert figures(body, "aggregates") == {
        "ssd": {"plain": (4, "VCPU"), "fast": (4, "VCPU")},
        "z1": {"plain": (8, "VCPU"), "fast": (4, "VCPU")},
        "z2": {"plain": (4, "VCPU"), "fast": (0, "AggregateInstanceExtraSpecsFilter")},
    }
    ssd = next(a for a in body["capacity"]["aggregates"] if a["name"] == "ssd")
    assert (ssd["hosts"], ssd["availability_zone"], ssd["lost_hosts"], ssd["stranded_servers"]) == (1, None, [], 0)
    # One flavor by name, one by id; the others are left out.
    plain, fast = three_hosts
    only = capacity(admin_api, f"flavor=fast&flavor={plain.flavorid}")
    assert [f["name"] for f in only["capacity"]["flavors"]] == ["fast", "plain"]


def test_what_runs_out_first_is_read_on_the_hosts_that_take_the_flavor(cloud, admin_api, three_hosts):
    """fast may go to A only: in an aggregate of A, B and C it is VCPU that
    runs out (on A), not the filter that keeps it off B and C."""
    cloud.aggregate("everything", ["A", "B", "C"])
    assert figures(capacity(admin_api, "flavor=fast"), "aggregates")["everything"] == {"fast": (4, "VCPU")}


def test_memory_runs_out_first_once_servers_use_it(cloud, admin_api, three_hosts):
    plain, _ = three_hosts
    big = cloud.flavor("big", vcpus=1, ram=6144, disk=10)
    boot = cli_body(big, cloud.image(), name="big", zone="z2:C")
    assert admin_api.post("/servers", boot, version=V).status_code == 202
    # C: 3 VCPU, 2048 MB, 90 GB free: plain fits once more, stopped by MEMORY_MB.
    assert figures(capacity(admin_api, "flavor=plain"))["z2"] == {"plain": (1, "MEMORY_MB")}


def test_a_tenant_isolated_aggregate_counts_for_its_project_only(cloud, admin_api, three_hosts, settings):
    demo = project_id("demo")
    cloud.aggregate("private", ["C"], filter_tenant_id=demo)
    body = capacity(admin_api, "flavor=plain")
    assert figures(body)["z2"] == {"plain": (0, "AggregateMultiTenancyIsolation")}
    body = capacity(admin_api, f"flavor=plain&project={demo}")
    assert body["capacity"]["project_id"] == demo
    assert figures(body)["z2"] == {"plain": (4, "VCPU")}
    # The project's quota caps every group: 6 instances, 5 cores left of QUOTA_CORES.
    settings.QUOTA_INSTANCES, settings.QUOTA_CORES = 6, 5
    assert figures(capacity(admin_api, f"flavor=plain&project={demo}")) == {
        "z1": {"plain": (5, "quota:cores")},
        "z2": {"plain": (4, "VCPU")},
    }


def test_a_disabled_host_adds_nothing(cloud, admin_api, three_hosts):
    cloud.disable("B")
    assert figures(capacity(admin_api, "flavor=plain"))["z1"] == {"plain": (4, "VCPU")}
    cloud.disable("A")
    assert figures(capacity(admin_api, "flavor=plain"))["z1"] == {"plain": (0, "compute_status_filter")}


def test_free_addresses_in_the_pools_serving_the_hosts(cloud, admin_api, three_hosts, system):
    addressing.create_pool(system, name="z1-net", cidr="10.0.0.0/30", scope="zone", zone="z1")  # 2 addresses
    assert figures(capacity(admin_api, "flavor=plain")) == {
        "z1": {"plain": (2, "IPV4_ADDRESS")},
        "z2": {"plain": (0, "AddressPoolFilter")},  # no pool serves C
    }


def test_lose_hosts_as_the_headroom_chooses_them(cloud, admin_api, three_hosts):
    plain, _ = three_hosts
    boot = cli_body(plain, cloud.image(), name="on-a", zone="z1:A", min_count=2, max_count=2)
    assert admin_api.post("/servers", boot, version=V).status_code == 202
    # A: 2 servers (2 VCPU, 4096 MB used): 2 more; B: 4.
    assert figures(capacity(admin_api, "flavor=plain"))["z1"] == {"plain": (6, "VCPU")}
    body = capacity(admin_api, "flavor=plain&lose_hosts=1")
    z1 = next(z for z in body["capacity"]["availability_zones"] if z["name"] == "z1")
    # A (the most loaded) is lost; its 2 servers go to B, which then fits 2 more.
    assert (z1["lost_hosts"], z1["stranded_servers"]) == (["A"], 0)
    assert figures(body)["z1"] == {"plain": (2, "VCPU")}
    # z2 has one host: losing it leaves nothing.
    assert figures(body)["z2"] == {"plain": (0, "lose_hosts")}
    headroom = admin_api.get("/os-capacity-headroom?availability_zone=z1&hosts=1", version=V).json()["headroom"]
    assert headroom["lost_hosts"] == z1["lost_hosts"]


@pytest.mark.parametrize("name, expected", [("plain", (8, "VCPU")), ("fast", (4, "VCPU"))])
def test_the_reported_number_boots_and_one_more_is_refused(cloud, admin_api, three_hosts, name, expected):
    """plain fills A and B; fast (ssd=true) fills A alone: the scheduler agrees with the count."""
    flavor = next(f for f in three_hosts if f.name == name)
    image = cloud.image()
    ((reported, limit),) = figures(capacity(admin_api, f"flavor={name}"))["z1"].values()
    assert (reported, limit) == expected
    boot = cli_body(flavor, image, name="fill", zone="z1", min_count=reported, max_count=reported)
    assert admin_api.post("/servers", boot, version=V).status_code == 202
    filled = Server.objects.filter(name__startswith="fill")
    assert filled.count() == reported and {s.vm_state for s in filled} == {"active"}
    assert figures(capacity(admin_api, f"flavor={name}"))["z1"] == {name: (0, "VCPU")}
    assert admin_api.post("/servers", cli_body(flavor, image, name="one-more", zone="z1"), version=V).status_code == 202
    refused = Server.objects.get(name="one-more")
    assert refused.vm_state == "error" and refused.fault["message"].startswith("No valid host was found.")


def test_bad_input_and_roles(cloud, admin_api, member_api, reader_api, three_hosts):
    cases = [
        ("flavor=nope", 404, "itemNotFound", "Flavor nope could not be found."),
        ("lose_hosts=-1", 400, "badRequest", None),
        ("lose_hosts=abc", 400, "badRequest", None),
        ("lose_hosts=1.5", 400, "badRequest", None),
        ("project=no-such-project", 400, "badRequest", "Project ID no-such-project is not a valid project."),
        ("color=red", 400, "badRequest", None),
    ]
    for query, status, kind, message in cases:
        response = admin_api.get(f"/os-capacity?{query}", version=V)
        assert response.status_code == status, (query, response.content)
        ((name, detail),) = response.json().items()
        assert name == kind and detail["code"] == status, query
        assert message is None or detail["message"] == message, detail
    for api in (member_api, reader_api):
        response = api.get("/os-capacity", version=V)
        assert response.status_code == 403
        assert response.json()["forbidden"]["message"] == "Policy doesn't allow corral:os-capacity to be performed."


def test_the_same_figures_when_placement_reads_every_provider(cloud, admin_api, three_hosts, monkeypatch):
    """Asked for many providers, placement reads every row and keeps those asked for: the same answer."""
    from placement.services import allocations

    before = figures(capacity(admin_api))
    monkeypatch.setattr(allocations, "ROOMS_READ_ALL_ABOVE", 0)
    assert figures(capacity(admin_api)) == before


def test_one_read_of_placement_served_to_corral_only_and_the_same_over_http(cloud, admin_api, three_hosts, monkeypatch):
    """In process, every node's room is one read of a route no HTTP client
    reaches; another placement is read provider by provider, to the same answer."""
    from aggregates.placement_client import PlacementClient, session
    from tests.plugins.api import ApiClient

    sent = []
    real = PlacementClient.request

    def counted(self, method, path, *args, **kwargs):
        sent.append(path)
        return real(self, method, path, *args, **kwargs)

    monkeypatch.setattr(PlacementClient, "request", counted)
    before = figures(capacity(admin_api))
    assert sent == ["/_corral/provider_rooms"]
    response = ApiClient(admin_api.token, prefix="/placement").get("/_corral/provider_rooms?uuids=")
    assert response.status_code == 404

    sent.clear()
    original_init = PlacementClient.__init__

    def over_http(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.in_process = False  # as for another placement: the public reads, one provider at a time

    monkeypatch.setattr(PlacementClient, "__init__", over_http)
    monkeypatch.setattr(session, "_local", threading.local())  # this thread's client made afresh
    assert figures(capacity(admin_api)) == before
    assert len(sent) == 3 * 3 and "/_corral/provider_rooms" not in sent
