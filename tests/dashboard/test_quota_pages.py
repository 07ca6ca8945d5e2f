"""The console's quota page of a project: its limits and usage, changed by
admins through the same service function and value schema as os-quota-sets."""

import pytest

from aggregates.identity import services as identity
from aggregates.quotas import services as quotas
from aggregates.quotas.models import ProjectQuota
from aggregates.servers.models import Server


@pytest.fixture
def team(system, settings):
    settings.QUOTA_INSTANCES, settings.QUOTA_CORES, settings.QUOTA_RAM = 10, 20, 51200
    project = identity.create_project(system, "team-q")
    for index in range(2):
        Server.objects.create(name=f"vm{index}", project_id=project.id, flavorid="1", flavor={"vcpus": 2, "ram": 1024})
    return project


def test_admins_see_limits_usage_and_the_form(admin_client, team):
    page = admin_client.get(f"/projects/{team.id}/").content.decode()
    assert f"/projects/{team.id}/quotas/" in page
    response = admin_client.get(f"/projects/{team.id}/quotas/")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'title="2 of 10 (20%)"' in text and 'title="4 of 20 (20%)"' in text and 'title="2048 of 51200 (4%)"' in text
    assert 'id="quota-form"' in text and 'name="instances" value="10"' in text


def test_readers_see_no_form_and_may_not_post(reader_client, team):
    text = reader_client.get(f"/projects/{team.id}/quotas/").content.decode()
    assert 'title="2 of 10 (20%)"' in text and 'id="quota-form"' not in text
    assert reader_client.post(f"/projects/{team.id}/quotas/set/", {"instances": 3}).status_code == 403


def form(**changes):
    values = {"instances": 10, "cores": 20, "ram": 51200, "metadata_items": 128, "key_pairs": 100}
    values.update({"server_groups": 10, "server_group_members": 10})
    values.update(changes)
    return values


def test_saving_sets_only_what_changed_with_the_apis_rules(admin_client, team):
    response = admin_client.post(f"/projects/{team.id}/quotas/set/", form(instances=5))
    assert response.status_code == 302
    assert list(ProjectQuota.objects.values_list("resource", "hard_limit")) == [("instances", 5)]

    response = admin_client.post(f"/projects/{team.id}/quotas/set/", form(instances=1))
    assert response.status_code == 400
    assert "Quota limit 1 for instances must be greater than or equal to already used and reserved 2." in (
        response.content.decode()
    )
    response = admin_client.post(f"/projects/{team.id}/quotas/set/", form(cores=-2))
    assert response.status_code == 400 and "-2 is less than the minimum of -1" in response.content.decode()
    assert quotas.limits(team.id)["instances"] == 5

    response = admin_client.post(f"/projects/{team.id}/quotas/set/", form(instances=1, force="on"))
    assert response.status_code == 302 and quotas.limits(team.id)["instances"] == 1

    response = admin_client.post(f"/projects/{team.id}/quotas/reset/")
    assert response.status_code == 302 and not ProjectQuota.objects.exists()
