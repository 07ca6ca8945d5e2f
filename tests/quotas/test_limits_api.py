"""GET /limits in Nova's shapes: the network-era keys until 2.36,
maxImageMeta until 2.39, the personality keys until 2.57; another
project's limits for admins only."""

import pytest

from aggregates.identity.models import Project

V21 = {
    "maxImageMeta": 128,
    "maxPersonality": 5,
    "maxPersonalitySize": 10240,
    "maxSecurityGroupRules": -1,
    "maxSecurityGroups": -1,
    "maxServerGroupMembers": 10,
    "maxServerGroups": 10,
    "maxServerMeta": 128,
    "maxTotalCores": 20,
    "maxTotalFloatingIps": -1,
    "maxTotalInstances": 10,
    "maxTotalKeypairs": 100,
    "maxTotalRAMSize": 51200,
    "totalCoresUsed": 0,
    "totalFloatingIpsUsed": 0,
    "totalInstancesUsed": 0,
    "totalRAMUsed": 0,
    "totalSecurityGroupsUsed": 0,
    "totalServerGroupsUsed": 0,
}
NETWORK = {"maxSecurityGroupRules", "maxSecurityGroups", "maxTotalFloatingIps", "totalFloatingIpsUsed"}
NETWORK |= {"totalSecurityGroupsUsed"}


@pytest.mark.parametrize(
    "version, hidden",
    [
        ("2.1", set()),
        ("2.35", set()),
        ("2.36", NETWORK),
        ("2.39", NETWORK | {"maxImageMeta"}),
        ("2.57", NETWORK | {"maxImageMeta", "maxPersonality", "maxPersonalitySize"}),
    ],
)
def test_absolute_limits_per_microversion(member_api, version, hidden):
    response = member_api.get("/limits", version=version)
    assert response.status_code == 200, response.content
    expected = {key: value for key, value in V21.items() if key not in hidden}
    assert response.json() == {"limits": {"rate": [], "absolute": expected}}


def test_tenant_id_is_for_admins(admin_api, member_api, other_api):
    other_id = Project.objects.get(name="other").id
    admin_api.put(f"/os-quota-sets/{other_id}", {"quota_set": {"instances": 4}})
    response = admin_api.get(f"/limits?tenant_id={other_id}")
    assert response.json()["limits"]["absolute"]["maxTotalInstances"] == 4
    assert admin_api.get("/limits").json()["limits"]["absolute"]["maxTotalInstances"] == 10
    response = member_api.get(f"/limits?tenant_id={other_id}")
    assert response.json() == {
        "forbidden": {
            "code": 403,
            "message": "Policy doesn't allow os_compute_api:limits:other_project to be performed.",
        }
    }
    assert other_api.get("/limits").json()["limits"]["absolute"]["maxTotalInstances"] == 4
    assert member_api.get("/limits?foo=1", version="2.74").status_code == 200
    assert member_api.get("/limits?foo=1", version="2.75").status_code == 400


def test_noop_driver_shows_everything_unlimited(member_api, settings):
    settings.QUOTA_DRIVER = "noop"
    absolute = member_api.get("/limits", version="2.57").json()["limits"]["absolute"]
    assert {key: value for key, value in absolute.items() if key.startswith("max")} == dict.fromkeys(
        ["maxServerGroupMembers", "maxServerGroups", "maxServerMeta", "maxTotalCores", "maxTotalInstances"]
        + ["maxTotalKeypairs", "maxTotalRAMSize"],
        -1,
    )
