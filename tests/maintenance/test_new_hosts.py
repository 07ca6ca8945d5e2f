"""ENABLE_NEW_SERVICES false: a registering host comes up disabled with
Nova's reason; with ENABLE_HOSTS_ON_AGGREGATE_JOIN it is enabled when it
joins its first aggregate (only when disabled for that reason), and its
provider loses COMPUTE_STATUS_DISABLED."""

from aggregates import placement_client
from aggregates.host_aggregates import services as aggregates
from aggregates.hosts.models import Service

REASON = "New service disabled due to config option."


def status(host):
    service = Service.objects.get(host=host, binary="nova-compute")
    return service.disabled, service.disabled_reason


def traits(node):
    return set(placement_client.client().provider_traits(node.uuid))


def test_new_hosts_are_enabled_by_default(cloud):
    cloud.host("h1")
    assert status("h1") == (False, None)


def test_new_hosts_disabled_then_enabled_on_first_aggregate(cloud, settings, system):
    settings.ENABLE_NEW_SERVICES = False
    settings.ENABLE_HOSTS_ON_AGGREGATE_JOIN = True
    node = cloud.host("h1")
    cloud.host("h2")
    assert status("h1") == (True, REASON)
    assert "COMPUTE_STATUS_DISABLED" in traits(node)
    cloud.host("h1")  # registering again keeps it as it is
    assert status("h1") == (True, REASON)
    cloud.disable("h2", reason="broken fan")

    first = cloud.aggregate("agg1", ["h1", "h2"])
    assert status("h1") == (False, None)
    assert "COMPUTE_STATUS_DISABLED" not in traits(node)
    assert status("h2") == (True, "broken fan")  # disabled for another reason: left alone
    assert first


def test_without_the_join_setting_the_host_stays_disabled(cloud, settings, system):
    settings.ENABLE_NEW_SERVICES = False
    cloud.host("h1")
    agg = cloud.aggregate("agg1", ["h1"])
    assert status("h1") == (True, REASON)
    # Only a first join enables: a second aggregate after a manual disable changes nothing.
    settings.ENABLE_HOSTS_ON_AGGREGATE_JOIN = True
    other = aggregates.create_aggregate(system, "agg2")
    aggregates.add_host(system, other.id, "h1")
    assert status("h1") == (True, REASON)
    assert agg
