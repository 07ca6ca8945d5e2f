"""Correctness under load: racing claims never overcommit a provider and are
accounted exactly, and GET /usages answers at every microversion (upstream
16.0.0 overcommits now and then on PostgreSQL and answers 500 to /usages at
1.38+ there)."""

import pytest

from placement import standards
from tests.helpers import run_together

from .conftest import PlacementClient, new_uuid

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


@pytest.mark.postgres_only
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


@pytest.mark.postgres_only
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
