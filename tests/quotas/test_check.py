"""``check``, the function other domains call inside their transaction
(server groups and their members, resizes): Nova's words, nothing kept
from a refused check, and the resize delta."""

import pytest
from django.db import transaction

from aggregates.flavors.models import Flavor
from aggregates.identity import services as identity
from aggregates.quotas import services as quotas


@pytest.fixture
def project(db):
    return identity.ensure_project("check").id


def test_server_groups_and_members_with_the_callers_counts(project):
    with transaction.atomic():
        quotas.check(project, "u1", {"server_groups": 1}, used={"server_groups": 9})
        with pytest.raises(quotas.QuotaExceeded) as refused:
            quotas.check(project, "u1", {"server_groups": 1}, used={"server_groups": 10})
        assert (refused.value.status, refused.value.message) == (403, "Quota exceeded, too many server groups.")
        with pytest.raises(quotas.QuotaExceeded) as refused:
            quotas.check(project, "u1", {"server_group_members": 2}, used={"server_group_members": 9})
        assert refused.value.message == "Quota exceeded, too many servers in group"
        quotas.check(project, "u1", {"server_group_members": 1}, used={"server_group_members": 9})


def test_a_users_own_server_groups_limit(project, system):
    quotas.update(system, project, {"server_groups": 2}, user_id="u1")
    with pytest.raises(quotas.QuotaExceeded):
        quotas.check(project, "u1", {"server_groups": 1}, used={"server_groups": 2}, user_used={"server_groups": 2})
    quotas.check(project, "u2", {"server_groups": 1}, used={"server_groups": 2})


def test_unlimited_and_noop(project, system, settings):
    quotas.update(system, project, {"server_groups": -1})
    quotas.check(project, None, {"server_groups": 1}, used={"server_groups": 10**6})
    settings.QUOTA_DRIVER = "noop"
    quotas.check(project, None, {"instances": 10**6})
    with pytest.raises(ValueError):
        quotas.check(project, None, {"networks": 1})


def test_resize_deltas_and_check(project, system):
    small, large = {"vcpus": 1, "ram": 512}, {"vcpus": 30, "ram": 256}
    assert quotas.resize_deltas(small, large) == {"cores": 29}
    assert quotas.resize_deltas(large, small) == {"ram": 256}
    assert quotas.resize_deltas(small, small) == {}
    assert quotas.resize_deltas(small, Flavor(vcpus=2, memory_mb=1024)) == {"cores": 1, "ram": 512}
    with pytest.raises(quotas.QuotaExceeded) as refused:
        quotas.check_resize(project, None, small, large)
    assert refused.value.message == "Quota exceeded for cores: Requested 29, but already used 0 of 20 cores"
    quotas.check_resize(project, None, large, small)


def test_a_boot_into_a_group_counts_its_members_in_the_same_check(project, system):
    """``check_boot`` with the group's members: the servers fit or not as
    before; then the group's members, as Nova checks them after the
    instances; the instances' message first when both are over."""
    quotas.update(system, project, {"instances": 10, "server_group_members": 3})
    with transaction.atomic():
        assert quotas.check_boot(project, "u1", 1, 512, 1, 2, group_members=1) == 2
        with pytest.raises(quotas.QuotaExceeded) as refused:
            quotas.check_boot(project, "u1", 1, 512, 1, 3, group_members=1)
        assert refused.value.message == "Quota exceeded, too many servers in group"
    quotas.update(system, project, {"instances": 1})
    with transaction.atomic():
        assert quotas.check_boot(project, "u1", 1, 512, 1, 3, group_members=1) == 1  # min_count honoured
        with pytest.raises(quotas.QuotaExceeded) as refused:
            quotas.check_boot(project, "u1", 1, 512, 2, 2, group_members=3)
        assert refused.value.message == "Quota exceeded for instances: Requested 2, but already used 0 of 1 instances"
