"""Nova's weighers: raw values, per-aggregate multipliers, normalisation and ordering."""

import logging
from dataclasses import replace

import pytest

from aggregates.scheduling.host_state import AggregateInfo, HostState
from aggregates.scheduling.request import FlavorSpec, GroupSpec, RequestSpec
from aggregates.scheduling.weighers import (
    WEIGHERS,
    CPUWeigher,
    DiskWeigher,
    IoOpsWeigher,
    NumInstancesWeigher,
    RAMWeigher,
    ServerGroupSoftAffinityWeigher,
    ServerGroupSoftAntiAffinityWeigher,
    normalize,
    weigh_hosts,
)

SPEC = RequestSpec(flavor=FlavorSpec(name="m1.small", flavorid="1", vcpus=1, memory_mb=512, root_gb=1), project_id="p")


def host(name: str, *multipliers: dict[str, str], **fields) -> HostState:
    aggregates = [
        AggregateInfo(uuid=f"{name}-{i}", name=f"{name}-agg{i}", metadata=md) for i, md in enumerate(multipliers)
    ]
    return HostState(host=name, node=name, node_uuid=f"uuid-{name}", aggregates=aggregates, **fields)


def ram_host(name: str, free_mb: float, *multipliers: dict[str, str]) -> HostState:
    return host(name, *multipliers, memory_mb_capacity=free_mb + 512, memory_mb_used=512)


@pytest.fixture
def default_multipliers(settings):
    settings.RAM_WEIGHT_MULTIPLIER = 1.0
    settings.CPU_WEIGHT_MULTIPLIER = 1.0
    settings.DISK_WEIGHT_MULTIPLIER = 1.0
    settings.IO_OPS_WEIGHT_MULTIPLIER = -1.0
    settings.NUM_INSTANCES_WEIGHT_MULTIPLIER = 0.0
    return settings


# --- Raw values and names --------------------------------------------------------


def test_weighers_have_novas_names_and_keys():
    assert [(w.name, w.key) for w in WEIGHERS] == [
        ("RAMWeigher", "ram_weight_multiplier"),
        ("CPUWeigher", "cpu_weight_multiplier"),
        ("DiskWeigher", "disk_weight_multiplier"),
        ("IoOpsWeigher", "io_ops_weight_multiplier"),
        ("NumInstancesWeigher", "num_instances_weight_multiplier"),
        ("ServerGroupSoftAffinityWeigher", "soft_affinity_weight_multiplier"),
        ("ServerGroupSoftAntiAffinityWeigher", "soft_anti_affinity_weight_multiplier"),
    ]


def test_raw_values():
    h = host(
        "n1",
        memory_mb_capacity=4096,
        memory_mb_used=1024,
        vcpus_capacity=16,
        vcpus_used=3,
        disk_gb_capacity=100,
        disk_gb_used=40,
        num_io_ops=2,
        num_instances=5,
    )
    assert RAMWeigher().raw(h, SPEC) == 3072
    assert CPUWeigher().raw(h, SPEC) == 13
    assert DiskWeigher().raw(h, SPEC) == 60 * 1024
    assert IoOpsWeigher().raw(h, SPEC) == 2
    assert NumInstancesWeigher().raw(h, SPEC) == 5


# --- Multipliers -----------------------------------------------------------------


def test_multiplier_defaults_to_setting(settings):
    settings.RAM_WEIGHT_MULTIPLIER = 2.5
    assert RAMWeigher().multiplier(host("n1")) == 2.5
    settings.IO_OPS_WEIGHT_MULTIPLIER = -3.0
    assert IoOpsWeigher().multiplier(host("n1", {"other": "1"})) == -3.0


def test_aggregate_multiplier_overrides_setting(settings):
    settings.RAM_WEIGHT_MULTIPLIER = 1.0
    assert RAMWeigher().multiplier(host("n1", {"ram_weight_multiplier": "-2"})) == -2.0


def test_aggregate_multiplier_minimum_over_aggregates(settings):
    settings.CPU_WEIGHT_MULTIPLIER = 1.0
    h = host("n1", {"cpu_weight_multiplier": "5"}, {"cpu_weight_multiplier": "3.5"}, {"other": "0"})
    assert CPUWeigher().multiplier(h) == 3.5


def test_invalid_aggregate_multiplier_falls_back_to_setting(settings, caplog):
    settings.DISK_WEIGHT_MULTIPLIER = 4.0
    h = host("n1", {"disk_weight_multiplier": "heavy"})
    with caplog.at_level(logging.WARNING, logger="aggregates.scheduling"):
        assert DiskWeigher().multiplier(h) == 4.0
    assert "disk_weight_multiplier" in caplog.text and "'heavy'" in caplog.text


# --- Normalisation ---------------------------------------------------------------


def test_normalize_min_max():
    assert normalize([2.0, 4.0, 6.0]) == [0.0, 0.5, 1.0]


def test_normalize_all_equal_is_zero():
    assert normalize([3.0, 3.0]) == [0.0, 0.0]


def test_normalize_empty():
    assert normalize([]) == []


def test_normalize_from_a_lower_bound():
    # Nova's RAM/CPU/disk/IO weighers normalise from 0, not from the smallest value.
    assert normalize([1024.0, 2048.0, 4096.0], minval=0.0) == [0.25, 0.5, 1.0]
    assert normalize([2048.0, 2048.0], minval=0.0) == [1.0, 1.0]
    assert normalize([0.0, 0.0], minval=0.0) == [0.0, 0.0]


# --- weigh_hosts -----------------------------------------------------------------


def test_more_free_ram_wins_by_default(default_multipliers):
    small, big = ram_host("small", 1024), ram_host("big", 4096)
    weighed = weigh_hosts([small, big], SPEC, [RAMWeigher()])
    assert [w.host.host for w in weighed] == ["big", "small"]
    assert [w.weight for w in weighed] == [1.0, 0.25]
    assert weighed[1].weights == {"RAMWeigher": 0.25}


def test_negative_free_ram_counts_as_none(default_multipliers):
    over, some = ram_host("over", -2048), ram_host("some", 2048)
    weighed = weigh_hosts([over, some], SPEC, [RAMWeigher()])
    assert [(w.host.host, w.weight) for w in weighed] == [("some", 1.0), ("over", 0.0)]


def test_negative_multiplier_stacks(default_multipliers):
    default_multipliers.RAM_WEIGHT_MULTIPLIER = -1.0
    small, big = ram_host("small", 1024), ram_host("big", 4096)
    assert [w.host.host for w in weigh_hosts([big, small], SPEC, [RAMWeigher()])] == ["small", "big"]


def test_io_ops_default_prefers_quiet_hosts(default_multipliers):
    busy, quiet = host("busy", num_io_ops=4), host("quiet", num_io_ops=1)
    weighed = weigh_hosts([busy, quiet], SPEC, [IoOpsWeigher()])
    assert [(w.host.host, w.weight) for w in weighed] == [("quiet", -0.25), ("busy", -1.0)]


def test_num_instances_ignored_by_default(default_multipliers):
    weighed = weigh_hosts([host("a", num_instances=1), host("b", num_instances=9)], SPEC, [NumInstancesWeigher()])
    assert [(w.host.host, w.weight, w.weights) for w in weighed] == [
        ("a", 0.0, {"NumInstancesWeigher": 0.0}),
        ("b", 0.0, {"NumInstancesWeigher": 0.0}),
    ]


def test_num_instances_normalised_from_smallest(default_multipliers):
    default_multipliers.NUM_INSTANCES_WEIGHT_MULTIPLIER = -1.0
    weighed = weigh_hosts([host("a", num_instances=3), host("b", num_instances=5)], SPEC, [NumInstancesWeigher()])
    # No lower bound: 3 -> 0.0, 5 -> 1.0.
    assert [(w.host.host, w.weight) for w in weighed] == [("a", 0.0), ("b", -1.0)]


def test_per_aggregate_multiplier_overrides_setting_for_that_host(default_multipliers):
    spreading = ram_host("spreading", 4096)
    stacking = ram_host("stacking", 4096, {"ram_weight_multiplier": "-1.0"})
    small = ram_host("small", 2048)
    weighed = weigh_hosts([stacking, small, spreading], SPEC, [RAMWeigher()])
    assert [(w.host.host, w.weight) for w in weighed] == [("spreading", 1.0), ("small", 0.5), ("stacking", -1.0)]


def test_scores_add_up_across_weighers(default_multipliers):
    a = host("a", memory_mb_capacity=4096, vcpus_capacity=4, num_io_ops=0)
    b = host("b", memory_mb_capacity=2048, vcpus_capacity=8, num_io_ops=2)
    weighed = weigh_hosts([a, b], SPEC)
    by_name = {w.host.host: w for w in weighed}
    assert by_name["a"].weights == {
        "RAMWeigher": 1.0,
        "CPUWeigher": 0.5,
        "DiskWeigher": 0.0,
        "IoOpsWeigher": 0.0,
        "NumInstancesWeigher": 0.0,
    }
    assert by_name["b"].weights["IoOpsWeigher"] == -1.0
    assert by_name["a"].weight == 1.5
    assert by_name["b"].weight == 0.5 + 1.0 - 1.0
    assert [w.host.host for w in weighed] == ["a", "b"]


def test_ties_keep_input_order(default_multipliers):
    hosts = [ram_host(name, 2048) for name in ("c", "a", "b")]
    assert [w.host.host for w in weigh_hosts(hosts, SPEC)] == ["c", "a", "b"]
    hosts.reverse()
    assert [w.host.host for w in weigh_hosts(hosts, SPEC)] == ["b", "a", "c"]


def test_weights_sorted_descending(default_multipliers):
    hosts = [ram_host(name, free) for name, free in (("x", 1000), ("y", 3000), ("z", 2000))]
    weighed = weigh_hosts(hosts, SPEC, [RAMWeigher()])
    assert [w.host.host for w in weighed] == ["y", "z", "x"]
    assert weighed == sorted(weighed, key=lambda w: w.weight, reverse=True)


def test_lone_host_is_not_weighed(default_multipliers):
    [only] = weigh_hosts([ram_host("only", 4096)], SPEC)
    assert only.weight == 0.0 and only.weights == {}


def test_no_hosts():
    assert weigh_hosts([], SPEC) == []


def test_no_negative_zero(default_multipliers):
    weighed = weigh_hosts([host("a", num_io_ops=0), host("b", num_io_ops=0)], SPEC, [IoOpsWeigher()])
    assert all(str(w.weights["IoOpsWeigher"]) == "0.0" for w in weighed)


# --- Server groups' soft policies -----------------------------------------------------


def grouped(policy: str, **members_by_host: int) -> RequestSpec:
    members = {h: {f"{h}-m{i}" for i in range(n)} for h, n in members_by_host.items()}
    return replace(SPEC, group=GroupSpec("g-uuid", "g", policy, members_by_host=members))


def test_soft_weighers_count_members_and_their_multiplier_is_per_aggregate(settings):
    settings.SOFT_AFFINITY_WEIGHT_MULTIPLIER = settings.SOFT_ANTI_AFFINITY_WEIGHT_MULTIPLIER = 2.0
    a, b, c = host("a"), host("b", {"soft_anti_affinity_weight_multiplier": "0.5"}), host("c")
    soft_anti, soft = ServerGroupSoftAntiAffinityWeigher(), ServerGroupSoftAffinityWeigher()
    spread = grouped("soft-anti-affinity", a=2, b=1)
    weighed = weigh_hosts([a, b, c], spread, [soft_anti])
    assert [(w.host.host, w.weights["ServerGroupSoftAntiAffinityWeigher"]) for w in weighed] == [
        ("c", 2.0),
        ("b", 0.25),
        ("a", 0.0),
    ]
    together = grouped("soft-affinity", a=2, b=1)
    assert [w.host.host for w in weigh_hosts([c, b, a], together, [soft])] == ["a", "b", "c"]
    # A weigher with nothing to say (no group, another policy) is left out of the explanation.
    assert weigh_hosts([a, b], together, [soft_anti])[0].weights == {}
    assert weigh_hosts([a, b], SPEC, [soft])[0].weights == {}
