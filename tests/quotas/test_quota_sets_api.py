"""os-quota-sets and os-quota-class-sets as Nova answers them: the keys per
microversion, who may read and change them, Nova's refusals."""

import pytest

from aggregates.audit.models import Event

ALL_DEFAULTS = {
    "cores": 20,
    "fixed_ips": -1,
    "floating_ips": -1,
    "injected_file_content_bytes": 10240,
    "injected_file_path_bytes": 255,
    "injected_files": 5,
    "instances": 10,
    "key_pairs": 100,
    "metadata_items": 128,
    "ram": 51200,
    "security_group_rules": -1,
    "security_groups": -1,
    "server_group_members": 10,
    "server_groups": 10,
}
NETWORK = {"fixed_ips", "floating_ips", "security_group_rules", "security_groups"}
PERSONALITY = {"injected_files", "injected_file_content_bytes", "injected_file_path_bytes"}


def without(values, *names):
    return {key: value for key, value in values.items() if key not in set().union(*names)}


@pytest.mark.parametrize(
    "version, hidden", [("2.1", set()), ("2.35", set()), ("2.36", NETWORK), ("2.57", NETWORK | PERSONALITY)]
)
def test_show_and_defaults_carry_nova_keys_per_microversion(admin_api, demo, version, hidden):
    expected = {"id": demo, **without(ALL_DEFAULTS, hidden)}
    for path in (f"/os-quota-sets/{demo}", f"/os-quota-sets/{demo}/defaults"):
        response = admin_api.get(path, version=version)
        assert response.status_code == 200, response.content
        assert response.json() == {"quota_set": expected}


def test_detail_shows_limit_in_use_and_reserved(member_api, demo):
    body = member_api.get(f"/os-quota-sets/{demo}/detail", version="2.57").json()["quota_set"]
    assert body.pop("id") == demo
    assert body == {
        key: {"in_use": 0, "limit": value, "reserved": 0}
        for key, value in without(ALL_DEFAULTS, NETWORK, PERSONALITY).items()
    }


def test_admin_sets_limits_then_deletes_them(admin_api, member_api, demo):
    response = admin_api.put(
        f"/os-quota-sets/{demo}", {"quota_set": {"instances": 5, "cores": "8", "ram": -1}}, version="2.57"
    )
    assert response.status_code == 200, response.content
    expected = {**without(ALL_DEFAULTS, NETWORK, PERSONALITY), "instances": 5, "cores": 8, "ram": -1}
    assert response.json() == {"quota_set": expected}  # no id in an update's answer, as Nova
    assert member_api.get(f"/os-quota-sets/{demo}").json()["quota_set"]["instances"] == 5
    event = Event.objects.get(event_type="quota.update")
    assert (event.object_id, event.payload["quota_set"]) == (demo, {"instances": 5, "cores": 8, "ram": -1})

    response = admin_api.delete(f"/os-quota-sets/{demo}")
    assert (response.status_code, response.content) == (202, b"")
    assert admin_api.get(f"/os-quota-sets/{demo}").json()["quota_set"]["instances"] == 10


def test_a_user_limit_is_at_most_what_the_project_leaves(admin_api, demo):
    path = f"/os-quota-sets/{demo}?user_id=u1"
    assert admin_api.put(path, {"quota_set": {"instances": 4}}).status_code == 200
    assert admin_api.get(path).json()["quota_set"]["instances"] == 4
    assert admin_api.get(f"/os-quota-sets/{demo}").json()["quota_set"]["instances"] == 10
    # 10 for the project, 4 given to u1: u2 may get at most 6
    response = admin_api.put(f"/os-quota-sets/{demo}?user_id=u2", {"quota_set": {"instances": 7}})
    assert response.status_code == 400
    assert response.json()["badRequest"]["message"] == "Quota limit 7 for instances must be less than or equal to 6."
    # the project may not go below what its users were given
    response = admin_api.put(f"/os-quota-sets/{demo}", {"quota_set": {"instances": 3}})
    assert response.json()["badRequest"]["message"] == (
        "Quota limit 3 for instances must be greater than or equal to already used and reserved 4."
    )
    assert admin_api.put(f"/os-quota-sets/{demo}", {"quota_set": {"instances": 3, "force": True}}).status_code == 200
    assert admin_api.delete(path).status_code == 202
    assert admin_api.get(path).json()["quota_set"]["instances"] == 3


def test_who_may_read_and_change(member_api, reader_api, other_api, admin_api, demo):
    assert other_api.get(f"/os-quota-sets/{demo}").json() == {
        "forbidden": {"code": 403, "message": "Policy doesn't allow os_compute_api:os-quota-sets:show to be performed."}
    }
    assert other_api.get(f"/os-quota-sets/{demo}/detail").status_code == 403
    assert other_api.get(f"/os-quota-sets/{demo}/defaults").status_code == 200
    assert reader_api.get(f"/os-quota-sets/{demo}").status_code == 200
    for api in (member_api, reader_api):
        response = api.put(f"/os-quota-sets/{demo}", {"quota_set": {"instances": 1}})
        assert response.json()["forbidden"]["message"] == (
            "Policy doesn't allow os_compute_api:os-quota-sets:update to be performed."
        )
        assert api.delete(f"/os-quota-sets/{demo}").status_code == 403
        assert api.get("/os-quota-class-sets/default").status_code == 403
    assert admin_api.get(f"/os-quota-sets/{demo}").json()["quota_set"]["instances"] == 10


@pytest.mark.parametrize(
    "body, version, message",
    [
        ({"quota_set": {"instances": "many"}}, "2.1", "Invalid input for field/attribute instances."),
        ({"quota_set": {"instances": -2}}, "2.1", "-2 is less than the minimum of -1"),
        ({"quota_set": {"instances": 2147483648}}, "2.1", "is greater than the maximum of 2147483647"),
        ({"quota_set": {"networks": 1}}, "2.1", "Additional properties are not allowed ('networks' was unexpected)"),
        ({"quota_set": {"floating_ips": 1}}, "2.36", "('floating_ips' was unexpected)"),
        ({"quota_set": {"injected_files": 1}}, "2.57", "('injected_files' was unexpected)"),
        ({"quota_set": {"force": "maybe"}}, "2.1", "Invalid input for field/attribute force."),
        ({"instances": 1}, "2.1", "'quota_set' is a required property"),
    ],
)
def test_bad_updates_are_refused_and_change_nothing(admin_api, demo, body, version, message):
    response = admin_api.put(f"/os-quota-sets/{demo}", body, version=version)
    assert response.status_code == 400
    assert message in response.json()["badRequest"]["message"]
    assert admin_api.get(f"/os-quota-sets/{demo}").json()["quota_set"]["instances"] == 10


def test_unknown_query_parameters_from_275_and_unknown_projects(admin_api, demo, settings):
    assert admin_api.get(f"/os-quota-sets/{demo}?foo=1", version="2.74").status_code == 200
    response = admin_api.get(f"/os-quota-sets/{demo}?foo=1", version="2.75")
    assert response.status_code == 400
    assert "Additional properties are not allowed ('foo' was unexpected)" in response.json()["badRequest"]["message"]
    response = admin_api.get("/os-quota-sets/no-such-project")
    assert response.json() == {
        "badRequest": {"code": 400, "message": "Project ID no-such-project is not a valid project."}
    }


@pytest.mark.parametrize(
    "version, hidden",
    [
        ("2.1", {"server_groups", "server_group_members"}),
        ("2.50", NETWORK),
        ("2.57", NETWORK | PERSONALITY),
    ],
)
def test_quota_classes_per_microversion(admin_api, version, hidden):
    response = admin_api.get("/os-quota-class-sets/default", version=version)
    assert response.json() == {"quota_class_set": {"id": "default", **without(ALL_DEFAULTS, hidden)}}


def test_the_default_class_sets_everyones_defaults(admin_api, member_api, demo):
    response = admin_api.put(
        "/os-quota-class-sets/default", {"quota_class_set": {"instances": 3, "server_groups": 2}}, version="2.50"
    )
    assert response.status_code == 200, response.content
    assert "id" not in response.json()["quota_class_set"]
    assert response.json()["quota_class_set"]["instances"] == 3
    assert member_api.get(f"/os-quota-sets/{demo}/defaults").json()["quota_set"]["instances"] == 3
    assert member_api.get(f"/os-quota-sets/{demo}").json()["quota_set"]["server_groups"] == 2
    # another class is kept, and changes nobody's limits
    admin_api.put("/os-quota-class-sets/gold", {"quota_class_set": {"instances": 50}})
    assert admin_api.get("/os-quota-class-sets/gold").json()["quota_class_set"]["instances"] == 50
    assert member_api.get(f"/os-quota-sets/{demo}").json()["quota_set"]["instances"] == 3
    response = admin_api.put("/os-quota-class-sets/default", {"quota_class_set": {"floating_ips": 1}}, version="2.50")
    assert response.status_code == 400
