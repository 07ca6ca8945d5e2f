"""GET /allocation_candidates with nested trees, sharing providers and
aggregates: the scenarios upstream tests with Python fixtures."""

import pytest

from .conftest import new_uuid

AGG = "14a5c8a3-5a99-4e8f-88be-00d85fcb1c17"
OTHER_AGG = "42896e0d-205d-4fe3-bd1e-100924931787"


def candidates(placement, query, version="1.39"):
    response = placement.get(f"/allocation_candidates?{query}", version=version)
    assert response.status_code == 200, response.content
    return response.json()


def allocation_sets(body):
    """Each allocation request as {provider uuid: {class: amount}}."""
    return [
        {rp: entry["resources"] for rp, entry in request["allocations"].items()}
        for request in body["allocation_requests"]
    ]


@pytest.fixture
def two_computes(placement):
    cn1 = placement.provider("cn1", inventory={"VCPU": 8, "MEMORY_MB": 2048, "DISK_GB": 100})
    cn2 = placement.provider("cn2", inventory={"VCPU": 2, "MEMORY_MB": 2048}, traits=["HW_CPU_X86_AVX2"])
    return cn1, cn2


def test_single_providers_with_capacity(placement, two_computes):
    cn1, cn2 = two_computes
    body = candidates(placement, "resources=VCPU:2,MEMORY_MB:512")
    assert sorted(allocation_sets(body), key=str) == sorted(
        [{cn1: {"VCPU": 2, "MEMORY_MB": 512}}, {cn2: {"VCPU": 2, "MEMORY_MB": 512}}], key=str
    )
    assert body["provider_summaries"][cn2]["traits"] == ["HW_CPU_X86_AVX2"]
    assert body["provider_summaries"][cn1]["resources"]["VCPU"] == {"capacity": 8, "used": 0}
    assert allocation_sets(candidates(placement, "resources=VCPU:4")) == [{cn1: {"VCPU": 4}}]


def test_usage_reduces_capacity(placement, two_computes):
    cn1, cn2 = two_computes
    assert placement.allocate(new_uuid(), {cn1: {"VCPU": 7}}).status_code == 204
    assert allocation_sets(candidates(placement, "resources=VCPU:2")) == [{cn2: {"VCPU": 2}}]


def test_required_and_forbidden_traits(placement, two_computes):
    cn1, cn2 = two_computes
    assert allocation_sets(candidates(placement, "resources=VCPU:1&required=HW_CPU_X86_AVX2")) == [{cn2: {"VCPU": 1}}]
    assert allocation_sets(candidates(placement, "resources=VCPU:1&required=!HW_CPU_X86_AVX2")) == [{cn1: {"VCPU": 1}}]
    body = candidates(placement, "resources=VCPU:1&required=in:HW_CPU_X86_AVX2,HW_CPU_X86_SSE")
    assert allocation_sets(body) == [{cn2: {"VCPU": 1}}]


def test_unknown_trait_or_class_is_400(placement, two_computes):
    response = placement.get("/allocation_candidates?resources=VCPU:1&required=CUSTOM_NOPE")
    assert response.status_code == 400
    assert "No such trait(s): CUSTOM_NOPE" in response.json()["errors"][0]["detail"]
    response = placement.get("/allocation_candidates?resources=CUSTOM_NOPE:1")
    assert response.status_code == 400


def test_member_of_and_forbidden_aggregates(placement):
    cn1 = placement.provider("cn1", inventory={"VCPU": 4}, aggregates=[AGG])
    cn2 = placement.provider("cn2", inventory={"VCPU": 4}, aggregates=[OTHER_AGG])
    assert allocation_sets(candidates(placement, f"resources=VCPU:1&member_of={AGG}")) == [{cn1: {"VCPU": 1}}]
    assert allocation_sets(candidates(placement, f"resources=VCPU:1&member_of=!{AGG}")) == [{cn2: {"VCPU": 1}}]
    body = candidates(placement, f"resources=VCPU:1&member_of=in:{AGG},{OTHER_AGG}")
    assert len(body["allocation_requests"]) == 2


@pytest.fixture
def shared_storage(placement):
    """Two computes without disk, and a storage pool sharing DISK_GB with the first via an aggregate."""
    cn1 = placement.provider("cn1", inventory={"VCPU": 4}, aggregates=[AGG])
    cn2 = placement.provider("cn2", inventory={"VCPU": 4})
    storage = placement.provider(
        "ss", inventory={"DISK_GB": 1000}, traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[AGG]
    )
    return cn1, cn2, storage


def test_sharing_provider_serves_the_trees_in_its_aggregate(placement, shared_storage):
    cn1, _cn2, storage = shared_storage
    body = candidates(placement, "resources=VCPU:1,DISK_GB:100")
    assert allocation_sets(body) == [{cn1: {"VCPU": 1}, storage: {"DISK_GB": 100}}]
    assert set(body["provider_summaries"]) == {cn1, storage}
    assert body["allocation_requests"][0]["mappings"] == {"": sorted([cn1, storage])}


def test_sharing_provider_alone(placement, shared_storage):
    _cn1, _cn2, storage = shared_storage
    assert allocation_sets(candidates(placement, "resources=DISK_GB:10")) == [{storage: {"DISK_GB": 10}}]


def test_granular_group_from_sharing_provider(placement, shared_storage):
    cn1, _cn2, storage = shared_storage
    body = candidates(placement, "resources1=VCPU:1&resources2=DISK_GB:10&group_policy=none")
    assert allocation_sets(body) == [{cn1: {"VCPU": 1}, storage: {"DISK_GB": 10}}]
    assert body["allocation_requests"][0]["mappings"] == {"1": [cn1], "2": [storage]}


@pytest.fixture
def numa_tree(placement):
    """A compute node with two NUMA children (CPU, memory) and a NIC PF under NUMA 1."""
    root = placement.provider("cn", inventory={"DISK_GB": 500}, traits=["HW_CPU_X86_AVX2"])
    numa0 = placement.provider("numa0", parent=root, inventory={"VCPU": 4, "MEMORY_MB": 4096}, traits=["CUSTOM_NUMA"])
    numa1 = placement.provider("numa1", parent=root, inventory={"VCPU": 4, "MEMORY_MB": 4096}, traits=["CUSTOM_NUMA"])
    pf = placement.provider("pf1", parent=numa1, inventory={"SRIOV_NET_VF": 8}, traits=["CUSTOM_PHYSNET_A"])
    return root, numa0, numa1, pf


def test_nested_tree_combines_providers_from_1_29(placement, numa_tree):
    root, numa0, numa1, _pf = numa_tree
    body = candidates(placement, "resources=VCPU:2,DISK_GB:10")
    assert sorted(allocation_sets(body), key=str) == sorted(
        [{numa0: {"VCPU": 2}, root: {"DISK_GB": 10}}, {numa1: {"VCPU": 2}, root: {"DISK_GB": 10}}], key=str
    )
    summary = body["provider_summaries"][numa0]
    assert summary["parent_provider_uuid"] == root and summary["root_provider_uuid"] == root


def test_nested_tree_hidden_before_1_29(placement, numa_tree):
    body = candidates(placement, "resources=VCPU:2,DISK_GB:10", version="1.28")
    assert body == {"allocation_requests": [], "provider_summaries": {}}


def test_granular_groups_isolate_versus_none(placement, numa_tree):
    _root, numa0, numa1, _pf = numa_tree
    query = "resources1=VCPU:1&resources2=VCPU:1&group_policy="
    isolated = candidates(placement, query + "isolate")
    assert allocation_sets(isolated) == [{numa0: {"VCPU": 1}, numa1: {"VCPU": 1}}] * 2
    assert sorted((r["mappings"]["1"], r["mappings"]["2"]) for r in isolated["allocation_requests"]) == sorted(
        [([numa0], [numa1]), ([numa1], [numa0])]
    )
    shared = allocation_sets(candidates(placement, query + "none"))
    assert {numa0: {"VCPU": 2}} in shared and {numa1: {"VCPU": 2}} in shared
    assert len(shared) == 4


def test_group_policy_needed_for_two_granular_groups(placement, numa_tree):
    response = placement.get("/allocation_candidates?resources1=VCPU:1&resources2=VCPU:1")
    assert response.status_code == 400
    assert "group_policy" in response.json()["errors"][0]["detail"]


def test_same_subtree_with_resourceless_group(placement, numa_tree):
    _root, _numa0, numa1, pf = numa_tree
    query = (
        "resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1&required_NUMA=CUSTOM_NUMA"
        "&same_subtree=_CPU,_NET,_NUMA&group_policy=none"
    )
    body = candidates(placement, query)
    assert allocation_sets(body) == [{numa1: {"VCPU": 1}, pf: {"SRIOV_NET_VF": 1}}]
    assert body["allocation_requests"][0]["mappings"] == {"_CPU": [numa1], "_NET": [pf], "_NUMA": [numa1]}


def test_root_required(placement, numa_tree, two_computes):
    root, numa0, numa1, _pf = numa_tree
    _cn1, cn2 = two_computes
    body = candidates(placement, "resources=VCPU:1&root_required=HW_CPU_X86_AVX2")
    assert sorted(allocation_sets(body), key=str) == sorted(
        [{numa0: {"VCPU": 1}}, {numa1: {"VCPU": 1}}, {cn2: {"VCPU": 1}}], key=str
    )
    body = candidates(placement, "resources=VCPU:1&root_required=!HW_CPU_X86_AVX2")
    assert [list(a) for a in allocation_sets(body)] == [[two_computes[0]]]


def test_in_tree_limits_to_one_tree(placement, numa_tree, two_computes):
    root, numa0, numa1, _pf = numa_tree
    body = candidates(placement, f"resources=VCPU:1&in_tree={numa1}")
    assert sorted(allocation_sets(body), key=str) == sorted([{numa0: {"VCPU": 1}}, {numa1: {"VCPU": 1}}], key=str)


def test_limit_trims_requests_and_summaries(placement, two_computes):
    body = candidates(placement, "resources=VCPU:1&limit=1")
    assert len(body["allocation_requests"]) == 1
    (chosen,) = body["allocation_requests"][0]["allocations"]
    assert set(body["provider_summaries"]) == {chosen}


def test_old_list_format_before_1_12(placement, two_computes):
    cn1, _cn2 = two_computes
    body = candidates(placement, "resources=DISK_GB:1", version="1.10")
    assert body["allocation_requests"] == [
        {"allocations": [{"resource_provider": {"uuid": cn1}, "resources": {"DISK_GB": 1}}]}
    ]
    assert "traits" not in body["provider_summaries"][cn1]


def test_summaries_show_only_requested_classes_before_1_27(placement, two_computes):
    cn1, _cn2 = two_computes
    old = candidates(placement, "resources=DISK_GB:1", version="1.26")["provider_summaries"][cn1]["resources"]
    new = candidates(placement, "resources=DISK_GB:1", version="1.27")["provider_summaries"][cn1]["resources"]
    assert set(old) == {"DISK_GB"}
    assert set(new) == {"VCPU", "MEMORY_MB", "DISK_GB"}


def test_bad_queries_are_400(placement):
    for query in ("", "resources=VCPU", "resources=VCPU:0", "resources=VCPU:1&limit=0", "resources=VCPU:1&bogus=1"):
        assert placement.get(f"/allocation_candidates?{query}").status_code == 400, query
    response = placement.get("/allocation_candidates?resources=VCPU:1&root_required=A&root_required=B")
    assert response.json()["errors"][0]["code"] == "placement.query.duplicate_key"
