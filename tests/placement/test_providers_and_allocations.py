"""Providers, inventories, traits, aggregates, allocations, usages and the reshaper."""

from .conftest import new_uuid

AGG = "14a5c8a3-5a99-4e8f-88be-00d85fcb1c17"


def error(response):
    return response.json()["errors"][0]


def test_provider_lifecycle_and_duplicates(placement):
    rp = placement.provider("cn1")
    response = placement.post("/resource_providers", {"name": "cn1"})
    assert response.status_code == 409 and error(response)["code"] == "placement.duplicate_name"
    response = placement.put(f"/resource_providers/{rp}", {"name": "renamed"})
    assert response.status_code == 200 and response.json()["name"] == "renamed"
    assert placement.delete(f"/resource_providers/{rp}").status_code == 204
    assert placement.get(f"/resource_providers/{rp}").status_code == 404


def test_provider_body_is_validated(placement):
    for body in ({}, {"name": "x" * 201}, {"name": "a", "uuid": "nope"}, {"name": "a", "colour": "red"}):
        assert placement.post("/resource_providers", body).status_code == 400, body
    assert placement.get("/resource_providers").json()["resource_providers"] == []


def test_nested_providers_and_reparenting(placement):
    root = placement.provider("root")
    child = placement.provider("child", parent=root)
    other = placement.provider("other")
    data = placement.get(f"/resource_providers/{child}").json()
    assert data["parent_provider_uuid"] == root and data["root_provider_uuid"] == root
    response = placement.delete(f"/resource_providers/{root}")
    assert error(response)["code"] == "placement.resource_provider.cannot_delete_parent"
    moved = placement.put(
        f"/resource_providers/{child}", {"name": "child", "parent_provider_uuid": other}, version="1.36"
    )
    assert moved.status_code == 400 and "re-parenting" in error(moved)["detail"]
    loop = placement.put(f"/resource_providers/{root}", {"name": "root", "parent_provider_uuid": child})
    assert loop.status_code == 400 and "loop" in error(loop)["detail"]
    moved = placement.put(f"/resource_providers/{child}", {"name": "child", "parent_provider_uuid": other})
    assert moved.json()["root_provider_uuid"] == other
    tree = placement.get(f"/resource_providers?in_tree={other}").json()["resource_providers"]
    assert {p["uuid"] for p in tree} == {other, child}


def test_provider_list_filters(placement):
    cn1 = placement.provider("cn1", inventory={"VCPU": 4}, traits=["HW_CPU_X86_AVX2"], aggregates=[AGG])
    cn2 = placement.provider("cn2", inventory={"VCPU": 1})

    def names(query):
        return {p["uuid"] for p in placement.get(f"/resource_providers?{query}").json()["resource_providers"]}

    assert names(f"member_of={AGG}") == {cn1}
    assert names("required=HW_CPU_X86_AVX2") == {cn1}
    assert names("required=!HW_CPU_X86_AVX2") == {cn2}
    assert names("resources=VCPU:2") == {cn1}
    response = placement.get("/resource_providers?resources=CUSTOM_NOPE:1")
    assert response.status_code == 400 and "Invalid resource class" in error(response)["detail"]


def test_inventory_generation_conflicts(placement):
    rp = placement.provider("cn1", inventory={"VCPU": 4})
    response = placement.put(
        f"/resource_providers/{rp}/inventories",
        {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}},
    )
    assert response.status_code == 409 and error(response)["code"] == "placement.concurrent_update"
    assert placement.get(f"/resource_providers/{rp}/inventories/VCPU").json()["total"] == 4
    bad = placement.put(
        f"/resource_providers/{rp}/inventories",
        {"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 4, "reserved": 5}}},
    )
    assert bad.status_code == 400


def test_inventory_in_use_cannot_be_removed(placement):
    rp = placement.provider("cn1", inventory={"VCPU": 4, "DISK_GB": 10})
    assert placement.allocate(new_uuid(), {rp: {"VCPU": 1}}).status_code == 204
    gen = placement.get(f"/resource_providers/{rp}").json()["generation"]
    response = placement.put(
        f"/resource_providers/{rp}/inventories",
        {"resource_provider_generation": gen, "inventories": {"DISK_GB": {"total": 10}}},
    )
    assert response.status_code == 409 and error(response)["code"] == "placement.inventory.inuse"
    assert placement.delete(f"/resource_providers/{rp}").status_code == 409


def test_claims_for_the_last_unit(placement):
    rp = placement.provider("cn1", inventory={"VCPU": 1})
    assert placement.allocate(new_uuid(), {rp: {"VCPU": 1}}).status_code == 204
    second = placement.allocate(new_uuid(), {rp: {"VCPU": 1}})
    assert second.status_code == 409
    assert "exceed the capacity" in error(second)["detail"]
    assert placement.get(f"/resource_providers/{rp}/usages").json()["usages"] == {"VCPU": 1}


def test_consumer_generations(placement):
    rp = placement.provider("cn1", inventory={"VCPU": 4})
    consumer = new_uuid()
    assert placement.allocate(consumer, {rp: {"VCPU": 1}}, generation=None).status_code == 204
    stale = placement.allocate(consumer, {rp: {"VCPU": 2}}, generation=None)
    assert stale.status_code == 409 and error(stale)["code"] == "placement.concurrent_update"
    data = placement.get(f"/allocations/{consumer}").json()
    assert data["consumer_generation"] == 1 and data["consumer_type"] == "INSTANCE"
    assert placement.allocate(consumer, {rp: {"VCPU": 2}}, generation=1).status_code == 204
    assert placement.get(f"/allocations/{consumer}").json()["allocations"][rp]["resources"] == {"VCPU": 2}


def test_post_allocations_moves_between_consumers_atomically(placement):
    rp = placement.provider("cn1", inventory={"VCPU": 2})
    instance, migration = new_uuid(), new_uuid()
    assert placement.allocate(instance, {rp: {"VCPU": 2}}).status_code == 204
    body = {
        instance: {
            "allocations": {},
            "project_id": "p",
            "user_id": "u",
            "consumer_generation": 1,
            "consumer_type": "INSTANCE",
        },
        migration: {
            "allocations": {rp: {"resources": {"VCPU": 2}}},
            "project_id": "p",
            "user_id": "u",
            "consumer_generation": None,
            "consumer_type": "MIGRATION",
        },
    }
    assert placement.post("/allocations", body).status_code == 204
    assert placement.get(f"/allocations/{instance}").json()["allocations"] == {}
    usages = placement.get("/usages?project_id=p").json()["usages"]
    assert usages == {"MIGRATION": {"VCPU": 2, "consumer_count": 1}}


def test_allocation_bad_input(placement):
    rp = placement.provider("cn1", inventory={"VCPU": 2})
    missing_rp = placement.allocate(new_uuid(), {new_uuid(): {"VCPU": 1}})
    assert missing_rp.status_code == 400
    bad_class = placement.allocate(new_uuid(), {rp: {"CUSTOM_NOPE": 1}})
    assert bad_class.status_code == 400
    assert placement.put("/allocations/not-a-uuid", {"allocations": {}}).status_code == 400
    assert placement.delete(f"/allocations/{new_uuid()}").status_code == 404


def test_reader_sees_own_project_usages_only(db, noauth):
    from .conftest import PlacementClient

    reader = PlacementClient(token="bob:proj-b", version="1.9")
    reader_headers = {"X-Roles": "reader"}
    assert reader.get("/usages?project_id=proj-b", headers=reader_headers).status_code == 200
    assert reader.get("/usages?project_id=proj-c", headers=reader_headers).status_code == 403


def test_reshaper_moves_inventory_and_allocations_to_a_child(placement):
    root = placement.provider("cn1", inventory={"VCPU": 4, "VGPU": 2})
    child = placement.provider("pgpu", parent=root)
    consumer = new_uuid()
    assert placement.allocate(consumer, {root: {"VCPU": 1, "VGPU": 1}}).status_code == 204
    root_gen = placement.get(f"/resource_providers/{root}").json()["generation"]
    child_gen = placement.get(f"/resource_providers/{child}").json()["generation"]
    body = {
        "inventories": {
            root: {"resource_provider_generation": root_gen, "inventories": {"VCPU": {"total": 4}}},
            child: {"resource_provider_generation": child_gen, "inventories": {"VGPU": {"total": 2}}},
        },
        "allocations": {
            consumer: {
                "allocations": {root: {"resources": {"VCPU": 1}}, child: {"resources": {"VGPU": 1}}},
                "project_id": "proj",
                "user_id": "user",
                "consumer_generation": 1,
                "consumer_type": "INSTANCE",
            }
        },
    }
    response = placement.post("/reshaper", body)
    assert response.status_code == 204, response.content
    assert placement.get(f"/resource_providers/{child}/usages").json()["usages"] == {"VGPU": 1}
    assert set(placement.get(f"/resource_providers/{root}/inventories").json()["inventories"]) == {"VCPU"}
    stale = placement.post("/reshaper", body)
    assert stale.status_code == 409 and error(stale)["code"] == "placement.concurrent_update"
