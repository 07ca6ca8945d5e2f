"""Placement's services, one module per resource (as placement/api/): each
write to a provider's inventories, aggregates or traits still locks the
provider, compares the generation it is given and bumps it."""

import uuid

import pytest

from placement import candidates, errors
from placement.models import ResourceProvider
from placement.services import aggregates, inventories, provider_reads, provider_traits, providers, traits

VCPU = {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1, "allocation_ratio": 1.0}


@pytest.fixture
def rp(db):
    return providers.create_provider("rp1", str(uuid.uuid4()))


def generation(provider):
    return ResourceProvider.objects.get(pk=provider.pk).generation


def test_the_candidate_engine_filters_by_aggregate_with_the_providers_service():
    assert candidates.providers_in_aggregates is providers.providers_in_aggregates


def test_inventory_writes_bump_the_generation_and_refuse_a_stale_one(rp):
    inventories.create_inventory(rp.uuid, "VCPU", VCPU, False)
    assert generation(rp) == 1
    inventories.set_inventories(rp.uuid, 1, {"VCPU": {**VCPU, "total": 16}}, False)
    assert generation(rp) == 2
    with pytest.raises(errors.Conflict) as stale:
        inventories.set_inventories(rp.uuid, 1, {"VCPU": VCPU}, False)
    assert stale.value.code == errors.CONCURRENT_UPDATE
    assert [i.total for i in inventories.provider_inventories(rp)] == [16]
    inventories.delete_inventories(rp.uuid)
    assert generation(rp) == 3 and inventories.provider_inventories(rp) == []


def test_aggregate_writes_bump_the_generation_only_when_given_one(rp):
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    aggregates.set_provider_aggregates(rp.uuid, [first])
    assert generation(rp) == 0
    aggregates.set_provider_aggregates(rp.uuid, [first, second], generation=0)
    assert generation(rp) == 1
    assert sorted(provider_reads.aggregates_of(rp.uuid)[1]) == sorted([first, second])
    assert providers.providers_in_aggregates([{second}]) == {rp.id}
    with pytest.raises(errors.Conflict):
        aggregates.set_provider_aggregates(rp.uuid, [], generation=0)


def test_trait_writes_bump_the_generation_and_refuse_unknown_traits(rp):
    traits.ensure_trait("CUSTOM_GOLD")
    provider_traits.set_provider_traits(rp.uuid, 0, ["CUSTOM_GOLD"])
    assert generation(rp) == 1
    assert provider_reads.traits_of(rp.uuid)[1] == ["CUSTOM_GOLD"]
    with pytest.raises(errors.Invalid, match="No such trait CUSTOM_NOPE"):
        provider_traits.set_provider_traits(rp.uuid, 1, ["CUSTOM_NOPE"])
    provider_traits.delete_provider_traits(rp.uuid)
    assert generation(rp) == 2 and provider_reads.traits_of(rp.uuid)[1] == []


def test_writes_to_an_unknown_provider_are_404(db):
    missing = str(uuid.uuid4())
    for write in (
        lambda: inventories.create_inventory(missing, "VCPU", VCPU, False),
        lambda: aggregates.set_provider_aggregates(missing, []),
        lambda: provider_traits.delete_provider_traits(missing),
    ):
        with pytest.raises(errors.NotFound):
            write()
