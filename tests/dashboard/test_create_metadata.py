"""Metadata on the aggregate create form: key=value lines, checked by the
compute API's set_metadata rules, created with the aggregate and its hosts
in one transaction."""

import pytest

from aggregates.audit.models import Event
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate, AggregateMetadata


def test_create_with_metadata_lines(admin_client, hosts):
    response = admin_client.post(
        "/aggregates/new/",
        {
            "name": "fast-io",
            "availability_zone": "az1",
            "hosts": "node1",
            "metadata": "ssd=true\r\n\r\n  \ngpu = a100\n",
        },
    )
    aggregate = Aggregate.objects.get(name="fast-io")
    assert response.status_code == 302 and response["Location"] == f"/aggregates/{aggregate.id}/"
    assert services.metadata_of(services.get_aggregate(aggregate.id)) == {
        "availability_zone": "az1",
        "ssd": "true",
        "gpu": "a100",
    }
    assert services.hosts_of(services.get_aggregate(aggregate.id)) == ["node1"]
    detail = admin_client.get(response["Location"]).content.decode()
    assert "ssd" in detail and "a100" in detail
    assert "metadata gpu, ssd" in detail or "metadata ssd, gpu" in detail


def test_a_value_may_hold_an_equals_sign_and_be_empty(admin_client, db):
    admin_client.post("/aggregates/new/", {"name": "x", "metadata": "filter=a=b\nempty="})
    assert services.metadata_of(Aggregate.objects.get(name="x")) == {"filter": "a=b", "empty": ""}


@pytest.mark.parametrize(
    "text, message",
    [
        ("ssd=true\nno equals sign", "Line 2 (no equals sign): write it as key=value."),
        (
            "bad/key=1",
            "Line 1 (bad/key=1): Invalid input for field/attribute metadata. Value: {'bad/key': '1'}. "
            "'bad/key' does not match any of the regexes",
        ),
        ("=1", "Line 1 (=1): Invalid input for field/attribute metadata"),
        ("k=" + "v" * 256, "Line 1 (k=vvvvv"),
        ("ssd=1\n\nssd=2", "Line 3 (ssd=2): key ssd appears twice."),
        ("availability_zone=az9", "Line 1 (availability_zone=az9): set the zone in the Availability zone field"),
    ],
)
def test_metadata_lines_are_checked_by_the_api_rules(admin_client, db, text, message):
    response = admin_client.post("/aggregates/new/", {"name": "x", "metadata": text})
    assert response.status_code == 400
    errors = " ".join(response.context["form"].errors["metadata"])
    assert message in errors
    assert not Aggregate.objects.exists() and not AggregateMetadata.objects.exists()


def test_a_too_long_value_gets_the_api_message(admin_client, db):
    response = admin_client.post("/aggregates/new/", {"name": "x", "metadata": "k=" + "v" * 256})
    assert "is too long" in response.context["form"].errors["metadata"][0]


def test_every_bad_line_is_named(admin_client, db):
    response = admin_client.post("/aggregates/new/", {"name": "x", "metadata": "one\nok=1\nthree"})
    errors = response.context["form"].errors["metadata"]
    assert [e.split(" (")[0] for e in errors] == ["Line 1", "Line 3"]


def test_aggregate_zone_metadata_and_hosts_are_created_together_or_not_at_all(admin_client, other_zone):
    """node3 is in az2: neither the aggregate nor its metadata is created."""
    before = Event.objects.latest("id").id
    response = admin_client.post(
        "/aggregates/new/", {"name": "fast-io", "availability_zone": "az1", "hosts": "node3", "metadata": "ssd=true"}
    )
    assert response.status_code == 400
    assert not Aggregate.objects.filter(name="fast-io").exists()
    assert not AggregateMetadata.objects.filter(key="ssd").exists()
    assert list(Event.objects.filter(id__gt=before).values_list("event_type", flat=True)) == ["compute.exception"]
    error = response.context["form"].errors["hosts"][0]
    assert "Nothing was created" in error and "metadata" in error
    assert "ssd=true" in response.content.decode()


def test_the_service_sets_metadata_by_set_metadata_rules_in_the_same_transaction(system, other_zone):
    """A zone given as metadata follows the zone rules: refused, nothing is left."""
    from aggregates.errors import ServiceError

    with pytest.raises(ServiceError):
        services.create_aggregate_with_hosts(system, "agg", None, ["node3"], {"availability_zone": "az1", "k": "v"})
    assert not Aggregate.objects.filter(name="agg").exists()
    aggregate = services.create_aggregate_with_hosts(system, "agg", "az1", ["node1"], {"k": "v"})
    assert services.metadata_of(aggregate) == {"availability_zone": "az1", "k": "v"}
    assert Event.objects.filter(event_type="aggregate.update_metadata.end", object_id=str(aggregate.id)).exists()
