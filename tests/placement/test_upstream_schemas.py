"""Request schemas accept exactly what upstream Placement 16.0.0's accept
(placement/schemas/*.py), one test per difference found, and bad input in an
inventories map is a 400 that changes nothing."""

import json

import pytest

from tests.placement.conftest import new_uuid


def _provider(placement, inventory=None):
    rp = placement.provider("rp-" + new_uuid()[:8], inventory=inventory)
    return rp


def _generation(placement, rp):
    return placement.get(f"/resource_providers/{rp}").json()["generation"]


def _inventories(placement, rp):
    return placement.get(f"/resource_providers/{rp}/inventories").json()


# --- POST .../inventories allows resource_provider_generation (optional) ------------


def test_post_inventory_accepts_resource_provider_generation(placement):
    rp = _provider(placement)
    body = {"resource_class": "VCPU", "total": 8, "resource_provider_generation": _generation(placement, rp)}
    response = placement.post(f"/resource_providers/{rp}/inventories", body, version="1.0")
    assert response.status_code == 201, response.content
    assert response.json()["total"] == 8
    assert _inventories(placement, rp)["inventories"]["VCPU"]["total"] == 8


def test_post_inventory_still_needs_total_and_resource_class(placement):
    rp = _provider(placement)
    for body in ({"total": 8, "resource_provider_generation": 0}, {"resource_class": "VCPU"}):
        response = placement.post(f"/resource_providers/{rp}/inventories", body)
        assert response.status_code == 400
        assert "is a required property" in response.json()["errors"][0]["detail"]
    assert _inventories(placement, rp)["inventories"] == {}


# --- an unexpected key inside an inventories map ---------------------------------------


@pytest.mark.parametrize("value", [5, "x", [1], None])
def test_put_inventories_with_a_non_record_under_an_odd_key_is_400(placement, value):
    rp = _provider(placement, inventory={"VCPU": 4})
    before = _inventories(placement, rp)
    body = {"resource_provider_generation": before["resource_provider_generation"], "inventories": {"foo": value}}
    response = placement.put(f"/resource_providers/{rp}/inventories", body)
    assert response.status_code == 400, response.content
    assert "JSON does not validate" in response.json()["errors"][0]["detail"]
    assert _inventories(placement, rp) == before


def test_put_inventories_with_a_record_under_an_unknown_class_is_upstreams_400(placement):
    rp = _provider(placement, inventory={"VCPU": 4})
    before = _inventories(placement, rp)
    body = {
        "resource_provider_generation": before["resource_provider_generation"],
        "inventories": {"foo": {"total": 1}},
    }
    response = placement.put(f"/resource_providers/{rp}/inventories", body)
    assert response.status_code == 400
    assert "foo" in response.json()["errors"][0]["detail"]
    assert _inventories(placement, rp) == before


def test_reshaper_with_a_non_record_under_an_odd_key_is_400(placement):
    rp = _provider(placement, inventory={"VCPU": 4})
    before = _inventories(placement, rp)
    body = {
        "inventories": {
            rp: {"resource_provider_generation": before["resource_provider_generation"], "inventories": {"foo": 5}}
        },
        "allocations": {},
    }
    response = placement.post("/reshaper", body, version="1.30")
    assert response.status_code == 400, response.content
    assert "JSON does not validate" in response.json()["errors"][0]["detail"]
    assert _inventories(placement, rp) == before


# --- numbers: non-finite and out of the bounds upstream's schema sets -----------------


@pytest.mark.parametrize("ratio", ["NaN", "Infinity", "-Infinity", "1e39", "3.5e38", "1e999"])
def test_non_finite_or_out_of_range_allocation_ratio_is_400(placement, ratio):
    rp = _provider(placement, inventory={"VCPU": 4})
    before = _inventories(placement, rp)
    generation = before["resource_provider_generation"]
    raw = (
        f'{{"resource_provider_generation": {generation}, '
        f'"inventories": {{"VCPU": {{"total": 8, "allocation_ratio": {ratio}}}}}}}'
    )
    for method, path, text in (
        ("put", f"/resource_providers/{rp}/inventories", raw),
        (
            "put",
            f"/resource_providers/{rp}/inventories/VCPU",
            raw.replace('"inventories": {"VCPU": {', "").rstrip("}") + "}",
        ),
        (
            "post",
            f"/resource_providers/{rp}/inventories",
            f'{{"resource_class": "DISK_GB", "total": 8, "allocation_ratio": {ratio}}}',
        ),
    ):
        json.loads(text)  # well-formed for Python's parser, which accepts these constants
        response = placement.request(method, path, raw=text)
        assert response.status_code == 400, (path, response.content)
    assert _inventories(placement, rp) == before


@pytest.mark.parametrize("field", ["total", "reserved", "min_unit", "max_unit", "step_size"])
def test_integer_fields_above_max_int_are_400(placement, field):
    rp = _provider(placement, inventory={"VCPU": 4})
    before = _inventories(placement, rp)
    record = {"total": 8, field: 2**31}
    body = {"resource_provider_generation": before["resource_provider_generation"], "inventories": {"VCPU": record}}
    response = placement.put(f"/resource_providers/{rp}/inventories", body)
    assert response.status_code == 400
    assert "is greater than the maximum of 2147483647" in response.json()["errors"][0]["detail"]
    assert _inventories(placement, rp) == before


@pytest.mark.parametrize("amount", [2**31, 2**63, 2**64])
@pytest.mark.parametrize("endpoint", ["PUT /allocations/{consumer}", "POST /allocations", "POST /reshaper"])
def test_allocation_amounts_above_max_int_are_400(placement, amount, endpoint):
    """No inventory can hold more than MAX_INT (max_unit's range): refused by
    the schema, before any row is looked up or created."""
    rp = _provider(placement, inventory={"VCPU": {"total": 8, "allocation_ratio": 1e30}})
    consumer = new_uuid()
    body = {
        "allocations": {rp: {"resources": {"VCPU": amount}}},
        "project_id": "big-project",
        "user_id": "big-user",
        "consumer_generation": None,
        "consumer_type": "BIG",
    }
    method, path = endpoint.lower().split(" ")
    if path == "/reshaper":
        inventories = {rp: {"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 8}}}}
        payload = {"inventories": inventories, "allocations": {consumer: body}}
    else:
        payload = {consumer: body} if path == "/allocations" else body
    response = placement.request(method, path.format(consumer=consumer), payload)
    assert response.status_code == 400, response.content
    assert "is greater than the maximum of 2147483647" in response.json()["errors"][0]["detail"]
    assert placement.get("/usages?project_id=big-project").json()["usages"] == {}
    assert placement.get(f"/allocations/{consumer}").json()["allocations"] == {}


# --- consumer_generation: upstream's additionalProperties there is inert -----------------


def test_allocation_put_consumer_generation_integer_or_null_only(placement):
    rp = _provider(placement, inventory={"VCPU": 4})
    body = {
        "allocations": {rp: {"resources": {"VCPU": 1}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": {"x": 1},
    }
    response = placement.put(f"/allocations/{new_uuid()}", body, version="1.28")
    assert response.status_code == 400
    body["consumer_generation"] = None
    assert placement.put(f"/allocations/{new_uuid()}", body, version="1.28").status_code == 204
