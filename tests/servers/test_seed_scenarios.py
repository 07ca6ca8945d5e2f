"""The seed scenarios end to end through HTTP boots: ssd.large lands only on
hosts of an ssd=true aggregate; a filter_tenant_id aggregate keeps other
tenants out (filter) and, with placement tenant isolation on, keeps the
tenant in (pre-filter); a disabled host gets nothing; and each refusal's
stored explanation names the filter that refused."""

import pytest

from aggregates.identity.models import Project
from aggregates.servers.models import Server
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

AGGREGATE_FILTERS = [
    "ComputeFilter",
    "AggregateInstanceExtraSpecsFilter",
    "AggregateMultiTenancyIsolation",
    "AggregateTypeAffinityFilter",
]


@pytest.fixture(autouse=True)
def filters(settings):
    settings.ENABLED_FILTERS = AGGREGATE_FILTERS


def boot_all(api, flavor, image, count, **extra):
    hosts = []
    for n in range(count):
        response = api.post("/servers", cli_body(flavor, image, name=f"vm{n}", **extra), version="2.100")
        assert response.status_code == 202, response.content
        server = Server.objects.get(uuid=response.json()["server"]["id"])
        hosts.append(server.host)
    return hosts


def fates(server):
    return {row["host"]: row for row in server.decision.explanation["hosts"]}


def test_ssd_large_lands_only_on_ssd_hosts_and_says_why_when_they_are_full(cloud, admin_api):
    cloud.hosts("ssd1", "ssd2", vcpus=4, memory_mb=512 + 2 * 8192, local_gb=400)
    cloud.hosts("hdd1", "hdd2", vcpus=64, memory_mb=262144, local_gb=4000)
    cloud.aggregate("fast-io", ["ssd1", "ssd2"], ssd="true")
    cloud.aggregate("slow-io", ["hdd1", "hdd2"], ssd="false")
    flavor = cloud.flavor(
        "ssd.large", vcpus=4, ram=8192, disk=80, extra_specs={"aggregate_instance_extra_specs:ssd": "true"}
    )
    image = cloud.image()
    assert sorted(boot_all(admin_api, flavor, image, 4)) == ["ssd1", "ssd1", "ssd2", "ssd2"]
    (full,) = boot_all(admin_api, flavor, image, 1)
    assert full is None
    server = Server.objects.get(vm_state="error")
    assert server.fault["message"].startswith("No valid host was found.")
    rows = fates(server)
    assert rows["hdd1"]["filter"] == "AggregateInstanceExtraSpecsFilter" and "ssd" in rows["hdd1"]["reason"]
    assert rows["ssd1"]["filter"] == "resources" and "MEMORY_MB" in rows["ssd1"]["reason"]


def test_tenant_isolation_keeps_others_out_and_with_the_prefilter_keeps_the_tenant_in(
    cloud, admin_api, token_for, settings
):
    cloud.hosts("iso1", "open1", "open2")
    demo = Project.objects.get(name="demo")  # admin_api's project
    cloud.aggregate("acme-only", ["iso1"], filter_tenant_id=demo.id)
    flavor, image = cloud.flavor(), cloud.image()
    other = ApiClient(token_for("member", username="other-user", project_name="other"))
    assert "iso1" not in boot_all(other, flavor, image, 4)  # the filter keeps others out
    first = Server.objects.filter(project_id=Project.objects.get(name="other").id).first()
    assert first.decision.explanation["rejected_by"].get("AggregateMultiTenancyIsolation") == 1

    settings.LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE = True
    assert set(boot_all(admin_api, flavor, image, 3)) == {"iso1"}  # the pre-filter keeps the tenant in


def test_a_disabled_host_gets_nothing(cloud, admin_api):
    cloud.hosts("up1", "down1")
    cloud.disable("down1", reason="fan failure")
    flavor, image = cloud.flavor(), cloud.image()
    assert set(boot_all(admin_api, flavor, image, 5)) == {"up1"}


def test_a_zone_asked_for_is_never_left(cloud, admin_api):
    cloud.hosts("a1", "b1", "b2", "b3")
    cloud.zone("az1", "a1")
    cloud.zone("az2", "b1", "b2", "b3")
    flavor, image = cloud.flavor(), cloud.image()
    assert set(boot_all(admin_api, flavor, image, 4, zone="az1")) == {"a1"}
