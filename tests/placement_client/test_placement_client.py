"""PlacementClient against an upstream Placement service."""

import threading
import uuid

import pytest

from aggregates import placement_client
from aggregates.identity import service_token
from aggregates.identity import services as identity
from aggregates.placement_client import (
    GenerationConflict,
    InventoryInUse,
    PlacementClient,
    PlacementUnreachable,
    ProviderNotFound,
    microversions,
)
from aggregates.placement_client.session import CONFLICT_ATTEMPTS
from tests.placement_client.conftest import RecordingSession, vcpu


def new_uuid():
    return str(uuid.uuid4())


@pytest.fixture
def provider(placement):
    return placement.create_provider(name="node1")["uuid"]


def test_reads_a_new_providers_aggregates(placement, provider):
    assert PlacementClient().provider_aggregates(provider) == (set(), 0)


def test_adds_an_aggregate_and_keeps_the_others(placement, provider):
    foreign, ours = new_uuid(), new_uuid()
    placement.set_aggregates(provider, [foreign])
    assert PlacementClient().change_provider_aggregates(provider, add=[ours]) is True
    assert placement.aggregates_of(provider) == {foreign, ours}


def test_an_aggregate_already_there_is_not_written_again(placement, provider):
    aggregate = new_uuid()
    placement.set_aggregates(provider, [aggregate])
    session = RecordingSession()
    assert PlacementClient(session=session).change_provider_aggregates(provider, add=[aggregate]) is False
    assert [method for method, _, _ in session.sent] == ["GET"]


def test_removes_an_aggregate_and_keeps_the_others(placement, provider):
    foreign, ours = new_uuid(), new_uuid()
    placement.set_aggregates(provider, [foreign, ours])
    assert PlacementClient().change_provider_aggregates(provider, remove=[ours.upper()]) is True
    assert placement.aggregates_of(provider) == {foreign}


def test_every_call_names_its_microversion_a_token_and_timeouts(placement, provider, settings):
    settings.PLACEMENT_CONNECT_TIMEOUT, settings.PLACEMENT_READ_TIMEOUT = 2, 7
    session = RecordingSession()
    client = PlacementClient(session=session)
    client.change_provider_aggregates(provider, add=[new_uuid()])
    client.list_providers()
    versions = [kwargs["headers"]["OpenStack-API-Version"] for _, _, kwargs in session.sent]
    assert versions == [f"placement {microversions.AGGREGATES}"] * 2 + ["placement 1.14"]
    assert all(kwargs["headers"]["X-Auth-Token"] == "admin" for _, _, kwargs in session.sent)
    assert all(kwargs["timeout"] == (2, 7) for _, _, kwargs in session.sent)


def test_one_client_and_session_per_thread_until_the_settings_change(settings):
    settings.PLACEMENT_URL, settings.PLACEMENT_AUTH_TOKEN = "http://127.0.0.1:1", "admin"
    first = placement_client.client()
    assert placement_client.client() is first
    other_thread = []
    thread = threading.Thread(target=lambda: other_thread.append(placement_client.client()))
    thread.start()
    thread.join()
    assert other_thread[0] is not first
    settings.PLACEMENT_URL = "http://127.0.0.1:2"
    assert placement_client.client() is not first
    assert placement_client.client().base_url == "http://127.0.0.1:2"


def test_unknown_provider_is_reported_as_not_found(placement):
    with pytest.raises(ProviderNotFound) as caught:
        PlacementClient().change_provider_aggregates(new_uuid(), add=[new_uuid()])
    assert caught.value.status == 404
    assert "No resource provider with uuid" in caught.value.message


def test_provider_looked_up_by_name(placement, provider):
    client = PlacementClient()
    assert client.provider_uuid_by_name("node1") == provider
    assert client.provider_uuid_by_name("nobody") is None


def test_member_of_lists_only_the_aggregates_providers(placement, provider):
    aggregate = new_uuid()
    other = placement.create_provider(name="node2")["uuid"]
    placement.set_aggregates(provider, [aggregate])
    client = PlacementClient()
    assert [p["uuid"] for p in client.list_providers(member_of=aggregate)] == [provider]
    assert {p["uuid"] for p in client.list_providers()} == {provider, other}


def test_generation_conflict_is_retried_from_a_fresh_read(placement, provider):
    """Another writer changes the provider between our read and our write:
    its aggregate survives and ours is added on the second attempt."""
    theirs, ours = new_uuid(), new_uuid()
    competing = iter([lambda: placement.set_aggregates(provider, [theirs])])
    session = RecordingSession(before_put=lambda: next(competing, lambda: None)())
    assert PlacementClient(session=session).change_provider_aggregates(provider, add=[ours]) is True
    assert placement.aggregates_of(provider) == {theirs, ours}
    assert [method for method, _, _ in session.sent] == ["GET", "PUT", "GET", "PUT"]


def test_gives_up_after_four_conflicting_attempts(placement, provider):
    session = RecordingSession(before_put=lambda: placement.set_aggregates(provider, [new_uuid()]))
    with pytest.raises(GenerationConflict) as caught:
        PlacementClient(session=session).change_provider_aggregates(provider, add=[new_uuid()])
    assert caught.value.code == "placement.concurrent_update"
    assert [method for method, _, _ in session.sent].count("PUT") == CONFLICT_ATTEMPTS == 4


def test_concurrent_writers_on_one_provider_never_lose_an_association(placement, provider):
    """Each writer either succeeds, and then its aggregate stays, or reports
    the conflict (its outbox row stays pending and is applied again)."""
    aggregates = [new_uuid() for _ in range(6)]
    outcomes = {}
    barrier = threading.Barrier(len(aggregates))

    def write(aggregate):
        client = PlacementClient()
        barrier.wait()
        try:
            outcomes[aggregate] = client.change_provider_aggregates(provider, add=[aggregate])
        except GenerationConflict:
            outcomes[aggregate] = "conflict"

    threads = [threading.Thread(target=write, args=(a,)) for a in aggregates]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    succeeded = {a for a, outcome in outcomes.items() if outcome is True}
    assert succeeded and succeeded <= placement.aggregates_of(provider)
    for aggregate in set(aggregates) - succeeded:
        PlacementClient().change_provider_aggregates(provider, add=[aggregate])
    assert placement.aggregates_of(provider) == set(aggregates)


def test_unreachable_placement(closed_port_url):
    with pytest.raises(PlacementUnreachable) as caught:
        PlacementClient(base_url=closed_port_url, token="admin").provider_aggregates(new_uuid())
    assert "Unable to communicate with the Placement API" in caught.value.message


# --- the token: Corral's service token, the client's default token provider ------


@pytest.fixture
def fresh_service_token(monkeypatch):
    service_token.forget_service_token()


def test_explicit_token_setting_wins(settings, fresh_service_token):
    settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY = "secret", "keystone"
    assert service_token.service_token() == "secret"


def test_noauth2_sends_admin(settings, fresh_service_token):
    settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY = "", "noauth2"
    assert service_token.service_token() == "admin"


def test_keystone_mode_uses_a_token_of_corrals_service_user(db, settings, fresh_service_token):
    settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY = "", "keystone"
    token = service_token.service_token()
    caller = identity.caller_for_token(token)
    assert caller.username == settings.PLACEMENT_SERVICE_USER and caller.is_admin
    assert service_token.service_token() == token
    renewed = service_token.service_token(renew=True)
    assert renewed != token and identity.caller_for_token(renewed).is_admin


# --- what the resource tracker uses ---------------------------------------------


def test_inventory_conflict_is_retried_from_a_fresh_read(placement, provider):
    """A trait added between our read and our write bumps the generation."""
    competing = iter(
        [
            lambda: placement.call(
                "PUT",
                f"/resource_providers/{provider}/traits",
                {
                    "traits": ["HW_CPU_X86_AVX2"],
                    "resource_provider_generation": placement.call("GET", f"/resource_providers/{provider}")[
                        "generation"
                    ],
                },
            )
        ]
    )
    session = RecordingSession(before_put=lambda: next(competing, lambda: None)())
    update = PlacementClient(session=session).set_inventories(provider, vcpu(8), ("VCPU", "MEMORY_MB"))
    assert update.changed and update.generation > update.generation_before
    assert [method for method, _, _ in session.sent] == ["GET", "PUT", "GET", "PUT"]
    assert placement.inventories_of(provider) == vcpu(8)


def test_same_inventories_are_not_written_again(placement, provider):
    client = PlacementClient()
    client.set_inventories(provider, vcpu(8), ("VCPU",))
    session = RecordingSession()
    update = PlacementClient(session=session).set_inventories(provider, vcpu(8), ("VCPU",))
    assert not update.changed and update.generation == update.generation_before
    assert [method for method, _, _ in session.sent] == ["GET"]


def test_removing_an_allocated_class_is_inventory_in_use(placement, provider):
    client = PlacementClient()
    client.set_inventories(provider, vcpu(8), ("VCPU",))
    placement.call(
        "PUT",
        f"/allocations/{new_uuid()}",
        {
            "allocations": {provider: {"resources": {"VCPU": 2}}},
            "project_id": new_uuid(),
            "user_id": new_uuid(),
            "consumer_generation": None,
            "consumer_type": "INSTANCE",
        },
    )
    with pytest.raises(InventoryInUse) as caught:
        client.set_inventories(provider, {}, ("VCPU",))
    assert (caught.value.status, caught.value.code) == (409, "placement.inventory.inuse")


def test_trait_is_added_and_removed_keeping_the_others(placement, provider):
    client = PlacementClient()
    client.set_trait(provider, "HW_CPU_X86_AVX2", True)
    assert client.set_trait(provider, "COMPUTE_STATUS_DISABLED", True).changed
    assert placement.traits_of(provider) == {"HW_CPU_X86_AVX2", "COMPUTE_STATUS_DISABLED"}
    assert not client.set_trait(provider, "COMPUTE_STATUS_DISABLED", True).changed
    assert client.set_trait(provider, "COMPUTE_STATUS_DISABLED", False).changed
    assert placement.traits_of(provider) == {"HW_CPU_X86_AVX2"}


def test_create_and_delete_a_provider(placement):
    client, provider = PlacementClient(), new_uuid()
    assert client.create_provider(provider, "node9") == 0
    assert placement.provider_exists(provider)
    assert client.delete_provider(provider) is True
    assert client.delete_provider(provider) is False  # already gone


def test_inventories_of_a_missing_provider(placement):
    with pytest.raises(ProviderNotFound):
        PlacementClient().set_inventories(new_uuid(), vcpu(8), ("VCPU",))
