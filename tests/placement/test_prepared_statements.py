"""On PostgreSQL, placement's hottest statements (a new consumer's claim, an
aggregate replacement with a generation, nova-compute's periodic reads) are
prepared on the connection and planned once, not once a request; with
DB_PREPARED_STATEMENTS=0 (a pooler that cannot carry them) nothing is
prepared and the answers are the same."""

import pytest
from django.db import connection

from .conftest import PlacementClient, new_uuid
from .test_load_correctness import standard_names_resynced  # noqa: F401  (autouse: the tables are emptied)

CLAIM = {"VCPU": 1, "MEMORY_MB": 128}


@pytest.fixture
def on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    connection.close()  # a new connection: nothing prepared on it yet
    connection.ensure_connection()


def prepared_statements():
    """{statement text: times run} of this connection's prepared statements."""
    rows = connection.connection.execute(
        "SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements"
    ).fetchall()
    return dict(rows)


def runs_of(statements, *fragments):
    """How often the prepared statement containing every fragment ran (0: none is prepared)."""
    found = [runs for text, runs in statements.items() if all(fragment in text for fragment in fragments)]
    assert len(found) <= 1, found
    return found[0] if found else 0


def exercise(placement):
    """Three claims, four aggregate replacements and three rounds of a
    compute node's reads against one provider; what it then holds."""
    rp = placement.provider("cn1", inventory={"VCPU": 64, "MEMORY_MB": 65536})
    placement.allocate(new_uuid(), {rp: CLAIM})  # the owner rows exist, as in a running cloud
    for _ in range(3):
        assert placement.allocate(new_uuid(), {rp: CLAIM}).status_code == 204
    aggregate = new_uuid()
    for _ in range(4):  # the first one creates the aggregate
        current = placement.get(f"/resource_providers/{rp}/aggregates").json()
        wanted = [] if current["aggregates"] else [aggregate]
        body = {"aggregates": wanted, "resource_provider_generation": current["resource_provider_generation"]}
        assert placement.put(f"/resource_providers/{rp}/aggregates", body).status_code == 200
    for _ in range(3):
        for what in ("inventories", "allocations", "traits"):
            assert placement.get(f"/resource_providers/{rp}/{what}").status_code == 200
    return (
        placement.get(f"/resource_providers/{rp}/usages").json()["usages"],
        placement.get(f"/resource_providers/{rp}/aggregates").json()["aggregates"],
        len(placement.get(f"/resource_providers/{rp}/allocations").json()["allocations"]),
    )


@pytest.mark.django_db(transaction=True)
def test_the_hot_statements_are_prepared_and_planned_once_per_connection(on_postgresql, noauth):
    held = exercise(PlacementClient())

    assert held == ({"VCPU": 4, "MEMORY_MB": 512}, [], 4)  # in, out, in, out
    statements = prepared_statements()
    # Prepared once, then run by name.
    assert runs_of(statements, 'INSERT INTO "placement_consumer"') >= 2, statements
    assert runs_of(statements, 'INSERT INTO "placement_allocation"') >= 2, statements
    assert runs_of(statements, 'DELETE FROM "placement_resourceprovideraggregate"') >= 2, statements
    assert runs_of(statements, 'FROM "placement_resourceprovider" rp', '"placement_inventory" inv') >= 2
    assert runs_of(statements, 'FROM "placement_resourceprovider" rp', '"placement_trait" t') >= 2


@pytest.mark.django_db(transaction=True)
def test_turned_off_nothing_is_prepared_and_the_answers_are_the_same(on_postgresql, noauth, settings):
    settings.DB_PREPARED_STATEMENTS = False

    held = exercise(PlacementClient())

    assert held == ({"VCPU": 4, "MEMORY_MB": 512}, [], 4)  # in, out, in, out
    assert prepared_statements() == {}


@pytest.mark.django_db(transaction=True)
def test_a_claim_stopped_by_its_guard_leaves_nothing_and_the_next_one_is_served(on_postgresql, noauth):
    placement = PlacementClient()
    rp = placement.provider("cn1", inventory={"VCPU": 2, "MEMORY_MB": 65536})
    placement.allocate(new_uuid(), {rp: {"VCPU": 1}})
    generation = placement.get(f"/resource_providers/{rp}").json()["generation"]

    for _ in range(3):  # prepared by now: the guard stops a transaction of EXECUTEs
        refused = placement.allocate(new_uuid(), {rp: {"VCPU": 2}})
        assert refused.status_code == 409
        assert "exceed the capacity" in refused.json()["errors"][0]["detail"]
    assert placement.get(f"/resource_providers/{rp}").json()["generation"] == generation
    assert placement.get(f"/resource_providers/{rp}/usages").json()["usages"] == {"VCPU": 1, "MEMORY_MB": 0}

    assert placement.allocate(new_uuid(), {rp: {"VCPU": 1}}).status_code == 204
    assert placement.get(f"/resource_providers/{rp}/usages").json()["usages"] == {"VCPU": 2, "MEMORY_MB": 0}
    assert connection.connection.info.transaction_status.name == "IDLE"


@pytest.mark.django_db(transaction=True)
def test_statements_deallocated_behind_its_back_are_prepared_again(on_postgresql, noauth):
    placement = PlacementClient()
    rp = placement.provider("cn1", inventory={"VCPU": 64, "MEMORY_MB": 65536})
    placement.allocate(new_uuid(), {rp: CLAIM})
    assert placement.allocate(new_uuid(), {rp: CLAIM}).status_code == 204
    assert placement.get(f"/resource_providers/{rp}/inventories").status_code == 200
    assert runs_of(prepared_statements(), 'INSERT INTO "placement_consumer"') >= 1

    connection.connection.execute("DEALLOCATE ALL")  # a pooler's reset, say

    assert placement.allocate(new_uuid(), {rp: CLAIM}).status_code == 204
    assert placement.get(f"/resource_providers/{rp}/inventories").json()["inventories"]["VCPU"]["total"] == 64
    assert placement.get(f"/resource_providers/{rp}/usages").json()["usages"] == {"VCPU": 3, "MEMORY_MB": 384}
    assert runs_of(prepared_statements(), 'INSERT INTO "placement_consumer"') == 1


@pytest.mark.django_db(transaction=True)
def test_a_transaction_rolled_back_keeps_what_is_prepared(on_postgresql, noauth):
    placement = PlacementClient()
    rp = placement.provider("cn1", inventory={"VCPU": 2, "MEMORY_MB": 65536})
    placement.allocate(new_uuid(), {rp: {"VCPU": 1}})
    assert placement.allocate(new_uuid(), {rp: {"VCPU": 1}}).status_code == 204  # full now
    assert placement.get(f"/resource_providers/{rp}/inventories").status_code == 200
    backend = connection.connection.info.backend_pid
    before = prepared_statements()

    # Refused in transactions of their own, rolled back: the claim by the
    # ordinary path (after its guard), the stale inventory write.
    assert placement.allocate(new_uuid(), {rp: {"VCPU": 1}}).status_code == 409
    stale = {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 4}}}
    assert placement.put(f"/resource_providers/{rp}/inventories", stale).status_code == 409
    assert placement.get(f"/resource_providers/{rp}/inventories").status_code == 200

    after = prepared_statements()
    assert set(before) <= set(after), "deallocated by a rollback"
    assert connection.connection.info.backend_pid == backend  # not by reconnecting either
    read = ('FROM "placement_resourceprovider" rp', '"placement_inventory" inv')
    assert runs_of(after, *read) == runs_of(before, *read) + 1


@pytest.mark.django_db(transaction=True)
def test_a_connection_keeps_a_bounded_number_of_statements(on_postgresql, noauth, monkeypatch):
    from placement.services import prepared

    monkeypatch.setattr(prepared, "MOST_PER_CONNECTION", 3)
    placement = PlacementClient()
    rps = [placement.provider(f"cn{i}", inventory={"VCPU": 64, "MEMORY_MB": 65536}) for i in range(4)]
    placement.allocate(new_uuid(), {rps[0]: CLAIM})
    # A claim on one, two, three and four providers: a statement shape each.
    for count in range(1, 5):
        assert placement.allocate(new_uuid(), {rp: CLAIM for rp in rps[:count]}).status_code == 204
        assert len(prepared_statements()) <= 3 + 3  # what one claim needs, beyond the cap

    assert [placement.get(f"/resource_providers/{rp}/usages").json()["usages"]["VCPU"] for rp in rps] == [5, 3, 2, 1]
