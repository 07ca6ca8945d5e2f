"""The client's allocation calls (candidates, claim, move, release, a
consumer's allocations) against Corral's own placement, in process: the
requests they send and what they raise."""

import uuid

import pytest

from aggregates.placement_client import AllocationConflict, PlacementClient, PlacementError, microversions
from tests.placement_client.conftest import RecordingSession, vcpu


def new_uuid():
    return str(uuid.uuid4())


@pytest.fixture
def own(db, settings):
    settings.PLACEMENT_URL, settings.AUTH_STRATEGY, settings.PLACEMENT_AUTH_TOKEN = "", "noauth2", ""
    return PlacementClient(session=RecordingSession())


@pytest.fixture
def providers(own):
    """Two providers of 8 VCPU (32 at a ratio of 4)."""
    made = []
    for name in ("node1", "node2"):
        provider = new_uuid()
        own.create_provider(provider, name)
        own.set_inventories(provider, vcpu(8), ("VCPU",))
        made.append(provider)
    own.session.sent.clear()
    return made


def sent(client):
    """(method, path and query, microversion) of each request sent."""
    return [
        (method, url.removeprefix(client.base_url), kwargs["headers"]["OpenStack-API-Version"].split()[1])
        for method, url, kwargs in client.session.sent
    ]


def vcpus(provider, amount):
    return {provider: {"resources": {"VCPU": amount}}}


def test_a_claim_holds_and_a_second_claim_of_the_consumer_conflicts(own, providers):
    consumer, (node1, _) = new_uuid(), providers
    own.claim(consumer, vcpus(node1, 2), "project", "user")
    (_, _, kwargs) = own.session.sent[0]
    assert kwargs["json"] == {
        "allocations": vcpus(node1, 2),
        "project_id": "project",
        "user_id": "user",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    held = own.consumer_allocations(consumer)
    assert held["allocations"][node1]["resources"] == {"VCPU": 2}
    with pytest.raises(AllocationConflict) as raised:
        own.claim(consumer, vcpus(node1, 1), "project", "user")  # generation None: it must be new
    assert raised.value.status == 409
    assert raised.value.message.startswith(f"Claiming resources for {consumer} failed with HTTP 409: ")
    assert sent(own) == [
        ("PUT", f"/allocations/{consumer}", microversions.ALLOCATIONS),
        ("GET", f"/allocations/{consumer}", microversions.CONSUMER_ALLOCATIONS),
        ("PUT", f"/allocations/{consumer}", microversions.ALLOCATIONS),
    ]


def test_a_claim_beyond_the_capacity_conflicts(own, providers):
    with pytest.raises(AllocationConflict):
        own.claim(new_uuid(), vcpus(providers[0], 33), "project", "user")


def test_a_claim_refused_otherwise_is_a_placement_error(own, providers):
    with pytest.raises(PlacementError) as raised:
        own.claim(new_uuid(), vcpus(providers[0], 0), "project", "user")
    assert not isinstance(raised.value, AllocationConflict) and raised.value.status == 400


def test_a_move_passes_the_source_allocation_to_the_migration(own, providers):
    server, migration, (node1, node2) = new_uuid(), new_uuid(), providers
    own.claim(server, vcpus(node1, 2), "project", "user")
    own.session.sent.clear()
    own.move_allocations(server, vcpus(node2, 2), "unknown", "unknown", hold_source_as=migration)
    assert sent(own) == [
        ("GET", f"/allocations/{server}", microversions.ALLOCATIONS),
        ("POST", "/allocations", microversions.ALLOCATIONS),
    ]
    body = own.session.sent[1][2]["json"]
    assert body[server]["project_id"] == "project" and body[server]["consumer_generation"] == 1
    assert body[migration]["consumer_type"] == "MIGRATION"
    assert list(own.consumer_allocations(server)["allocations"]) == [node2]
    assert list(own.consumer_allocations(migration)["allocations"]) == [node1]


def test_a_move_with_a_stale_generation_conflicts(own, providers, monkeypatch):
    server, (node1, node2) = new_uuid(), providers
    own.claim(server, vcpus(node1, 2), "project", "user")
    read = own._read

    def stale(path, version, what, **kwargs):
        held = read(path, version, what, **kwargs)
        own.claim(server, vcpus(node1, 1), "project", "user", consumer_generation=held["consumer_generation"])
        return held

    monkeypatch.setattr(own, "_read", stale)
    with pytest.raises(AllocationConflict) as raised:
        own.move_allocations(server, vcpus(node2, 2), "project", "user")
    assert raised.value.message.startswith(f"Moving the allocations of {server} failed with HTTP 409: ")


def test_release_deletes_the_allocations_and_none_left_is_fine(own, providers):
    consumer = new_uuid()
    own.claim(consumer, vcpus(providers[0], 2), "project", "user")
    own.session.sent.clear()
    own.release(consumer)
    own.release(consumer)
    assert sent(own) == [("DELETE", f"/allocations/{consumer}", microversions.RELEASE)] * 2
    assert own.consumer_allocations(consumer)["allocations"] == {}


def test_allocation_candidates_and_providers_with_room(own, providers):
    node1, node2 = providers
    for _ in range(4):
        own.claim(new_uuid(), vcpus(node1, 8), "project", "user")  # node1 is full
    own.session.sent.clear()
    candidates = own.allocation_candidates([("resources", "VCPU:4")])
    assert [list(request["allocations"]) for request in candidates["allocation_requests"]] == [[node2]]
    assert candidates["provider_summaries"][node2]["resources"]["VCPU"] == {"capacity": 32, "used": 0}
    aggregate = new_uuid()
    own.change_provider_aggregates(node2, add=[aggregate])
    own.session.sent.clear()
    assert own.providers_with_room("VCPU", 2, ["in:" + aggregate]) == {node2}
    assert own.providers_with_room("VCPU", 2, ["!in:" + aggregate]) == set()
    assert own.providers_with_room("VCPU", 2) == {node2}
    assert sent(own) == [
        ("GET", f"/resource_providers?resources=VCPU%3A2&member_of=in%3A{aggregate}", "1.32"),
        ("GET", f"/resource_providers?resources=VCPU%3A2&member_of=%21in%3A{aggregate}", "1.32"),
        ("GET", "/resource_providers?resources=VCPU%3A2", "1.32"),
    ]
    with pytest.raises(PlacementError, match="Listing allocation candidates failed with HTTP 400"):
        own.allocation_candidates([("resources", "NOT_A_CLASS:1")])
