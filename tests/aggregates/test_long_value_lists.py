"""Filtering by long lists of values (``aggregates.sql.among``, which the
scheduler uses for its candidates): exactly the rows whose value is in the
list, whatever the values hold (quotes, backslashes, commas, braces,
spaces, nothing), on either database."""

import pytest
from django.db import DataError, connection

from aggregates.host_aggregates.models import Aggregate, AggregateHost
from aggregates.sql import among

ODD = ['with"quote', "back\\slash", "comma,in", "{braces}", " spaced ", "", "NULL", 'end\\"both']


@pytest.fixture
def memberships(db):
    aggregate = Aggregate.objects.create(name="lists")
    names = ODD + [f"cn{i:05d}" for i in range(1200)]
    AggregateHost.objects.bulk_create([AggregateHost(aggregate=aggregate, host=name) for name in names])
    return names


def hosts_among(values):
    return set(AggregateHost.objects.filter(among(AggregateHost, "host", values)).values_list("host", flat=True))


def test_odd_values_match_themselves_only(memberships):
    assert hosts_among(ODD) == set(ODD)
    assert hosts_among(['with"quote', "comma"]) == {'with"quote'}
    assert hosts_among(["back\\\\slash", 'with\\"quote']) == set()


def test_a_long_list_matches_every_value_in_it(memberships):
    wanted = set(memberships[::3])
    assert hosts_among(sorted(wanted) + ["no-such-host"]) == wanted


def test_an_empty_list_matches_nothing(memberships):
    assert hosts_among([]) == set()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's own refusal of NUL in text")
def test_a_value_holding_nul_is_refused_by_postgresql(memberships):
    with pytest.raises(DataError):
        hosts_among(["cn00001", "bad\0value"])
