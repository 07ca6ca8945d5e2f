"""The reads every nova-compute sends for each of its providers once a
minute (its inventories, allocations, aggregates and traits): at the size
of a large region the bulk of placement's requests. Each is one statement
(the provider and its rows together), and answers as before: the rows in
upstream's order, the provider's generation, Last-Modified from the newest
row, 404 for an unknown provider."""

from email.utils import parsedate_to_datetime

import pytest

from .conftest import new_uuid
from .test_write_paths import statements

READS = ("inventories", "allocations", "aggregates", "traits")


@pytest.fixture
def provider(placement):
    placement.put("/traits/CUSTOM_GOLD")
    aggregates = sorted([new_uuid(), new_uuid()])
    rp = placement.provider(
        "cn1",
        inventory={"VCPU": {"total": 16, "allocation_ratio": 4.0}, "MEMORY_MB": {"total": 65536, "reserved": 512}},
        traits=["HW_CPU_X86_AVX2", "CUSTOM_GOLD"],
        aggregates=aggregates,
    )
    small, big = new_uuid(), new_uuid()
    assert placement.allocate(big, {rp: {"VCPU": 4, "MEMORY_MB": 1024}}).status_code == 204
    assert placement.allocate(small, {rp: {"VCPU": 1, "MEMORY_MB": 2048}}).status_code == 204
    return rp, aggregates, small, big


@pytest.mark.parametrize("what", READS)
def test_each_read_is_one_statement(placement, provider, what):
    rp = provider[0]
    with statements() as executed:
        assert placement.get(f"/resource_providers/{rp}/{what}").status_code == 200
    assert len(executed) == 1, executed


def test_the_reads_answer_the_rows_in_upstreams_order_with_the_generation(placement, provider):
    rp, aggregates, small, big = provider
    generation = placement.get(f"/resource_providers/{rp}").json()["generation"]

    inventories = placement.get(f"/resource_providers/{rp}/inventories").json()
    assert inventories["resource_provider_generation"] == generation
    assert list(inventories["inventories"]) == ["VCPU", "MEMORY_MB"]  # resource class id order
    assert inventories["inventories"]["VCPU"] == {
        "total": 16,
        "reserved": 0,
        "min_unit": 1,
        "max_unit": 2147483647,
        "step_size": 1,
        "allocation_ratio": 4.0,
    }
    assert inventories["inventories"]["MEMORY_MB"]["reserved"] == 512

    allocations = placement.get(f"/resource_providers/{rp}/allocations").json()
    assert allocations["resource_provider_generation"] == generation
    assert allocations["allocations"] == {
        small: {"resources": {"VCPU": 1, "MEMORY_MB": 2048}, "consumer_generation": 1},
        big: {"resources": {"VCPU": 4, "MEMORY_MB": 1024}, "consumer_generation": 1},
    }
    assert list(allocations["allocations"]) == [small, big]  # by class, then used: VCPU 1 before VCPU 4
    before_1_28 = placement.get(f"/resource_providers/{rp}/allocations", version="1.27").json()
    assert before_1_28["allocations"][big] == {"resources": {"VCPU": 4, "MEMORY_MB": 1024}}

    assert placement.get(f"/resource_providers/{rp}/aggregates").json() == {
        "aggregates": aggregates,
        "resource_provider_generation": generation,
    }
    traits = placement.get(f"/resource_providers/{rp}/traits").json()
    assert traits == {"traits": ["HW_CPU_X86_AVX2", "CUSTOM_GOLD"], "resource_provider_generation": generation}


def test_a_provider_with_none_of_them_answers_empty_lists(placement):
    rp = placement.provider("bare")
    for what, empty in (("inventories", {}), ("allocations", {}), ("aggregates", []), ("traits", [])):
        body = placement.get(f"/resource_providers/{rp}/{what}").json()
        assert body == {what: empty, "resource_provider_generation": 0}, what


def test_last_modified_is_the_newest_row_s_change(placement, provider):
    rp = provider[0]
    first = placement.get(f"/resource_providers/{rp}/allocations")
    assert placement.allocate(new_uuid(), {rp: {"VCPU": 2}}).status_code == 204
    second = placement.get(f"/resource_providers/{rp}/allocations")
    assert parsedate_to_datetime(second["Last-Modified"]) >= parsedate_to_datetime(first["Last-Modified"])
    for what in ("inventories", "traits"):
        answer = placement.get(f"/resource_providers/{rp}/{what}")
        assert parsedate_to_datetime(answer["Last-Modified"]).tzinfo is not None, what
        assert answer["Cache-Control"] == "no-cache", what


@pytest.mark.parametrize("what", READS)
def test_an_unknown_provider_is_a_404_naming_it(placement, what):
    missing = new_uuid()
    answer = placement.get(f"/resource_providers/{missing}/{what}")
    assert answer.status_code == 404
    assert missing in answer.json()["errors"][0]["detail"]
