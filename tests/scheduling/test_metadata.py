"""Reading a host's aggregate metadata: raw values, comma-split values, numbers."""

import logging

import pytest

from aggregates.scheduling.host_state import AggregateInfo, HostState
from aggregates.scheduling.metadata import aggregates_with_key, metadata_by_host, numeric_value, values_from_key


def host_in(*metadatas: dict[str, str]) -> HostState:
    aggregates = [AggregateInfo(uuid=f"uuid-{i}", name=f"agg{i}", metadata=md) for i, md in enumerate(metadatas)]
    return HostState(host="node7", node="node7", node_uuid="node-uuid", aggregates=aggregates)


def test_values_from_key_keeps_raw_values_across_aggregates():
    host = host_in({"ssd": "true, false"}, {"ssd": "true"}, {"other": "x"})
    assert values_from_key(host, "ssd") == {"true, false", "true"}


def test_values_from_key_without_the_key_is_empty():
    assert values_from_key(host_in({"a": "1"}), "ssd") == set()
    assert values_from_key(host_in(), "ssd") == set()


def test_metadata_by_host_splits_on_commas_and_strips():
    host = host_in({"ssd": "true, false", "rack": "r1"}, {"ssd": " yes ", "rack": "r2,r3"})
    assert metadata_by_host(host) == {"ssd": {"true", "false", "yes"}, "rack": {"r1", "r2", "r3"}}


def test_metadata_by_host_of_host_without_aggregates_is_empty():
    assert metadata_by_host(host_in()) == {}


def test_aggregates_with_key_names_them_in_host_order():
    host = host_in({"ssd": "1"}, {"other": "1"}, {"ssd": "2"})
    assert aggregates_with_key(host, "ssd") == ["agg0", "agg2"]


def test_numeric_value_takes_the_minimum():
    host = host_in({"max_io_ops_per_host": "10"}, {"max_io_ops_per_host": "3"}, {"max_io_ops_per_host": "7"})
    assert numeric_value(host, "max_io_ops_per_host", 8, cast=int) == 3


def test_numeric_value_default_when_no_aggregate_sets_it():
    assert numeric_value(host_in({"other": "1"}), "max_io_ops_per_host", 8, cast=int) == 8


def test_numeric_value_casts_with_float_by_default():
    value = numeric_value(host_in({"ram_weight_multiplier": "2.5"}), "ram_weight_multiplier", 1.0)
    assert value == 2.5
    assert isinstance(value, float)


@pytest.mark.parametrize("bad", ["5,10", "abc", ""])
def test_numeric_value_unreadable_gives_default_and_warns(bad, caplog):
    host = host_in({"max_io_ops_per_host": "2"}, {"max_io_ops_per_host": bad})
    with caplog.at_level(logging.WARNING, logger="aggregates.scheduling"):
        assert numeric_value(host, "max_io_ops_per_host", 8, cast=int) == 8
    [record] = [r for r in caplog.records if r.name == "aggregates.scheduling"]
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert "node7" in message and "max_io_ops_per_host" in message and repr(bad) in message


def test_numeric_value_int_cast_rejects_decimals(caplog):
    with caplog.at_level(logging.WARNING, logger="aggregates.scheduling"):
        assert numeric_value(host_in({"max_instances_per_host": "5.5"}), "max_instances_per_host", 50, cast=int) == 50
    assert "max_instances_per_host" in caplog.text
