"""Quotas enforced on boot and on server metadata: a request over quota is
Nova's 403 and changes nothing; usage counted from the servers shows in the
limits and the detailed quota set; a deleted server gives its quota back."""

import pytest
from django.contrib.auth import get_user_model

from aggregates.identity import services as identity
from aggregates.identity.models import Project
from aggregates.servers.models import Server
from tests.plugins.cloud import cli_body


@pytest.fixture
def demo_id(admin_api):
    return Project.objects.get(name="demo").id


@pytest.fixture
def booted(cloud):
    cloud.host("h1", vcpus=64, memory_mb=262144)
    image = cloud.image()

    def boot(api, flavor, name="vm", **extra):
        return api.post("/servers", cli_body(flavor, image, name=name, **extra), version="2.100")

    return boot


def refusal(response):
    assert response.status_code == 403, response.content
    return response.json()["forbidden"]["message"]


def test_boots_stop_at_the_instances_limit_and_show_in_the_limits(cloud, booted, admin_api, member_api, demo_id):
    admin_api.put(f"/os-quota-sets/{demo_id}", {"quota_set": {"instances": 2}})
    flavor = cloud.flavor(vcpus=2, ram=1024)
    assert booted(admin_api, flavor).status_code == 202
    assert booted(member_api, flavor).status_code == 202
    response = booted(member_api, flavor, name="third")
    assert refusal(response) == "Quota exceeded for instances: Requested 1, but already used 2 of 2 instances"
    assert not Server.objects.filter(name="third").exists()

    absolute = member_api.get("/limits").json()["limits"]["absolute"]
    assert (absolute["totalInstancesUsed"], absolute["totalCoresUsed"], absolute["totalRAMUsed"]) == (2, 4, 2048)
    detail = admin_api.get(f"/os-quota-sets/{demo_id}/detail").json()["quota_set"]
    assert detail["instances"] == {"in_use": 2, "limit": 2, "reserved": 0}
    assert detail["cores"] == {"in_use": 4, "limit": 20, "reserved": 0}

    # a limit below what is used is refused unless forced
    response = admin_api.put(f"/os-quota-sets/{demo_id}", {"quota_set": {"instances": 1}})
    assert response.json()["badRequest"]["message"] == (
        "Quota limit 1 for instances must be greater than or equal to already used and reserved 2."
    )
    # a deleted server gives its quota back
    server = Server.objects.filter(project_id=demo_id).first()
    assert admin_api.delete(f"/servers/{server.uuid}").status_code == 204
    assert booted(member_api, flavor, name="third").status_code == 202


def test_cores_and_ram_limits_name_every_resource_over(cloud, booted, admin_api, demo_id):
    admin_api.put(f"/os-quota-sets/{demo_id}", {"quota_set": {"cores": 6, "ram": 3000}})
    flavor = cloud.flavor(vcpus=4, ram=2048)
    assert booted(admin_api, flavor).status_code == 202
    assert refusal(booted(admin_api, flavor)) == (
        "Quota exceeded for cores, ram: Requested 4, 2048, but already used 4, 2048 of 6, 3000 cores, ram"
    )
    assert Server.objects.count() == 1


def test_max_count_is_lowered_to_what_quota_allows(cloud, booted, admin_api, demo_id):
    admin_api.put(f"/os-quota-sets/{demo_id}", {"quota_set": {"instances": 3}})
    flavor = cloud.flavor()
    response = booted(admin_api, flavor, min_count=4, max_count=5)
    assert refusal(response) == "Quota exceeded for instances: Requested 4-5, but already used 0 of 3 instances"
    assert not Server.objects.exists()
    response = booted(admin_api, flavor, min_count=2, max_count=5, return_reservation_id=True)
    assert response.status_code == 202, response.content
    assert Server.objects.count() == 3


def test_a_users_own_limit(cloud, booted, admin_api, member_api, demo_id):
    admin = identity.user_id_of(get_user_model().objects.get(username="admin-user"))
    admin_api.put(f"/os-quota-sets/{demo_id}?user_id={admin}", {"quota_set": {"instances": 1}})
    flavor = cloud.flavor()
    assert booted(admin_api, flavor).status_code == 202
    assert refusal(booted(admin_api, flavor)) == (
        "Quota exceeded for instances: Requested 1, but already used 1 of 1 instances"
    )
    assert booted(member_api, flavor).status_code == 202  # the project has room
    detail = admin_api.get(f"/os-quota-sets/{demo_id}/detail?user_id={admin}").json()["quota_set"]
    assert detail["instances"] == {"in_use": 1, "limit": 1, "reserved": 0}


def test_metadata_items_limit_on_boot_and_on_the_metadata_routes(cloud, booted, admin_api, demo_id):
    admin_api.put(f"/os-quota-sets/{demo_id}", {"quota_set": {"metadata_items": 2}})
    flavor = cloud.flavor()
    response = booted(admin_api, flavor, metadata={"a": "1", "b": "2", "c": "3"})
    assert refusal(response) == "Maximum number of metadata items exceeds 2"
    assert not Server.objects.exists()
    response = booted(admin_api, flavor, metadata={"a": "1", "b": "2"})
    server_id = response.json()["server"]["id"]
    response = admin_api.post(f"/servers/{server_id}/metadata", {"metadata": {"c": "3"}})
    assert refusal(response) == "Maximum number of metadata items exceeds 2"
    assert admin_api.get(f"/servers/{server_id}/metadata").json() == {"metadata": {"a": "1", "b": "2"}}
