"""Every aggregate operation leaves notification-style events in the audit log."""

from aggregates.audit.models import Event


def events_of(response):
    return list(Event.objects.filter(request_id=response.headers["X-OpenStack-Request-ID"]).order_by("id"))


def types(events):
    return [e.event_type for e in events]


def test_create_records_start_and_end_with_user_and_request(admin_api):
    response = admin_api.post("/os-aggregates", {"aggregate": {"name": "a", "availability_zone": "az1"}})
    start, end = events_of(response)
    assert (start.event_type, end.event_type) == ("aggregate.create.start", "aggregate.create.end")
    assert start.payload["id"] is None and start.payload["hosts"] is None
    assert start.payload["metadata"] == {"availability_zone": "az1"}
    agg = response.json()["aggregate"]
    assert end.payload == {
        "id": agg["id"],
        "uuid": start.payload["uuid"],
        "name": "a",
        "hosts": [],
        "metadata": {"availability_zone": "az1"},
    }
    assert end.username == "admin-user" and end.user.username == "admin-user"
    assert end.object_type == "aggregate" and end.object_id == str(agg["id"])


def test_refused_request_leaves_start_and_exception_but_no_end(admin_api):
    admin_api.post("/os-aggregates", {"aggregate": {"name": "dup"}})
    response = admin_api.post("/os-aggregates", {"aggregate": {"name": "dup"}})
    assert response.status_code == 409
    start, failure = events_of(response)
    assert start.event_type == "aggregate.create.start"
    assert failure.event_type == "compute.exception" and failure.priority == "ERROR"
    assert failure.payload["function_name"] == "create_aggregate"
    assert "already exists" in failure.payload["exception_message"]


def test_host_and_metadata_events_carry_before_and_after(admin_api, make_host):
    make_host("node1")
    agg = admin_api.post("/os-aggregates", {"aggregate": {"name": "a"}}).json()["aggregate"]
    url = f"/os-aggregates/{agg['id']}/action"

    add = events_of(admin_api.post(url, {"add_host": {"host": "node1"}}))
    assert types(add) == ["aggregate.add_host.start", "aggregate.add_host.end"]
    assert add[0].payload["hosts"] == [] and add[1].payload["hosts"] == ["node1"]

    meta = events_of(admin_api.post(url, {"set_metadata": {"metadata": {"ssd": "true"}}}))
    assert types(meta) == ["aggregate.update_metadata.start", "aggregate.update_metadata.end"]
    assert meta[0].payload["metadata"] == {} and meta[1].payload["metadata"] == {"ssd": "true"}

    remove = events_of(admin_api.post(url, {"remove_host": {"host": "node1"}}))
    assert types(remove) == ["aggregate.remove_host.start", "aggregate.remove_host.end"]
    assert remove[0].payload["hosts"] == ["node1"] and remove[1].payload["hosts"] == []


def test_put_with_name_and_zone_records_both_pairs(admin_api):
    agg = admin_api.post("/os-aggregates", {"aggregate": {"name": "a"}}).json()["aggregate"]
    response = admin_api.put(f"/os-aggregates/{agg['id']}", {"aggregate": {"name": "b", "availability_zone": "az1"}})
    assert types(events_of(response)) == [
        "aggregate.update_prop.start",
        "aggregate.update_metadata.start",
        "aggregate.update_prop.end",
        "aggregate.update_metadata.end",
    ]


def test_delete_records_identical_snapshots(admin_api):
    agg = admin_api.post("/os-aggregates", {"aggregate": {"name": "a"}}).json()["aggregate"]
    start, end = events_of(admin_api.delete(f"/os-aggregates/{agg['id']}"))
    assert (start.event_type, end.event_type) == ("aggregate.delete.start", "aggregate.delete.end")
    assert start.payload == end.payload and end.object_id == str(agg["id"])


def test_every_refused_operation_keeps_its_start_event(admin_api, make_host):
    make_host("node1")
    a = admin_api.post("/os-aggregates", {"aggregate": {"name": "a", "availability_zone": "az1"}}).json()["aggregate"]
    b = admin_api.post("/os-aggregates", {"aggregate": {"name": "b"}}).json()["aggregate"]
    for agg in (a, b):
        admin_api.post(f"/os-aggregates/{agg['id']}/action", {"add_host": {"host": "node1"}})
    refused = {
        "aggregate.update_metadata.start": admin_api.put(
            f"/os-aggregates/{b['id']}", {"aggregate": {"availability_zone": "az2"}}
        ),
        "aggregate.delete.start": admin_api.delete(f"/os-aggregates/{a['id']}"),
        "aggregate.add_host.start": admin_api.post(f"/os-aggregates/{a['id']}/action", {"add_host": {"host": "node1"}}),
    }
    for start_type, response in refused.items():
        assert response.status_code in (400, 409)
        assert types(events_of(response)) == [start_type, "compute.exception"]
