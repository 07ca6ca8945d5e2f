"""The named lease the beat holds (aggregates.jobs.leases.hold): one holder
at a time, renewed by its holder, taken by another once it runs out or is
let go."""

import pytest

from aggregates.jobs import leases

pytestmark = pytest.mark.django_db


def test_one_holder_at_a_time_renewed_by_it():
    assert leases.hold("role", "first", 60)
    assert not leases.hold("role", "second", 60)
    assert leases.hold("role", "first", 60)  # renewed
    assert leases.holder_of("role").holder == "first"
    assert leases.hold("other-role", "second", 60)  # another name, another lease


def test_a_lease_that_ran_out_is_taken_and_its_old_holder_refused():
    assert leases.hold("role", "first", 0)  # runs out at once
    assert leases.hold("role", "second", 60)
    assert not leases.hold("role", "first", 60)
    assert leases.holder_of("role").holder == "second"


def test_let_go_frees_it_for_the_next_only_when_held():
    assert leases.hold("role", "first", 60)
    assert not leases.let_go("role", "second")
    assert not leases.hold("role", "second", 60)
    assert leases.let_go("role", "first")
    assert leases.hold("role", "second", 60)
