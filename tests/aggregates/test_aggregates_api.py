"""os-aggregates through HTTP: shapes, every rule of Nova's AggregateAPI, and
Corral's atomicity where Nova is not atomic."""

import pytest

from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
from tests.helpers import fault


@pytest.fixture
def create(admin_api):
    def _create(name, zone=None, version=None):
        body = {"name": name}
        if zone is not None:
            body["availability_zone"] = zone
        response = admin_api.post("/os-aggregates", {"aggregate": body}, version=version)
        assert response.status_code == 200, response.content
        return response.json()["aggregate"]

    return _create


def action(api, aggregate_id, name, arguments, version=None):
    return api.post(f"/os-aggregates/{aggregate_id}/action", {name: arguments}, version=version)


def state():
    """Everything an aggregate request could change."""
    return (
        sorted(Aggregate.objects.values_list("id", "name", "updated_at")),
        sorted(AggregateMetadata.objects.values_list("aggregate_id", "key", "value")),
        sorted(AggregateHost.objects.values_list("aggregate_id", "host")),
    )


# --- create ----------------------------------------------------------------


def test_create_returns_200_without_hosts_and_metadata(create):
    agg = create("fast-io", "az1")
    assert agg["name"] == "fast-io"
    assert agg["availability_zone"] == "az1"
    assert agg["deleted"] is False and agg["deleted_at"] is None
    assert agg["updated_at"] is None
    assert "hosts" not in agg and "metadata" not in agg
    assert "uuid" not in agg
    assert AggregateMetadata.objects.get(aggregate_id=agg["id"]).value == "az1"


def test_create_shows_uuid_from_2_41(create):
    agg = create("with-uuid", version="2.41")
    assert Aggregate.objects.get(pk=agg["id"]).uuid.hex == agg["uuid"].replace("-", "")


def test_create_without_zone_has_null_zone_and_no_metadata(create):
    agg = create("plain")
    assert agg["availability_zone"] is None
    assert not AggregateMetadata.objects.filter(aggregate_id=agg["id"]).exists()


def test_create_with_null_zone_is_accepted(admin_api):
    response = admin_api.post("/os-aggregates", {"aggregate": {"name": "n", "availability_zone": None}})
    assert response.status_code == 200
    assert response.json()["aggregate"]["availability_zone"] is None


def test_create_duplicate_name_is_409(create, admin_api):
    create("dup")
    before = state()
    message = fault(admin_api.post("/os-aggregates", {"aggregate": {"name": "dup"}}), 409, "conflictingRequest")
    assert "Aggregate dup already exists" in message
    assert state() == before


@pytest.mark.parametrize(
    "body, field",
    [
        ({"aggregate": {"name": ""}}, "name"),
        ({"aggregate": {"name": "x" * 256}}, "name"),
        ({"aggregate": {"name": " lead"}}, "name"),
        ({"aggregate": {"name": "trail "}}, "name"),
        ({"aggregate": {"name": "bell\x07"}}, "name"),
        ({"aggregate": {"name": "line\u2028sep"}}, "name"),
        ({"aggregate": {"name": "emoji\U0001f600"}}, "name"),
        ({"aggregate": {"name": 12}}, "name"),
        ({"aggregate": {"name": None}}, "name"),
        ({"aggregate": {"name": "ok", "availability_zone": "has:colon"}}, "availability_zone"),
        ({"aggregate": {"name": "ok", "availability_zone": ""}}, "availability_zone"),
        ({"aggregate": {"name": "ok", "availability_zone": " az"}}, "availability_zone"),
        ({"aggregate": {"name": "ok", "availability_zone": "z" * 256}}, "availability_zone"),
        ({"aggregate": {"name": "ok", "availability_zone": 5}}, "availability_zone"),
        ({"aggregate": {"name": "ok", "hosts": []}}, "aggregate"),
        ({"aggregate": {"availability_zone": "az1"}}, "aggregate"),
        ({"aggregate": "ok"}, "aggregate"),
        ({"aggregate": {"name": "ok"}, "extra": 1}, None),
        ({}, None),
        ([], None),
    ],
)
def test_create_rejects_bad_input_and_changes_nothing(admin_api, body, field):
    before = state()
    message = fault(admin_api.post("/os-aggregates", body), 400, "badRequest")
    if field:
        assert f"Invalid input for field/attribute {field}." in message
    assert state() == before


def test_create_allows_inner_spaces_and_unicode(create):
    assert create("rack 12 — ünïcode")["name"] == "rack 12 — ünïcode"


def test_create_with_malformed_json_is_400(admin_api):
    before = state()
    fault(admin_api.post("/os-aggregates", raw='{"aggregate": {"name": '), 400, "badRequest")
    assert state() == before


def test_create_with_non_json_media_type_is_415(admin_api):
    response = admin_api.client.post(
        "/compute/v2.1/os-aggregates",
        data="name=x",
        content_type="text/plain",
        headers={"X-Auth-Token": admin_api.token},
    )
    fault(response, 415, "badMediaType")
    assert not Aggregate.objects.exists()


# --- list and show ---------------------------------------------------------


def test_list_shows_full_shape_in_id_order(create, admin_api, make_host):
    make_host("node1")
    a = create("a", "az1")
    b = create("b")
    action(admin_api, a["id"], "add_host", {"host": "node1"})
    action(admin_api, b["id"], "set_metadata", {"metadata": {"ssd": "true"}})
    body = admin_api.get("/os-aggregates", version="2.41").json()["aggregates"]
    assert [x["name"] for x in body] == ["a", "b"]
    assert body[0]["hosts"] == ["node1"]
    assert body[0]["metadata"] == {"availability_zone": "az1"}
    assert body[1]["metadata"] == {"ssd": "true"} and body[1]["hosts"] == []
    assert all("uuid" in x for x in body)
    assert all("uuid" not in x for x in admin_api.get("/os-aggregates").json()["aggregates"])


def test_list_ignores_unknown_query_params_before_2_102_and_rejects_them_after(create, admin_api):
    create("a")
    assert admin_api.get("/os-aggregates?foo=1", version="2.101").status_code == 200
    fault(admin_api.get("/os-aggregates?foo=1", version="2.102"), 400, "badRequest")


def test_show(create, admin_api):
    agg = create("a", "az1")
    shown = admin_api.get(f"/os-aggregates/{agg['id']}").json()["aggregate"]
    assert shown["name"] == "a" and shown["metadata"] == {"availability_zone": "az1"} and shown["hosts"] == []


def test_show_unknown_is_404_and_non_integer_is_400(admin_api):
    assert "Aggregate 99 could not be found." in fault(admin_api.get("/os-aggregates/99"), 404, "itemNotFound")
    fault(admin_api.get("/os-aggregates/abc"), 400, "badRequest")


# --- update ----------------------------------------------------------------


def test_rename_persists_updated_at(create, admin_api):
    agg = create("old")
    response = admin_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"name": "new"}})
    assert response.status_code == 200
    body = response.json()["aggregate"]
    assert body["name"] == "new" and body["updated_at"] is not None
    assert admin_api.get(f"/os-aggregates/{agg['id']}").json()["aggregate"]["updated_at"] == body["updated_at"]


def test_rename_strips_edge_whitespace(create, admin_api):
    agg = create("old")
    response = admin_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"name": "  padded  "}})
    assert response.json()["aggregate"]["name"] == "padded"


def test_rename_to_existing_name_is_409(create, admin_api):
    create("taken")
    agg = create("mine")
    before = state()
    fault(admin_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"name": "taken"}}), 409, "conflictingRequest")
    assert state() == before


def test_set_zone_by_put_keeps_other_metadata(create, admin_api):
    agg = create("a", "az1")
    action(admin_api, agg["id"], "set_metadata", {"metadata": {"ssd": "true"}})
    body = admin_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"availability_zone": "az2"}}).json()
    assert body["aggregate"]["metadata"] == {"availability_zone": "az2", "ssd": "true"}
    assert body["aggregate"]["availability_zone"] == "az2"


def test_put_null_zone_is_refused(create, admin_api):
    agg = create("a", "az1")
    message = fault(
        admin_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"availability_zone": None}}), 400, "badRequest"
    )
    assert f"Cannot update aggregate {agg['id']}" in message
    assert "does not support empty named availability zone" in message


def test_put_zone_that_splits_a_host_across_zones_is_400(create, admin_api, make_host):
    make_host("node1")
    a = create("a", "az1")
    b = create("b")
    action(admin_api, a["id"], "add_host", {"host": "node1"})
    action(admin_api, b["id"], "add_host", {"host": "node1"})
    before = state()
    message = fault(
        admin_api.put(f"/os-aggregates/{b['id']}", {"aggregate": {"availability_zone": "az2"}}), 400, "badRequest"
    )
    assert "One or more hosts already in availability zone(s) ['az1']" in message
    assert state() == before
    # The same zone is fine.
    assert admin_api.put(f"/os-aggregates/{b['id']}", {"aggregate": {"availability_zone": "az1"}}).status_code == 200


def test_put_is_atomic_when_the_zone_check_fails(create, admin_api, make_host):
    """Nova saves the rename before the zone check; Corral changes nothing."""
    make_host("node1")
    a = create("a", "az1")
    b = create("b")
    action(admin_api, a["id"], "add_host", {"host": "node1"})
    action(admin_api, b["id"], "add_host", {"host": "node1"})
    before = state()
    response = admin_api.put(
        f"/os-aggregates/{b['id']}", {"aggregate": {"name": "renamed", "availability_zone": "az9"}}
    )
    fault(response, 400, "badRequest")
    assert state() == before
    assert Aggregate.objects.get(pk=b["id"]).name == "b"


def test_zone_cannot_change_while_hosts_have_instances(create, admin_api, make_host):
    make_host("busy")
    agg = create("a", "az1")
    action(admin_api, agg["id"], "add_host", {"host": "busy"})
    make_host("busy", running_vms=2)
    message = fault(
        admin_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"availability_zone": "az2"}}), 400, "badRequest"
    )
    assert "contain instances" in message
    # Re-setting the same name is fine.
    assert admin_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"availability_zone": "az1"}}).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"aggregate": {}},
        {"aggregate": {"name": "x", "metadata": {}}},
        {"aggregate": {"name": "   "}},
        {"aggregate": {"name": ""}},
        {"aggregate": {"availability_zone": "a:b"}},
        {"aggregate": {"availability_zone": ""}},
        {"aggregate": {"name": ["x"]}},
        {"name": "x"},
    ],
)
def test_update_rejects_bad_input(create, admin_api, body):
    agg = create("a", "az1")
    before = state()
    fault(admin_api.put(f"/os-aggregates/{agg['id']}", body), 400, "badRequest")
    assert state() == before


def test_update_unknown_is_404(admin_api):
    fault(admin_api.put("/os-aggregates/42", {"aggregate": {"name": "x"}}), 404, "itemNotFound")


# --- delete ----------------------------------------------------------------


def test_delete_empty_aggregate_returns_200_with_empty_body(create, admin_api):
    agg = create("a", "az1")
    response = admin_api.delete(f"/os-aggregates/{agg['id']}")
    assert response.status_code == 200 and response.content in (b"", b"null")
    assert not Aggregate.objects.exists() and not AggregateMetadata.objects.exists()


def test_delete_with_hosts_is_400_and_keeps_everything(create, admin_api, make_host):
    make_host("node1")
    agg = create("a")
    action(admin_api, agg["id"], "add_host", {"host": "node1"})
    before = state()
    message = fault(admin_api.delete(f"/os-aggregates/{agg['id']}"), 400, "badRequest")
    assert "Host aggregate is not empty" in message and "node1" in message
    assert state() == before


def test_delete_unknown_is_404_and_bad_id_400(admin_api):
    fault(admin_api.delete("/os-aggregates/7"), 404, "itemNotFound")
    fault(admin_api.delete("/os-aggregates/seven"), 400, "badRequest")


# --- actions: add_host -----------------------------------------------------


def test_add_host(create, admin_api, make_host):
    make_host("node1")
    agg = create("a", "az1")
    response = action(admin_api, agg["id"], "add_host", {"host": "node1"})
    assert response.status_code == 200
    body = response.json()["aggregate"]
    assert body["hosts"] == ["node1"] and body["metadata"] == {"availability_zone": "az1"}
    assert "uuid" not in body  # the SDK sends actions without a microversion


def test_add_unknown_host_is_404(create, admin_api, make_host):
    make_host("node1")
    agg = create("a")
    message = fault(action(admin_api, agg["id"], "add_host", {"host": "nodeX"}), 404, "itemNotFound")
    assert "Compute host nodeX could not be found." in message
    # Host names match exactly, case included.
    fault(action(admin_api, agg["id"], "add_host", {"host": "NODE1"}), 404, "itemNotFound")
    assert not AggregateHost.objects.exists()


def test_add_host_to_unknown_aggregate_is_404(admin_api, make_host):
    make_host("node1")
    assert "Aggregate 5 could not be found." in fault(
        action(admin_api, 5, "add_host", {"host": "node1"}), 404, "itemNotFound"
    )


def test_add_host_twice_is_409(create, admin_api, make_host):
    make_host("node1")
    agg = create("a")
    action(admin_api, agg["id"], "add_host", {"host": "node1"})
    message = fault(action(admin_api, agg["id"], "add_host", {"host": "node1"}), 409, "conflictingRequest")
    assert f"Aggregate {agg['id']} already has host node1." in message


def test_host_may_be_in_many_aggregates_but_one_zone(create, admin_api, make_host):
    make_host("node1")
    az1 = create("a", "az1")
    az1_again = create("a2", "az1")
    plain = create("plain")
    az2 = create("b", "az2")
    for agg in (az1, az1_again, plain):
        assert action(admin_api, agg["id"], "add_host", {"host": "node1"}).status_code == 200
    before = state()
    message = fault(action(admin_api, az2["id"], "add_host", {"host": "node1"}), 409, "conflictingRequest")
    assert f"Cannot add host to aggregate {az2['id']}" in message
    assert "already in availability zone(s) ['az1']" in message
    assert state() == before


def test_add_host_with_instances_to_a_zone_is_refused(create, admin_api, make_host):
    make_host("busy", running_vms=3)
    make_host("idle")
    agg = create("a", "az1")
    message = fault(action(admin_api, agg["id"], "add_host", {"host": "busy"}), 409, "conflictingRequest")
    assert "would change from 'None' to 'az1'" in message and "3 instance(s)" in message
    assert action(admin_api, agg["id"], "add_host", {"host": "idle"}).status_code == 200
    # A zone-less aggregate does not move the host.
    assert action(admin_api, create("plain")["id"], "add_host", {"host": "busy"}).status_code == 200


@pytest.mark.parametrize(
    "arguments",
    [{}, {"host": ""}, {"host": "bad host"}, {"host": "x" * 256}, {"host": 1}, {"host": "a", "x": 1}, "node1"],
)
def test_add_host_rejects_bad_input(create, admin_api, make_host, arguments):
    make_host("node1")
    agg = create("a")
    fault(action(admin_api, agg["id"], "add_host", arguments), 400, "badRequest")
    assert not AggregateHost.objects.exists()


# --- actions: remove_host --------------------------------------------------


def test_remove_host(create, admin_api, make_host):
    make_host("node1")
    agg = create("a", "az1")
    action(admin_api, agg["id"], "add_host", {"host": "node1"})
    response = action(admin_api, agg["id"], "remove_host", {"host": "node1"})
    assert response.status_code == 200 and response.json()["aggregate"]["hosts"] == []


def test_remove_host_404s_share_nova_text(create, admin_api, make_host):
    make_host("node1")
    agg = create("a")
    not_member = fault(action(admin_api, agg["id"], "remove_host", {"host": "node1"}), 404, "itemNotFound")
    unknown_host = fault(action(admin_api, agg["id"], "remove_host", {"host": "ghost"}), 404, "itemNotFound")
    unknown_agg = fault(action(admin_api, 999, "remove_host", {"host": "node1"}), 404, "itemNotFound")
    assert not_member.startswith(f"Cannot remove host node1 in aggregate {agg['id']}")
    assert unknown_host.startswith(f"Cannot remove host ghost in aggregate {agg['id']}")
    assert unknown_agg.startswith("Cannot remove host node1 in aggregate 999")


def test_remove_host_with_instances_from_its_zone_is_409(create, admin_api, make_host):
    make_host("busy")
    agg = create("a", "az1")
    action(admin_api, agg["id"], "add_host", {"host": "busy"})
    make_host("busy", running_vms=1)  # the agent now reports an instance
    before = state()
    message = fault(action(admin_api, agg["id"], "remove_host", {"host": "busy"}), 409, "conflictingRequest")
    assert "would change from 'az1' to 'None'" in message
    assert state() == before
    # With a second aggregate of the same zone the host keeps its zone.
    other = create("b", "az1")
    action(admin_api, other["id"], "add_host", {"host": "busy"})
    assert action(admin_api, agg["id"], "remove_host", {"host": "busy"}).status_code == 200


# --- actions: set_metadata -------------------------------------------------


def test_set_metadata_merges_and_null_deletes(create, admin_api):
    agg = create("a", "az1")
    action(admin_api, agg["id"], "set_metadata", {"metadata": {"ssd": "true", "gpu": "false"}})
    response = action(admin_api, agg["id"], "set_metadata", {"metadata": {"gpu": None, "missing": None, "x": "1"}})
    assert response.status_code == 200
    body = response.json()["aggregate"]
    assert body["metadata"] == {"availability_zone": "az1", "ssd": "true", "x": "1"}
    assert body["updated_at"] is not None


def test_set_metadata_with_empty_dict_is_a_no_op(create, admin_api):
    agg = create("a", "az1")
    response = action(admin_api, agg["id"], "set_metadata", {"metadata": {}})
    assert response.status_code == 200 and response.json()["aggregate"]["metadata"] == {"availability_zone": "az1"}


def test_set_metadata_cannot_remove_zone(create, admin_api):
    agg = create("a", "az1")
    message = fault(
        action(admin_api, agg["id"], "set_metadata", {"metadata": {"availability_zone": None}}), 400, "badRequest"
    )
    assert f"Cannot update metadata of aggregate {agg['id']}" in message
    assert AggregateMetadata.objects.get(aggregate_id=agg["id"]).value == "az1"


def test_set_metadata_zone_conflict_is_400(create, admin_api, make_host):
    make_host("node1")
    a = create("a", "az1")
    b = create("b")
    action(admin_api, a["id"], "add_host", {"host": "node1"})
    action(admin_api, b["id"], "add_host", {"host": "node1"})
    before = state()
    message = fault(
        action(admin_api, b["id"], "set_metadata", {"metadata": {"availability_zone": "az2", "ssd": "true"}}),
        400,
        "badRequest",
    )
    assert "One or more hosts already in availability zone(s) ['az1']" in message
    assert state() == before


def test_set_metadata_zone_with_colon_is_refused(create, admin_api):
    """Nova skips this check in set_metadata; Corral never lets ':' into a zone name."""
    agg = create("a")
    fault(action(admin_api, agg["id"], "set_metadata", {"metadata": {"availability_zone": "a:b"}}), 400, "badRequest")
    assert not AggregateMetadata.objects.exists()


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"metadata": None},
        {"metadata": []},
        {"metadata": {"bad/key": "v"}},
        {"metadata": {"": "v"}},
        {"metadata": {"k" * 256: "v"}},
        {"metadata": {"k": "v" * 256}},
        {"metadata": {"k": 5}},
        {"metadata": {"k": "v"}, "other": 1},
    ],
)
def test_set_metadata_rejects_bad_input(create, admin_api, arguments):
    agg = create("a")
    before = state()
    fault(action(admin_api, agg["id"], "set_metadata", arguments), 400, "badRequest")
    assert state() == before


# --- the action endpoint itself -------------------------------------------


def test_unknown_action_is_400(create, admin_api):
    agg = create("a")
    message = fault(action(admin_api, agg["id"], "explode", {}), 400, "badRequest")
    assert message == "There is no such action: explode"


def test_action_body_needs_exactly_one_key(create, admin_api):
    agg = create("a")
    body = {"add_host": {"host": "x"}, "remove_host": {"host": "x"}}
    fault(admin_api.post(f"/os-aggregates/{agg['id']}/action", body), 400, "badRequest")
    fault(admin_api.post(f"/os-aggregates/{agg['id']}/action", {}), 400, "badRequest")
    fault(admin_api.post(f"/os-aggregates/{agg['id']}/action", raw="[1,"), 400, "badRequest")


def test_action_on_non_integer_id_is_400(admin_api):
    fault(action(admin_api, "x", "add_host", {"host": "node1"}), 400, "badRequest")


# --- permissions -----------------------------------------------------------


def test_reader_can_read_but_not_write(create, reader_api):
    agg = create("a")
    assert reader_api.get("/os-aggregates").status_code == 200
    assert reader_api.get(f"/os-aggregates/{agg['id']}").status_code == 200
    before = state()
    message = fault(reader_api.post("/os-aggregates", {"aggregate": {"name": "r"}}), 403, "forbidden")
    assert "os_compute_api:os-aggregates:create" in message
    fault(reader_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"name": "r"}}), 403, "forbidden")
    fault(reader_api.delete(f"/os-aggregates/{agg['id']}"), 403, "forbidden")
    fault(action(reader_api, agg["id"], "set_metadata", {"metadata": {"a": "b"}}), 403, "forbidden")
    assert state() == before


def test_member_cannot_see_aggregates(member_api):
    fault(member_api.get("/os-aggregates"), 403, "forbidden")


def test_no_token_or_bad_token_is_401(anon_api, create):
    fault(anon_api.get("/os-aggregates"), 401, "unauthorized")
    anon_api.token = "not-a-token"
    fault(anon_api.get("/os-aggregates"), 401, "unauthorized")
    fault(anon_api.post("/os-aggregates", {"aggregate": {"name": "x"}}), 401, "unauthorized")
