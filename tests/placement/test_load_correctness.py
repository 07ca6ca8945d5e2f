"""Correctness under load: racing claims never overcommit a provider and are
accounted exactly, and GET /usages answers at every microversion (upstream
16.0.0 overcommits now and then on PostgreSQL and answers 500 to /usages at
1.38+ there)."""

import threading

import pytest
from django.db import connection, transaction

from placement import standards
from placement.services import providers as provider_service
from tests.helpers import run_together
from tests.plugins.tiers import many_connections

from .conftest import PlacementClient, new_uuid

pytestmark = many_connections

CLAIM = {"VCPU": 2, "MEMORY_MB": 1024}
PROJECT = "race-project"


@pytest.fixture(autouse=True)
def standard_names_resynced(monkeypatch):
    """Transactional tests empty the tables the standard names live in."""
    monkeypatch.setattr(standards, "_synced", False)


def claim(provider, other=None):
    """One PUT /allocations of a new consumer, from a client of its own."""
    allocations = {provider: CLAIM}
    if other:
        allocations[other] = {"DISK_GB": 10}
    response = PlacementClient().allocate(new_uuid(), allocations, project=PROJECT)
    return response.status_code, response.json() if response.content else None


def usage(placement, provider):
    return placement.get(f"/resource_providers/{provider}/usages").json()["usages"]


@pytest.mark.django_db(transaction=True)
def test_racing_claims_for_the_last_units_never_overcommit(noauth):
    placement = PlacementClient()
    # Room for exactly 5 claims after the existing one: VCPU (16 - 2) * 1.0 = 14,
    # 2 already used, 12 left = 6 claims of 2, but MEMORY_MB allows only 5.
    hot = placement.provider(
        "hot",
        inventory={"VCPU": {"total": 16, "reserved": 2}, "MEMORY_MB": {"total": 6144, "reserved": 0}},
    )
    disk = placement.provider("disk", inventory={"DISK_GB": 1000})
    assert placement.allocate(new_uuid(), {hot: CLAIM}, project="earlier").status_code == 204
    # The racers' project exists before the race, so their claims race on
    # the one-round-trip path (PostgreSQL) rather than on creating it.
    warm_up = new_uuid()
    assert placement.allocate(warm_up, {disk: {"DISK_GB": 10}}, project=PROJECT).status_code == 204
    assert placement.delete(f"/allocations/{warm_up}").status_code == 204
    generation_before = placement.get(f"/resource_providers/{hot}").json()["generation"]

    # Half the racers also take disk from a second provider, so locks are
    # taken on two rows in varying request order.
    results = run_together(*[lambda i=i: claim(hot, disk if i % 2 else None) for i in range(24)])

    statuses = [status for status, _body in results]
    assert sorted(set(statuses)) == [204, 409], statuses
    assert statuses.count(204) == 5
    for status, body in results:
        if status == 409:
            assert body["errors"][0]["code"] == "placement.undefined_code"
            assert "exceed the capacity" in body["errors"][0]["detail"]
    assert usage(placement, hot) == {"VCPU": 12, "MEMORY_MB": 6144}
    disk_claims = sum(1 for i, (status, _b) in enumerate(results) if status == 204 and i % 2)
    assert usage(placement, disk) == {"DISK_GB": 10 * disk_claims}
    assert placement.get(f"/usages?project_id={PROJECT}", version="1.37").json()["usages"] == {
        "VCPU": 10,
        "MEMORY_MB": 5120,
        **({"DISK_GB": 10 * disk_claims} if disk_claims else {}),
    }
    # One generation step per accepted claim, none for refused ones.
    assert placement.get(f"/resource_providers/{hot}").json()["generation"] == generation_before + 5


@pytest.mark.django_db(transaction=True)
def test_racing_replacements_of_one_consumer_keep_one_winner(noauth):
    placement = PlacementClient()
    hot = placement.provider("hot", inventory={"VCPU": 64, "MEMORY_MB": 65536})
    consumer = new_uuid()
    assert placement.allocate(consumer, {hot: CLAIM}, project=PROJECT).status_code == 204

    def replace(vcpus):
        response = PlacementClient().allocate(
            consumer, {hot: {"VCPU": vcpus, "MEMORY_MB": 1024}}, generation=1, project=PROJECT
        )
        return response.status_code, response.json() if response.content else None

    results = run_together(*[lambda v=v: replace(v) for v in range(3, 11)])

    statuses = sorted(status for status, _body in results)
    assert statuses == [204] + [409] * 7
    for status, body in results:
        if status == 409:
            assert body["errors"][0]["code"] == "placement.concurrent_update"
    winner = next(v for v, (status, _b) in zip(range(3, 11), results, strict=False) if status == 204)
    assert usage(placement, hot) == {"VCPU": winner, "MEMORY_MB": 1024}
    held = placement.get(f"/allocations/{consumer}").json()
    assert held["consumer_generation"] == 2


@pytest.mark.django_db(transaction=True)
def test_racing_moves_claims_and_deletes_keep_usages_exact(noauth):
    """Consumers moving off a provider without being emptied, new claims and
    consumer deletions on the same providers at once: every write succeeds
    (none deadlocks), and each provider's usage is its allocations' sum."""
    placement = PlacementClient()
    rps = [placement.provider(f"rp{i}", inventory={"VCPU": 64, "MEMORY_MB": 65536}) for i in range(4)]
    movers, doomed = [new_uuid() for _ in range(8)], [new_uuid() for _ in range(4)]
    for i, consumer in enumerate(movers + doomed):
        held = {rps[i % 4]: {"VCPU": 1, "MEMORY_MB": 256}, rps[(i + 1) % 4]: {"VCPU": 1}}
        assert placement.allocate(consumer, held, project=PROJECT).status_code == 204

    def move(i):  # off rps[i % 4], onto the next two
        held = {rps[(i + 1) % 4]: {"VCPU": 2}, rps[(i + 2) % 4]: {"VCPU": 1, "MEMORY_MB": 512}}
        return PlacementClient().allocate(movers[i], held, generation=1, project=PROJECT).status_code

    def delete(i):
        return PlacementClient().delete(f"/allocations/{doomed[i]}").status_code

    racers = [lambda i=i: move(i) for i in range(8)]
    racers += [lambda i=i: delete(i) for i in range(4)]
    racers += [lambda i=i: claim(rps[i % 4]) for i in range(4)]
    results = run_together(*racers)

    assert [r if isinstance(r, int) else r[0] for r in results] == [204] * 16
    for rp in rps:
        summed = {"VCPU": 0, "MEMORY_MB": 0}
        for held in placement.get(f"/resource_providers/{rp}/allocations").json()["allocations"].values():
            for name, amount in held["resources"].items():
                summed[name] = summed.get(name, 0) + amount
        assert usage(placement, rp) == summed
    # 8 movers holding 3 VCPU and 512 MB each, 4 claims of CLAIM.
    totals = [usage(placement, rp) for rp in rps]
    assert sum(t["VCPU"] for t in totals) == 8 * 3 + 4 * 2
    assert sum(t["MEMORY_MB"] for t in totals) == 8 * 512 + 4 * 1024


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("leave", ["move", "delete"])
def test_a_consumer_leaving_a_provider_waits_for_its_lock(noauth, leave):
    """A write that lowers a provider's usage (a consumer moved off it
    without being emptied, or deleted) takes the provider's lock like any
    writer of it: it waits while an inventory change holds that lock."""
    placement = PlacementClient()
    left = placement.provider("left", inventory={"VCPU": 8})
    kept = placement.provider("kept", inventory={"VCPU": 8})
    consumer = new_uuid()
    assert placement.allocate(consumer, {left: {"VCPU": 1}, kept: {"VCPU": 1}}).status_code == 204
    done = threading.Event()
    statuses = []

    def write():
        try:
            client = PlacementClient()
            if leave == "move":
                statuses.append(client.allocate(consumer, {kept: {"VCPU": 2}}, generation=1).status_code)
            else:
                statuses.append(client.delete(f"/allocations/{consumer}").status_code)
        finally:
            connection.close()
            done.set()

    with transaction.atomic():
        provider_service.lock_provider(left)
        writer = threading.Thread(target=write)
        writer.start()
        assert not done.wait(1.0), "the write did not wait for the provider's lock"
    writer.join(30)
    assert statuses == [204]
    assert usage(placement, left) == {"VCPU": 0}
    assert usage(placement, kept) == {"VCPU": 2 if leave == "move" else 0}


def _fresh_owner_write(kind, provider, vcpus):
    """One write naming the same new project, user and consumer type as
    every other racer, from a client of its own: (status, body)."""
    placement = PlacementClient()
    consumer = new_uuid()
    body = {
        "allocations": {provider: {"resources": {"VCPU": vcpus}}},
        "project_id": "fresh-project",
        "user_id": "fresh-user",
        "consumer_generation": None,
        "consumer_type": "FRESH",
    }
    if kind == "put":
        response = placement.put(f"/allocations/{consumer}", body)
    elif kind == "post":
        response = placement.post("/allocations", {consumer: body})
    else:
        inventories = {provider: {"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 8}}}}
        response = placement.post("/reshaper", {"inventories": inventories, "allocations": {consumer: body}})
    return response.status_code, response.json() if response.content else None


@pytest.mark.django_db(transaction=True)
def test_racing_writes_creating_the_same_new_project_all_succeed(noauth):
    """The owner rows are created in each write's transaction: concurrent
    writes naming the same new project, user and consumer type all succeed
    (none fails on the unique name, none deadlocks), refused writes in the
    race leave nothing, and each row exists once."""
    from placement.models import ConsumerType, Project, User

    placement = PlacementClient()
    shared = placement.provider("shared", inventory={"VCPU": 64})
    # Each reshaper moves inventory on a provider of its own (generation 1).
    own = [placement.provider(f"own{i}", inventory={"VCPU": 8}) for i in range(4)]
    calls = [lambda i=i: _fresh_owner_write("put" if i % 2 else "post", shared, 1) for i in range(12)]
    calls += [lambda p=p: _fresh_owner_write("reshape", p, 1) for p in own]
    # Refused by capacity, after creating (in their transaction) the same rows.
    calls += [lambda i=i: _fresh_owner_write("put" if i % 2 else "post", shared, 65) for i in range(4)]

    results = run_together(*calls)

    statuses = [status for status, _body in results]
    assert statuses == [204] * 16 + [409] * 4, results
    assert Project.objects.filter(external_id="fresh-project").count() == 1
    assert User.objects.filter(external_id="fresh-user").count() == 1
    assert ConsumerType.objects.filter(name="FRESH").count() == 1
    usages = placement.get("/usages?project_id=fresh-project", version="1.38").json()["usages"]
    assert usages == {"FRESH": {"VCPU": 16, "consumer_count": 16}}


@pytest.mark.django_db(transaction=True)
def test_racing_refused_writes_leave_no_owner_rows(noauth):
    """Every racer creates the same new project and is refused: nothing stays."""
    from placement.models import ConsumerType, Project, User

    placement = PlacementClient()
    shared = placement.provider("shared", inventory={"VCPU": 4})
    results = run_together(*[lambda i=i: _fresh_owner_write("put" if i % 2 else "post", shared, 5) for i in range(8)])

    assert [status for status, _body in results] == [409] * 8, results
    assert not Project.objects.filter(external_id="fresh-project").exists()
    assert not User.objects.filter(external_id="fresh-user").exists()
    assert not ConsumerType.objects.filter(name="FRESH").exists()


def _minor(version):
    return int(version.split(".")[1])


@pytest.mark.django_db
@pytest.mark.parametrize("version", [f"1.{minor}" for minor in range(40)])
def test_usages_answer_at_every_microversion(placement, version):
    rp = placement.provider("cn", inventory={"VCPU": 64, "MEMORY_MB": 65536, "DISK_GB": 1000})
    body = {
        "allocations": {rp: {"resources": {"VCPU": 2, "MEMORY_MB": 512}}},
        "project_id": PROJECT,
        "user_id": "u1",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert placement.put(f"/allocations/{new_uuid()}", body).status_code == 204
    body.update(consumer_type="MIGRATION", user_id="u2")
    body["allocations"] = {rp: {"resources": {"VCPU": 1, "DISK_GB": 5}}}
    assert placement.put(f"/allocations/{new_uuid()}", body).status_code == 204

    provider = placement.get(f"/resource_providers/{rp}/usages", version=version)
    assert provider.status_code == 200
    assert provider.json()["usages"] == {"VCPU": 3, "MEMORY_MB": 512, "DISK_GB": 5}

    queries = [f"project_id={PROJECT}", f"project_id={PROJECT}&user_id=u2", "project_id=nobody"]
    if _minor(version) >= 38:
        queries += [f"project_id={PROJECT}&consumer_type={t}" for t in ("all", "unknown", "INSTANCE")]
    answers = {}
    for query in queries:
        response = placement.get(f"/usages?{query}", version=version)
        if _minor(version) < 9:
            assert response.status_code == 404
            continue
        assert response.status_code == 200, response.content
        answers[query] = response.json()["usages"]
    if _minor(version) < 9:
        return
    if _minor(version) < 38:
        assert answers == {
            f"project_id={PROJECT}": {"VCPU": 3, "MEMORY_MB": 512, "DISK_GB": 5},
            f"project_id={PROJECT}&user_id=u2": {"VCPU": 1, "DISK_GB": 5},
            "project_id=nobody": {},
        }
        return
    assert answers == {
        f"project_id={PROJECT}": {
            "INSTANCE": {"VCPU": 2, "MEMORY_MB": 512, "consumer_count": 1},
            "MIGRATION": {"VCPU": 1, "DISK_GB": 5, "consumer_count": 1},
        },
        f"project_id={PROJECT}&user_id=u2": {"MIGRATION": {"VCPU": 1, "DISK_GB": 5, "consumer_count": 1}},
        "project_id=nobody": {},
        f"project_id={PROJECT}&consumer_type=all": {
            "all": {"VCPU": 3, "MEMORY_MB": 512, "DISK_GB": 5, "consumer_count": 2}
        },
        f"project_id={PROJECT}&consumer_type=unknown": {},
        f"project_id={PROJECT}&consumer_type=INSTANCE": {
            "INSTANCE": {"VCPU": 2, "MEMORY_MB": 512, "consumer_count": 1}
        },
    }


def add_aggregate(provider, aggregate):
    """GET the provider's aggregates, PUT them with ``aggregate`` added and
    the generation read, again on each 409 (as nova does); the number of
    conflicts met."""
    placement = PlacementClient()
    conflicts = 0
    while True:
        current = placement.get(f"/resource_providers/{provider}/aggregates").json()
        body = {
            "aggregates": sorted({*current["aggregates"], aggregate}),
            "resource_provider_generation": current["resource_provider_generation"],
        }
        response = placement.put(f"/resource_providers/{provider}/aggregates", body)
        if response.status_code == 200:
            return conflicts
        assert response.status_code == 409, response.content
        assert response.json()["errors"][0]["code"] == "placement.concurrent_update"
        conflicts += 1


@pytest.mark.django_db(transaction=True)
def test_racing_aggregate_updates_lose_no_update(noauth):
    """Twelve writers each add an aggregate of their own to one provider
    (half the aggregates exist already, half are new): every addition stays,
    and the generation counts each once."""
    placement = PlacementClient()
    provider = placement.provider("busy")
    other = placement.provider("other")
    existing = [new_uuid() for _ in range(6)]
    body = {"aggregates": existing, "resource_provider_generation": 0}
    assert placement.put(f"/resource_providers/{other}/aggregates", body).status_code == 200
    wanted = existing + [new_uuid() for _ in range(6)]

    conflicts = run_together(*[lambda aggregate=aggregate: add_aggregate(provider, aggregate) for aggregate in wanted])

    final = placement.get(f"/resource_providers/{provider}/aggregates").json()
    assert sorted(final["aggregates"]) == sorted(wanted)
    assert final["resource_provider_generation"] == len(wanted)
    assert sum(conflicts) > 0  # they did race
    # A stale generation is refused and changes nothing; an unknown provider is a 404.
    stale = {"aggregates": [], "resource_provider_generation": 0}
    response = placement.put(f"/resource_providers/{provider}/aggregates", stale)
    assert response.status_code == 409
    assert sorted(placement.get(f"/resource_providers/{provider}/aggregates").json()["aggregates"]) == sorted(wanted)
    response = placement.put(f"/resource_providers/{new_uuid()}/aggregates", stale)
    assert response.status_code == 404
    # Emptied, then one existing aggregate back: the links follow exactly.
    body = {"aggregates": [], "resource_provider_generation": len(wanted)}
    assert placement.put(f"/resource_providers/{provider}/aggregates", body).json()["aggregates"] == []
    body = {"aggregates": [existing[0]], "resource_provider_generation": len(wanted) + 1}
    assert placement.put(f"/resource_providers/{provider}/aggregates", body).status_code == 200
    assert placement.get(f"/resource_providers/{provider}/aggregates").json()["aggregates"] == [existing[0]]
