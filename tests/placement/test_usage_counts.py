"""What a provider uses is counted on its inventories as allocations are
written (placement.services.allocations); every read of usage (GET usages,
the candidates' provider summaries, the "in use" rule of inventory deletion)
must agree with the allocations themselves after any mix of writes."""

from collections import Counter

from .conftest import new_uuid


def error(response):
    return response.json()["errors"][0]


def generation(placement, rp):
    return placement.get(f"/resource_providers/{rp}").json()["generation"]


def summed_allocations(placement, rp):
    """{class: used} of the provider's inventories, summed over its allocations."""
    total = Counter({name: 0 for name in placement.get(f"/resource_providers/{rp}/inventories").json()["inventories"]})
    for held in placement.get(f"/resource_providers/{rp}/allocations").json()["allocations"].values():
        total.update(held["resources"])
    return dict(total)


def assert_usages_match(placement, providers):
    summaries = placement.get("/allocation_candidates?resources=VCPU:1", version="1.39").json()["provider_summaries"]
    for rp in providers:
        expected = summed_allocations(placement, rp)
        assert placement.get(f"/resource_providers/{rp}/usages").json()["usages"] == expected, rp
        if rp in summaries:
            used = {name: figures["used"] for name, figures in summaries[rp]["resources"].items()}
            assert used == expected, rp


def post_allocations(placement, consumers):
    body = {
        consumer: {
            "allocations": allocations,
            "project_id": "proj",
            "user_id": "user",
            "consumer_generation": gen,
            "consumer_type": "INSTANCE",
        }
        for consumer, (allocations, gen) in consumers.items()
    }
    return placement.post("/allocations", body, version="1.39")


def test_usages_follow_claims_moves_deletes_and_reshapes(placement):
    a = placement.provider("a", inventory={"VCPU": 8, "MEMORY_MB": 4096})
    b = placement.provider("b", inventory={"VCPU": 8, "MEMORY_MB": 4096})
    c = placement.provider("c", inventory={"VCPU": 4, "VGPU": 2})
    gpu = placement.provider("c_gpu", parent=c)
    providers = [a, b, c, gpu]
    c1, c2, c3, c4 = (new_uuid() for _ in range(4))

    assert placement.allocate(c1, {a: {"VCPU": 2, "MEMORY_MB": 512}}).status_code == 204
    assert placement.allocate(c2, {a: {"VCPU": 1}, b: {"VCPU": 3, "MEMORY_MB": 1024}}).status_code == 204
    assert placement.allocate(c3, {b: {"VCPU": 2}, c: {"VGPU": 1}}).status_code == 204
    assert_usages_match(placement, providers)

    # c1 moves from a to b without being emptied: a's usage drops, its generation stays (as upstream's).
    before = generation(placement, a)
    assert placement.allocate(c1, {b: {"VCPU": 2, "MEMORY_MB": 512}}, generation=1).status_code == 204
    assert generation(placement, a) == before
    assert_usages_match(placement, providers)

    # Refused writes change no count: one over capacity, one with a stale generation.
    too_big = placement.allocate(c2, {a: {"VCPU": 1}, b: {"VCPU": 9}}, generation=1)
    assert too_big.status_code == 409 and "exceed the capacity" in error(too_big)["detail"]
    assert placement.allocate(c2, {a: {"VCPU": 2}}, generation=0).status_code == 409
    assert_usages_match(placement, providers)

    # One request: c2 shrinks on a and leaves b, c3 is emptied, c4 is new on c.
    response = post_allocations(
        placement,
        {
            c2: ({a: {"resources": {"VCPU": 1}}, c: {"resources": {"VCPU": 2}}}, 1),
            c3: ({}, 1),
            c4: ({c: {"resources": {"VCPU": 1, "VGPU": 1}}}, None),
        },
    )
    assert response.status_code == 204, response.content
    assert_usages_match(placement, providers)

    # In use: b's memory cannot go while c1 holds some; it can once c1 is deleted.
    refused = placement.delete(f"/resource_providers/{b}/inventories/MEMORY_MB")
    assert refused.status_code == 409 and error(refused)["code"] == "placement.inventory.inuse"
    assert placement.delete(f"/allocations/{c1}").status_code == 204
    assert placement.delete(f"/allocations/{c1}").status_code == 404
    assert_usages_match(placement, providers)
    assert placement.delete(f"/resource_providers/{b}/inventories/MEMORY_MB").status_code == 204

    # The reshaper moves c4's VGPU from c to its child; inventory updates keep the counts.
    body = {
        "inventories": {
            c: {"resource_provider_generation": generation(placement, c), "inventories": {"VCPU": {"total": 4}}},
            gpu: {"resource_provider_generation": generation(placement, gpu), "inventories": {"VGPU": {"total": 2}}},
        },
        "allocations": {
            c4: {
                "allocations": {c: {"resources": {"VCPU": 1}}, gpu: {"resources": {"VGPU": 1}}},
                "project_id": "proj",
                "user_id": "user",
                "consumer_generation": 1,
                "consumer_type": "INSTANCE",
            }
        },
    }
    assert placement.post("/reshaper", body).status_code == 204
    placement.set_inventory(a, {"VCPU": 16, "MEMORY_MB": 4096})
    assert_usages_match(placement, providers)
    assert placement.get(f"/resource_providers/{gpu}/usages").json()["usages"] == {"VGPU": 1}
    assert placement.get(f"/resource_providers/{c}/usages").json()["usages"] == {"VCPU": 3}

    # A new inventory of a class starts unused; a provider whose consumers all left can go.
    placement.set_inventory(b, {"VCPU": 8, "DISK_GB": 100})
    assert placement.delete(f"/allocations/{c2}").status_code == 204
    assert_usages_match(placement, providers)
    assert placement.get(f"/resource_providers/{b}/usages").json()["usages"] == {"VCPU": 0, "DISK_GB": 0}
    assert placement.delete(f"/resource_providers/{b}").status_code == 204
