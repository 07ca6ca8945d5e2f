"""Upstream's safeguards for requests whose combinations explode (many
request groups over wide trees): PLACEMENT_MAX_ALLOCATION_CANDIDATES
([placement]max_allocation_candidates, -1 for none) stops the generation,
and PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY
([placement]allocation_candidates_generation_strategy) visits the trees one
after the other (depth-first) or one candidate of each in turn
(breadth-first). Mirrors upstream's TestWideTreeAllocationCandidateExplosion,
at smaller sizes."""

import pytest

from .test_allocation_candidates import candidates


@pytest.fixture
def wide_trees(placement, settings):
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 100000
    settings.PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY = "breadth-first"

    def create(computes, pfs, vfs_per_pf):
        roots = set()
        for i in range(computes):
            root = placement.provider(f"compute{i}", inventory={"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 500})
            roots.add(root)
            for j in range(pfs):
                placement.provider(f"compute{i}:PF{j}", parent=root, inventory={"CUSTOM_VF": vfs_per_pf})
        return roots

    return create


def query(groups, per_group, limit):
    text = "resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2"
    text += "".join(f"&resources{g}=CUSTOM_VF:{per_group}" for g in range(groups))
    return text + f"&group_policy=none&limit={limit}"


def outcome(placement, roots, groups, per_group, limit):
    """(how many candidates, how many computes have one)."""
    body = candidates(placement, query(groups, per_group, limit), version="1.38")
    with_candidates = {rp for request in body["allocation_requests"] for rp in request["allocations"] if rp in roots}
    return len(body["allocation_requests"]), len(with_candidates)


def test_all_candidates_generated_and_returned(placement, wide_trees):
    roots = wide_trees(computes=2, pfs=8, vfs_per_pf=8)
    assert outcome(placement, roots, groups=2, per_group=1, limit=1000) == (2 * 64, 2)


def test_requested_limit_is_hit_breadth_first_balanced(placement, wide_trees):
    # 2 x 4^4 candidates, 100 returned, from both computes.
    roots = wide_trees(computes=2, pfs=4, vfs_per_pf=4)
    assert outcome(placement, roots, groups=4, per_group=1, limit=100) == (100, 2)


def test_global_limit_hit_depth_first_unbalanced(placement, wide_trees, settings):
    # 2 x 4^4 = 512 valid candidates; the generation stops at 200, before
    # the first compute's 256 are exhausted: the second gets none.
    settings.PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY = "depth-first"
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 200
    roots = wide_trees(computes=2, pfs=4, vfs_per_pf=4)
    assert outcome(placement, roots, groups=4, per_group=1, limit=1000) == (200, 1)
    assert outcome(placement, roots, groups=4, per_group=1, limit=50) == (50, 1)


def test_global_limit_hit_breadth_first_balanced(placement, wide_trees, settings):
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 200
    roots = wide_trees(computes=2, pfs=4, vfs_per_pf=4)
    assert outcome(placement, roots, groups=4, per_group=1, limit=1000) == (200, 2)


def test_global_limit_below_the_request_limit(placement, wide_trees, settings):
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 300
    roots = wide_trees(computes=2, pfs=4, vfs_per_pf=4)
    assert outcome(placement, roots, groups=4, per_group=1, limit=400) == (300, 2)


def test_no_global_limit(placement, wide_trees, settings):
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = -1
    roots = wide_trees(computes=2, pfs=4, vfs_per_pf=4)
    assert outcome(placement, roots, groups=4, per_group=1, limit=1000) == (512, 2)


def test_breadth_first_strategy_generates_stable_ordering(placement, wide_trees):
    wide_trees(computes=2, pfs=8, vfs_per_pf=8)
    first = placement.get(f"/allocation_candidates?{query(2, 1, 1000)}", version="1.38")
    second = placement.get(f"/allocation_candidates?{query(2, 1, 1000)}", version="1.38")
    assert first.status_code == 200
    assert first.content == second.content


def test_single_group_over_trees_breadth_first(placement, wide_trees, settings):
    """One group whose candidates are several per tree: breadth-first takes
    one of each tree in turn, depth-first all of the first tree first."""
    roots = wide_trees(computes=3, pfs=4, vfs_per_pf=1)
    body = candidates(placement, "resources=VCPU:1,CUSTOM_VF:1&limit=3", version="1.38")
    assert len({rp for r in body["allocation_requests"] for rp in r["allocations"] if rp in roots}) == 3
    settings.PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY = "depth-first"
    body = candidates(placement, "resources=VCPU:1,CUSTOM_VF:1&limit=3", version="1.38")
    assert len({rp for r in body["allocation_requests"] for rp in r["allocations"] if rp in roots}) == 1
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 2
    body = candidates(placement, "resources=VCPU:1,CUSTOM_VF:1&limit=3", version="1.38")
    assert len(body["allocation_requests"]) == 2


def test_many_non_viable_candidates(placement, wide_trees, settings):
    """One VF on each of 8 PFs and 8 groups of one VF: 8^8 combinations of
    which only the 8! that use every PF once fit. Combinations are pruned as
    soon as a prefix overallocates (upstream's filtered product), so the
    first 1000 come without visiting millions."""
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 1000
    roots = wide_trees(computes=1, pfs=8, vfs_per_pf=1)
    assert outcome(placement, roots, groups=8, per_group=1, limit=10000) == (1000, 1)
