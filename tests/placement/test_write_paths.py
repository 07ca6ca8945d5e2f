"""The write paths a cloud runs all day (claims, consumer replacements,
aggregate updates): what they may do to an over-capacity provider, the
provider generations they bump, and how many queries they take (each is a
round trip to the database; a baseline may go down, raising one needs a
reason in its commit)."""

from contextlib import contextmanager

import pytest
from django.db import connection

from .conftest import new_uuid


def error(response):
    return response.json()["errors"][0]


def generation(placement, rp):
    return placement.get(f"/resource_providers/{rp}").json()["generation"]


def test_a_provider_over_capacity_lets_its_consumers_shrink_but_not_grow(placement):
    rp = placement.provider("cn1", inventory={"VCPU": 8})
    consumer = new_uuid()
    assert placement.allocate(consumer, {rp: {"VCPU": 6}}).status_code == 204
    placement.set_inventory(rp, {"VCPU": 4})  # now 6 used of 4

    grow = placement.allocate(consumer, {rp: {"VCPU": 7}}, generation=1)
    assert grow.status_code == 409 and "exceed the capacity" in error(grow)["detail"]
    newcomer = placement.allocate(new_uuid(), {rp: {"VCPU": 1}})
    assert newcomer.status_code == 409 and "exceed the capacity" in error(newcomer)["detail"]
    assert placement.allocate(consumer, {rp: {"VCPU": 5}}, generation=1).status_code == 204
    assert placement.get(f"/resource_providers/{rp}/usages").json()["usages"] == {"VCPU": 5}


def test_emptying_a_consumer_bumps_the_providers_it_leaves(placement):
    left = placement.provider("left", inventory={"VCPU": 4})
    other = placement.provider("other", inventory={"VCPU": 4})
    consumer = new_uuid()
    assert placement.allocate(consumer, {left: {"VCPU": 1}}).status_code == 204
    before = generation(placement, left), generation(placement, other)
    body = {consumer: {"allocations": {}, "project_id": "proj", "user_id": "user", "consumer_generation": 1}}
    assert placement.post("/allocations", body, version="1.28").status_code == 204
    assert (generation(placement, left), generation(placement, other)) == (before[0] + 1, before[1])
    assert placement.get(f"/allocations/{consumer}").json()["allocations"] == {}


# The most statements each request may execute on either database; the
# test's own transaction turns each write's begin and commit into a
# savepoint and its release, counted here.
# (A new consumer before 1.28, whose request has no consumer generation,
# is looked for, then created: one more than from 1.28. Each write counts
# what its providers use on their inventories: one update.)
CLAIM_QUERIES = 9
REPLACE_QUERIES = 9
AGGREGATES_GET_QUERIES = 1
AGGREGATES_PUT_QUERIES = 5


@contextmanager
def statements():
    """The SQL of every statement executed inside the block."""
    executed = []

    def record(execute, sql, params, many, context):
        executed.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield executed


def put_allocations(placement, consumer, resources, version, generation):
    """PUT /allocations/{consumer} as a client of ``version`` sends it
    (consumer generations from 1.28, consumer types from 1.38)."""
    body = {"allocations": resources, "project_id": "proj", "user_id": "user"}
    if version >= (1, 28):
        body["consumer_generation"] = generation
    if version >= (1, 38):
        body["consumer_type"] = "INSTANCE"
    return placement.put(f"/allocations/{consumer}", body, version=f"{version[0]}.{version[1]}")


@pytest.mark.parametrize("version", [(1, 39), (1, 12)])
def test_writes_take_a_fixed_handful_of_queries(placement, version):
    rp = placement.provider("cn1", inventory={"VCPU": 64, "MEMORY_MB": 65536})
    placement.allocate(new_uuid(), {rp: {"VCPU": 1}})  # the owner rows exist, as in a running cloud
    consumer = new_uuid()
    with statements() as claim:
        claimed = put_allocations(
            placement, consumer, {rp: {"resources": {"VCPU": 1, "MEMORY_MB": 512}}}, version, None
        )
        assert claimed.status_code == 204
    with statements() as replace:
        replaced = put_allocations(placement, consumer, {rp: {"resources": {"VCPU": 2, "MEMORY_MB": 512}}}, version, 1)
        assert replaced.status_code == 204
    assert placement.get(f"/allocations/{consumer}").json()["allocations"][rp]["resources"] == {
        "VCPU": 2,
        "MEMORY_MB": 512,
    }
    assert len(claim) <= CLAIM_QUERIES, claim
    assert len(replace) <= REPLACE_QUERIES, replace

    aggregate = new_uuid()
    body = {"aggregates": [aggregate], "resource_provider_generation": generation(placement, rp)}
    assert placement.put(f"/resource_providers/{rp}/aggregates", body).status_code == 200
    with statements() as read:
        current = placement.get(f"/resource_providers/{rp}/aggregates", version="1.19").json()
    with statements() as write:
        body = {"aggregates": [], "resource_provider_generation": current["resource_provider_generation"]}
        assert placement.put(f"/resource_providers/{rp}/aggregates", body, version="1.19").status_code == 200
    assert current["aggregates"] == [aggregate]
    assert len(read) <= AGGREGATES_GET_QUERIES, read
    assert len(write) <= AGGREGATES_PUT_QUERIES, write
