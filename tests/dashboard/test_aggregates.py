"""The console's aggregate pages: list, create, detail, edit, metadata, hosts, delete."""

import csv
import io

import pytest

from aggregates.audit.models import Event
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata


@pytest.fixture
def fast_io(system, hosts):
    aggregate = services.create_aggregate(system, "fast-io", "nova")
    services.set_metadata(system, aggregate.id, {"ssd": "true"})
    services.add_host(system, aggregate.id, "node1")
    return aggregate


def detail_url(aggregate):
    return f"/aggregates/{aggregate.id}/"


# --- list ------------------------------------------------------------------------


def test_list_shows_zone_host_count_and_metadata(admin_client, fast_io, other_zone):
    response = admin_client.get("/aggregates/")
    assert response.status_code == 200
    rows = {a.name: a for a in response.context["page"]}
    assert rows["fast-io"].zone == "nova" and rows["fast-io"].host_count == 1
    assert rows["az2-general"].zone == "az2"
    assert b"ssd=true" in response.content


@pytest.mark.parametrize(
    "query, expected",
    [
        ("name=fast", ["fast-io"]),
        ("name=FAST", ["fast-io"]),
        ("zone=az2", ["az2-general"]),
        ("key=ssd", ["fast-io"]),
        ("host=node3", ["az2-general"]),
        ("host=node", ["az2-general", "fast-io"]),
        ("name=nothing", []),
    ],
)
def test_list_filters_on_the_server(admin_client, fast_io, other_zone, query, expected):
    response = admin_client.get(f"/aggregates/?{query}")
    assert [a.name for a in response.context["page"]] == expected


def test_list_sorts_by_host_count_both_ways(admin_client, system, fast_io, other_zone):
    services.add_host(system, other_zone.id, "node2")
    names = [a.name for a in admin_client.get("/aggregates/?sort=-hosts").context["page"]]
    assert names == ["az2-general", "fast-io"]
    names = [a.name for a in admin_client.get("/aggregates/?sort=hosts").context["page"]]
    assert names == ["fast-io", "az2-general"]


def test_list_paginates_and_keeps_filters_in_page_links(admin_client, db):
    Aggregate.objects.bulk_create(Aggregate(name=f"agg-{n:03d}") for n in range(120))
    response = admin_client.get("/aggregates/?name=agg&page=3")
    assert response.context["page"].number == 3 and len(response.context["page"]) == 20
    assert response.context["page"].paginator.count == 120
    assert b'href="?name=agg&amp;page=2"' in response.content


def test_list_queries_do_not_grow_with_aggregates_or_hosts(admin_client, db, django_assert_max_num_queries):
    aggregates = Aggregate.objects.bulk_create(Aggregate(name=f"agg-{n:03d}") for n in range(500))
    AggregateMetadata.objects.bulk_create(
        AggregateMetadata(aggregate=a, key=k, value="v") for a in aggregates for k in ("availability_zone", "ssd")
    )
    AggregateHost.objects.bulk_create(
        AggregateHost(aggregate=a, host=f"h{n}-{a.id}") for a in aggregates for n in range(10)
    )
    with django_assert_max_num_queries(8):
        response = admin_client.get("/aggregates/?sort=-hosts&key=ssd")
    assert response.status_code == 200 and len(response.context["page"]) == 50


def test_csv_export_has_every_filtered_aggregate(admin_client, fast_io, other_zone):
    response = admin_client.get("/aggregates/?format=csv&zone=nova")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["name"], r["availability_zone"], r["hosts"], r["metadata"]) for r in rows] == [
        ("fast-io", "nova", "node1", "availability_zone=nova;ssd=true")
    ]


# --- create ---------------------------------------------------------------------


def test_create_with_zone_and_hosts(admin_client, hosts):
    response = admin_client.post(
        "/aggregates/new/", {"name": "fast-io", "availability_zone": "nova", "hosts": "node1, node2"}
    )
    aggregate = Aggregate.objects.get(name="fast-io")
    assert response.status_code == 302 and response["Location"] == detail_url(aggregate)
    assert services.hosts_of(services.get_aggregate(aggregate.id)) == ["node1", "node2"]
    assert services.availability_zone_of(services.get_aggregate(aggregate.id)) == "nova"
    event = Event.objects.filter(event_type="aggregate.add_host.end").first()
    assert event.username == "console-admin"


def test_create_is_all_or_nothing(admin_client, other_zone):
    """node3 is in az2: the aggregate is not created and node1 was not added anywhere."""
    before = Event.objects.latest("id").id
    response = admin_client.post(
        "/aggregates/new/", {"name": "fast-io", "availability_zone": "nova", "hosts": "node1\nnode3"}
    )
    assert response.status_code == 400
    assert not Aggregate.objects.filter(name="fast-io").exists()
    assert not AggregateHost.objects.filter(host="node1").exists()
    # Only the refusal is left in the audit log.
    assert list(Event.objects.filter(id__gt=before).values_list("event_type", flat=True)) == ["compute.exception"]
    errors = response.context["form"].errors
    assert "availability zone" in errors["hosts"][0] and "node3" in errors["hosts"][0]
    assert b'value="fast-io"' in response.content and b"node1\nnode3" in response.content


def test_create_refuses_an_unknown_host_beside_the_field(admin_client, hosts):
    response = admin_client.post("/aggregates/new/", {"name": "x", "hosts": "node9"})
    assert response.status_code == 400
    assert "Compute host node9 could not be found" in response.context["form"].errors["hosts"][0]
    assert not Aggregate.objects.exists()


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"name": ""}, "name", "This field is required."),
        ({"name": " padded"}, "name", "can not start or end with whitespace"),
        ({"name": "x" * 256}, "name", "is too long"),
        ({"name": "ok", "availability_zone": "a:b"}, "availability_zone", "can not contain ':'"),
        ({"name": "ok", "hosts": "bad/host"}, "hosts", "Invalid input for field/attribute host"),
    ],
)
def test_create_shows_the_api_validation_errors(admin_client, data, field, message):
    response = admin_client.post("/aggregates/new/", data)
    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert not Aggregate.objects.exists()


def test_create_refuses_a_taken_name(admin_client, fast_io):
    response = admin_client.post("/aggregates/new/", {"name": "fast-io"})
    assert response.status_code == 400
    assert "Aggregate fast-io already exists" in response.context["form"].errors["name"][0]
    assert Aggregate.objects.count() == 1


# --- detail --------------------------------------------------------------------------


def test_detail_shows_hosts_metadata_events_and_mirror_state(admin_client, fast_io, make_host):
    node = make_host("node1")
    response = admin_client.get(detail_url(fast_io))
    assert response.status_code == 200
    (row,) = response.context["host_rows"]
    assert row["host"] == "node1" and row["service"].host == "node1"
    assert [n.uuid for n in row["nodes"]] == [node.uuid]
    assert str(node.uuid).encode() in response.content
    # Placement is unreachable in tests: the state is unknown, the add waits in the outbox.
    assert row["mirror"][1] == "unknown: placement unreachable"
    assert "Unable to communicate with the Placement API" in row["mirror"][2] and "pending" in row["mirror"][2]
    assert response.context["metadata"] == {"availability_zone": "nova", "ssd": "true"}
    assert {e.event_type for e in response.context["events"]} >= {"aggregate.create.end", "aggregate.add_host.end"}


def test_detail_queries_stay_bounded_with_many_hosts(admin_client, system, make_host, django_assert_max_num_queries):
    aggregate = services.create_aggregate(system, "big", "az1")
    for n in range(30):
        make_host(f"h{n:02d}")
        AggregateHost.objects.create(aggregate=aggregate, host=f"h{n:02d}")
    # The first page shown may create the service user of the in-process
    # placement client's token (once per deployment): not counted.
    admin_client.get(detail_url(aggregate))
    with django_assert_max_num_queries(25):
        response = admin_client.get(detail_url(aggregate))
    assert len(response.context["host_rows"]) == 30


def test_detail_of_a_missing_aggregate_is_404(admin_client, db):
    assert admin_client.get("/aggregates/999/").status_code == 404


def test_picker_explains_a_zone_conflict_before_submit(admin_client, fast_io, other_zone):
    response = admin_client.get(detail_url(fast_io) + "?host_q=node")
    rows = {r["service"].host: r for r in response.context["picker"]["rows"]}
    assert set(rows) == {"node2", "node3"}
    assert rows["node2"]["reason"] == ""
    assert "node3 is in zone az2 through az2-general" in rows["node3"]["reason"]
    assert b'value="node3" id="pick-node3" disabled' in response.content


def test_picker_fragment_for_live_search(admin_client, fast_io):
    response = admin_client.get(detail_url(fast_io) + "?host_q=node2", HTTP_X_CONSOLE_FRAGMENT="picker")
    assert response.status_code == 200 and b"<html" not in response.content
    assert [r["service"].host for r in response.context["picker"]["rows"]] == ["node2"]


def test_picker_without_a_search_lists_the_hosts_that_can_join(admin_client, fast_io, other_zone):
    response = admin_client.get(detail_url(fast_io))
    assert [r["service"].host for r in response.context["picker"]["rows"]] == ["node2"]
    assert response.context["picker"]["hidden"] == 1
    assert b"1 host(s) held by another zone are not listed" in response.content


def test_picker_warns_about_instances_that_would_change_zone(admin_client, fast_io, make_host):
    make_host("node2", running_vms=3)
    (row,) = admin_client.get(detail_url(fast_io) + "?host_q=node2").context["picker"]["rows"]
    assert "node2 runs 3 instance(s) in the default zone" in row["reason"]
    # The picker tells beforehand what the service then refuses.
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/add/", {"hosts": ["node2"]})
    assert response.status_code == 400 and "already has 3 instance(s)" in str(response.context["hosts_form"].errors)


def test_delete_button_is_disabled_with_the_reason_while_hosts_remain(admin_client, fast_io):
    content = admin_client.get(detail_url(fast_io)).content.decode()
    assert 'disabled title="Remove its 1 host(s) first"' in content
    assert "remove its 1 host(s) first" in content


# --- edit -------------------------------------------------------------------------------


def test_edit_renames_and_rezones(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/edit/", {"name": "fast-io-2", "availability_zone": "az9"})
    assert response.status_code == 302
    aggregate = services.get_aggregate(fast_io.id)
    assert aggregate.name == "fast-io-2" and services.availability_zone_of(aggregate) == "az9"


def test_edit_refuses_a_zone_conflict_and_changes_nothing(admin_client, system, fast_io, other_zone):
    # node1 is in fast-io (nova); put it in a zone-less aggregate, then give that aggregate az2.
    plain = services.create_aggregate(system, "plain", None)
    services.add_host(system, plain.id, "node1")
    response = admin_client.post(f"/aggregates/{plain.id}/edit/", {"name": "renamed", "availability_zone": "az2"})
    assert response.status_code == 400
    assert "already in availability zone(s) ['nova']" in response.context["form"].errors["availability_zone"][0]
    assert Aggregate.objects.get(pk=plain.id).name == "plain"
    assert b'value="renamed"' in response.content


def test_edit_refuses_emptying_the_zone(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/edit/", {"name": "fast-io", "availability_zone": ""})
    assert response.status_code == 400
    assert "can be renamed but not removed" in response.context["form"].errors["availability_zone"][0]


# --- metadata --------------------------------------------------------------------------


def metadata_post(rows):
    data = {"meta-TOTAL_FORMS": str(len(rows)), "meta-INITIAL_FORMS": "0"}
    for index, row in enumerate(rows):
        for name, value in row.items():
            data[f"meta-{index}-{name}"] = value
    return data


def test_metadata_sets_and_unsets_keys(admin_client, fast_io):
    data = metadata_post(
        [{"key": "ssd", "value": "", "remove": "on"}, {"key": "gpu", "value": "true"}, {"key": "", "value": ""}]
    )
    response = admin_client.post(f"/aggregates/{fast_io.id}/metadata/", data)
    assert response.status_code == 302
    assert services.metadata_of(services.get_aggregate(fast_io.id)) == {"availability_zone": "nova", "gpu": "true"}


@pytest.mark.parametrize(
    "row, message",
    [
        ({"key": "bad/key", "value": "1"}, "Invalid input for field/attribute key"),
        ({"key": "k", "value": "v" * 256}, "is too long"),
        ({"key": "", "value": "orphan"}, "A value needs a key."),
    ],
)
def test_metadata_validation_errors_beside_the_row(admin_client, fast_io, row, message):
    response = admin_client.post(f"/aggregates/{fast_io.id}/metadata/", metadata_post([row]))
    assert response.status_code == 400
    assert message in str(response.context["metadata_formset"].errors)
    assert services.metadata_of(services.get_aggregate(fast_io.id)) == {"availability_zone": "nova", "ssd": "true"}


def test_metadata_zone_change_follows_the_zone_rules(admin_client, system, fast_io, other_zone):
    plain = services.create_aggregate(system, "plain", None)
    services.add_host(system, plain.id, "node1")
    response = admin_client.post(
        f"/aggregates/{plain.id}/metadata/",
        metadata_post([{"key": "availability_zone", "value": "az2"}, {"key": "x", "value": "1"}]),
    )
    assert response.status_code == 400
    assert "already in availability zone(s)" in str(response.context["metadata_formset"].non_form_errors())
    assert services.metadata_of(services.get_aggregate(plain.id)) == {}


# --- hosts ------------------------------------------------------------------------------


def test_add_hosts(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/add/", {"hosts": ["node2", "node3"]})
    assert response.status_code == 302
    assert services.hosts_of(services.get_aggregate(fast_io.id)) == ["node1", "node2", "node3"]


def test_add_hosts_is_all_or_nothing_and_explains_the_refusal(admin_client, fast_io, other_zone):
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/add/", {"hosts": ["node2", "node3"]})
    assert response.status_code == 400
    assert "node3 can be in only one availability zone" in str(response.context["hosts_form"].errors)
    assert services.hosts_of(services.get_aggregate(fast_io.id)) == ["node1"]
    assert response.context["picked"] == ["node2", "node3"]
    assert b'value="node2" id="pick-node2" checked' in response.content


def test_add_an_unregistered_host_is_refused(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/add/", {"hosts": ["ghost"]})
    assert response.status_code == 400
    assert "ghost is not one of the available choices" in str(response.context["hosts_form"].errors)


def test_remove_host(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/remove/", {"host": "node1"})
    assert response.status_code == 302 and response["Location"].endswith("#hosts")
    assert services.hosts_of(services.get_aggregate(fast_io.id)) == []


def test_remove_several_hosts_at_once(admin_client, system, fast_io):
    services.add_host(system, fast_io.id, "node2")
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/remove/", {"host": ["node1", "node2"]}, follow=True)
    assert b"Removed node1, node2 from fast-io" in response.content
    assert services.hosts_of(services.get_aggregate(fast_io.id)) == []


def test_removing_several_hosts_is_all_or_nothing(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/remove/", {"host": ["node1", "node3"]}, follow=True)
    assert b"Cannot remove host node3" in response.content
    assert services.hosts_of(services.get_aggregate(fast_io.id)) == ["node1"]
    refusal = Event.objects.filter(event_type="compute.exception").latest("id")
    assert refusal.payload["function_name"] == "remove_hosts_from_aggregate"


def test_remove_without_a_selection(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/remove/", {}, follow=True)
    assert b"Select the hosts to remove first." in response.content


def test_remove_a_host_that_is_not_a_member_shows_the_error(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/hosts/remove/", {"host": "node2"}, follow=True)
    assert b"the host is not a member of it" in response.content


# --- delete -------------------------------------------------------------------------------


def test_delete_is_refused_while_hosts_remain(admin_client, fast_io):
    response = admin_client.post(f"/aggregates/{fast_io.id}/delete/", follow=True)
    assert b"Host aggregate is not empty" in response.content
    assert Aggregate.objects.filter(pk=fast_io.id).exists()


def test_delete_an_empty_aggregate(admin_client, system, fast_io):
    services.remove_host(system, fast_io.id, "node1")
    response = admin_client.post(f"/aggregates/{fast_io.id}/delete/")
    assert response.status_code == 302 and response["Location"] == "/aggregates/"
    assert not Aggregate.objects.filter(pk=fast_io.id).exists()
