"""Moves take their new addresses when their claim on the destination holds,
as boots do: two moves scheduled at once towards a pool's last free address
cannot both be sent there (the second finds the pool full and stays, with
the reason); a move that fails after taking an address gives it back."""

import threading

import pytest

from aggregates.addressing.models import AddressAllocation, AddressPool
from aggregates.scheduling import services as scheduling
from aggregates.servers.models import InstanceActionEvent, Server
from tests.addressing.conftest import make_two_racks
from tests.helpers import run_together
from tests.plugins.tiers import many_connections

COLD = {"migrate": None}  # 202 whatever the outcome; a failed one leaves its migration in error


@pytest.fixture
def one_free_address_on_h2(cloud, pool):
    """h1 served by net1 (roomy), h2 by net2 with one free address (.2 of a /30, .1 the gateway)."""
    make_two_racks(cloud, pool, net2=("10.2.0.0/30", "10.2.0.1"))


def boot_on_h1(boot, name):
    server = boot(name, networks=[{"uuid": str(AddressPool.objects.get(name="net1").uuid)}])
    assert server["OS-EXT-SRV-ATTR:host"] == "h1", server
    return server


@many_connections
def test_two_moves_scheduled_at_once_do_not_share_the_last_address(
    one_free_address_on_h2, boot, admin_api, settings, monkeypatch
):
    settings.FOLLOW_UP_WAIT_SECONDS = None  # each move runs in its request's thread
    first, second = boot_on_h1(boot, "first"), boot_on_h1(boot, "second")
    # Both moves are scheduled before either writes its outcome: the window
    # in which a move that takes its address only when it finishes races.
    both_scheduled = threading.Barrier(2, timeout=30)
    schedule_move = scheduling.schedule_move

    def scheduled_together(*args, **kwargs):
        try:
            return schedule_move(*args, **kwargs)
        finally:
            both_scheduled.wait()

    monkeypatch.setattr(scheduling, "schedule_move", scheduled_together)
    responses = run_together(
        *[(lambda s=s: admin_api.post(f"/servers/{s['id']}/action", COLD, version="2.56")) for s in (first, second)]
    )
    assert [r.status_code for r in responses] == [202, 202], [r.content for r in responses]

    hosts = dict(Server.objects.values_list("name", "host"))
    # A cold migration waits to be confirmed; its address is the target's already.
    assert sorted(hosts.values()) == ["h1", "h2"], hosts
    moved = Server.objects.get(host="h2")
    stayed = Server.objects.get(host="h1")
    assert list(moved.address_rows.values_list("address", "kind", "pool__name")) == [("10.2.0.2", "fixed", "net2")]
    assert list(stayed.address_rows.values_list("pool__name", flat=True)) == ["net1"]
    assert not InstanceActionEvent.objects.filter(event="compute_readdress", result="Error").exists()
    migration = stayed.migrations.order_by("-id").first()
    assert migration.status == "error"
    [h2] = [row for row in migration.decision.explanation["hosts"] if row["host"] == "h2"]
    assert h2["filter"] == "AddressPoolFilter" and "have no free address" in h2["reason"], h2
    held = list(AddressAllocation.objects.values_list("address", flat=True))
    assert len(held) == len(set(held)) == 2


def test_a_move_whose_placement_claim_fails_gives_its_new_address_back(
    one_free_address_on_h2, boot, admin_api, settings, monkeypatch
):
    server = boot_on_h1(boot, "only")

    def conflict(*args, **kwargs):
        return False  # placement answered 409 on every host

    monkeypatch.setattr(scheduling, "_move_allocation", conflict)
    response = admin_api.post(f"/servers/{server['id']}/action", COLD, version="2.56")
    assert response.status_code == 202, response.content
    row = Server.objects.get(uuid=server["id"])
    assert row.host == "h1"
    assert list(AddressAllocation.objects.values_list("pool__name", flat=True)) == ["net1"]


def test_a_move_that_breaks_after_taking_its_address_gives_it_back(
    one_free_address_on_h2, boot, admin_api, settings, monkeypatch
):
    server = boot_on_h1(boot, "only")

    def placement_down(*args, **kwargs):
        raise scheduling.Unavailable("Claiming resources is not possible now: placement is down")

    monkeypatch.setattr(scheduling, "_move_allocation", placement_down)
    response = admin_api.post(f"/servers/{server['id']}/action", COLD, version="2.56")
    assert response.status_code == 202, response.content
    row = Server.objects.get(uuid=server["id"])
    assert row.host == "h1"
    assert row.migrations.order_by("-id").first().status in ("error", "failed")
    assert list(AddressAllocation.objects.values_list("pool__name", flat=True)) == ["net1"]
    # Still served to the next move, which takes it.
    monkeypatch.undo()
    response = admin_api.post(f"/servers/{server['id']}/action", COLD, version="2.56")
    assert response.status_code == 202, response.content
    assert list(Server.objects.get(uuid=server["id"]).address_rows.values_list("address", flat=True)) == ["10.2.0.2"]
