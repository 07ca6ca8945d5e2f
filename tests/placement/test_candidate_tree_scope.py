"""With nested providers, GET /allocation_candidates reads only the trees a
request can use (those with a provider in its aggregates, or with its
required traits, or served by a sharing provider of its aggregates): the
answers must be exactly those of a search that reads every provider."""

import random

import pytest

from placement.candidates import GroupSearch

AGGS = [f"5b0a4a8c-0d1e-4f5f-9d0e-00000000000{n}" for n in range(4)]


@pytest.fixture
def nested_cloud(placement):
    """Twelve compute trees: roots in aggregates, some children in others,
    GPU children with a trait, a sharing disk provider in one aggregate."""
    rng = random.Random(3)
    placement.put("/traits/CUSTOM_GPU_FAST")
    for n in range(12):
        root_aggs = [AGGS[n % 3]] if n % 4 else []
        root = placement.provider(
            f"cn{n}",
            inventory={"VCPU": 8, "MEMORY_MB": 4096, **({"DISK_GB": 100} if n % 2 else {})},
            aggregates=root_aggs,
            traits=["HW_CPU_X86_AVX2"] if n % 3 == 0 else None,
        )
        placement.provider(f"cn{n}_numa0", parent=root)
        if rng.random() < 0.6:
            placement.provider(
                f"cn{n}_gpu",
                parent=root,
                inventory={"VGPU": 4},
                traits=["CUSTOM_GPU_FAST"] if n % 2 else None,
                aggregates=[AGGS[3]] if n % 5 == 0 else None,
            )
    placement.provider(
        "shared-disk",
        inventory={"DISK_GB": 1000},
        traits=["MISC_SHARES_VIA_AGGREGATE"],
        aggregates=[AGGS[1]],
    )


QUERIES = [
    f"resources=VCPU:1,DISK_GB:10&member_of={AGGS[1]}",
    f"resources=VCPU:1,DISK_GB:10&member_of=in:{AGGS[0]},{AGGS[2]}",
    f"resources=VCPU:1&member_of={AGGS[3]}",
    f"resources=VCPU:1,VGPU:1&member_of={AGGS[3]}",
    "resources=VCPU:1,VGPU:1&required=CUSTOM_GPU_FAST",
    "resources=VCPU:1&required=HW_CPU_X86_AVX2,CUSTOM_GPU_FAST",
    "resources=VCPU:1&required=!CUSTOM_GPU_FAST&root_required=HW_CPU_X86_AVX2",
    f"resources=VCPU:1&resources1=VGPU:1&required1=CUSTOM_GPU_FAST&member_of={AGGS[0]}&group_policy=none",
    f"resources=DISK_GB:10&member_of={AGGS[1]}&limit=3",
    f"resources1=VCPU:1&member_of1={AGGS[2]}&resources2=VGPU:1&group_policy=isolate",
]


@pytest.mark.parametrize("version", ["1.39", "1.28"])
def test_tree_scope_changes_no_answer(placement, nested_cloud, monkeypatch, version):
    narrowed = [placement.get(f"/allocation_candidates?{q}", version=version) for q in QUERIES]
    monkeypatch.setattr(GroupSearch, "_tree_scope", lambda self: None)
    everything = [placement.get(f"/allocation_candidates?{q}", version=version) for q in QUERIES]
    for query, mine, full in zip(QUERIES, narrowed, everything, strict=True):
        assert mine.status_code == full.status_code, query
        if full.status_code == 200:
            assert mine.json() == full.json(), query
    # The queries do find candidates (the comparison is not of empty answers).
    found = sum(1 for r in narrowed if r.status_code == 200 and r.json()["allocation_requests"])
    assert found >= (7 if version == "1.39" else 3)


def test_tree_scope_reads_only_the_trees_it_can_use(placement, nested_cloud):
    """A member_of request over nested trees loads its aggregates' trees, not the cloud."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = placement.get(f"/allocation_candidates?resources=VCPU:1&member_of={AGGS[0]}")
    assert response.status_code == 200
    assert response.json()["allocation_requests"]
    inventory_reads = [q["sql"] for q in queries.captured_queries if "FROM placement_inventory inv" in q["sql"]]
    assert len(inventory_reads) == 1
    assert " IN (" in inventory_reads[0] or " = ANY(" in inventory_reads[0]  # SQLite's form, PostgreSQL's


SLICED = [
    "resources=VCPU:1,DISK_GB:10",
    "resources=VCPU:1,VGPU:1",
    "resources=VCPU:1&required=HW_CPU_X86_AVX2",
    "resources=DISK_GB:10",
    "resources=VCPU:2&root_required=!HW_CPU_X86_AVX2",
]


@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_reading_slices_of_trees_changes_no_answer(placement, nested_cloud, monkeypatch, limit):
    """A limited request over the whole cloud reads it a slice of trees at a
    time: the answers are those of one slice with every tree, in order."""
    from placement import candidates

    monkeypatch.setattr(candidates, "SLICE_ROOTS", 1)  # slices of 2 x limit trees
    sliced = [placement.get(f"/allocation_candidates?{q}&limit={limit}").json() for q in SLICED]
    monkeypatch.setattr(candidates, "SLICE_ROOTS", 1000)
    whole = [placement.get(f"/allocation_candidates?{q}&limit={limit}").json() for q in SLICED]
    assert sliced == whole
    assert all(body["allocation_requests"] for body in whole)
    assert sum(len(body["allocation_requests"]) == limit for body in whole) >= 3
