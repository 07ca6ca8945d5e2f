"""/os-address-pools (Corral's own, admin only): create, list with usage,
show, update, delete; bad input changes nothing."""

import pytest

from aggregates.addressing.models import AddressPool
from aggregates.audit.models import Event
from tests.helpers import fault


def create(api, **pool):
    return api.post("/os-address-pools", {"address_pool": pool})


def test_create_list_show_update_delete(admin_api, db):
    response = create(admin_api, name="private", cidr="10.0.0.0/24", gateway="10.0.0.1")
    assert response.status_code == 201, response.content
    pool = response.json()["address_pool"]
    assert pool == {
        "id": pool["id"],
        "name": "private",
        "cidr": "10.0.0.0/24",
        "gateway": "10.0.0.1",
        "kind": "internal",
        "scope": "global",
        "zone": None,
        "aggregate": None,
        "capacity": 253,
        "used": 0,
        "free": 253,
        "created_at": pool["created_at"],
        "updated_at": pool["updated_at"],
    }
    assert [p["name"] for p in admin_api.get("/os-address-pools").json()["address_pools"]] == ["private"]
    assert admin_api.get("/os-address-pools/private").json()["address_pool"]["id"] == pool["id"]
    updated = admin_api.put(f"/os-address-pools/{pool['id']}", {"address_pool": {"scope": "zone", "zone": "az1"}})
    assert updated.status_code == 200, updated.content
    assert (updated.json()["address_pool"]["scope"], updated.json()["address_pool"]["zone"]) == ("zone", "az1")
    assert admin_api.delete(f"/os-address-pools/{pool['id']}").status_code == 204
    assert not AddressPool.objects.exists()
    kinds = list(Event.objects.filter(object_type="address_pool").values_list("event_type", flat=True))
    assert sorted(kinds) == ["address_pool.create", "address_pool.delete", "address_pool.update"]


@pytest.mark.parametrize(
    ("pool", "status", "message"),
    [
        ({"name": "x", "cidr": "10.0.0.1/24"}, 400, "Invalid CIDR '10.0.0.1/24': 10.0.0.1/24 has host bits set."),
        ({"name": "x", "cidr": "nonsense"}, 400, "Invalid CIDR 'nonsense'"),
        ({"name": "x", "cidr": "10.0.0.0/24", "gateway": "10.1.0.1"}, 400, "Gateway 10.1.0.1 is not inside"),
        ({"name": "x", "cidr": "10.0.0.0/24", "scope": "zone"}, 400, "A pool scoped to a zone names the zone."),
        ({"name": "x", "cidr": "10.0.0.0/24", "scope": "aggregate", "aggregate": "nope"}, 400, "Aggregate nope"),
        ({"name": "x", "cidr": "10.0.0.0/25"}, 409, "CIDR 10.0.0.0/25 overlaps address pool taken (10.0.0.0/24)."),
        ({"name": "taken", "cidr": "10.5.0.0/24"}, 409, "An address pool named taken already exists."),
        ({"name": "x", "cidr": "10.0.0.0/24", "kind": "dmz"}, 400, "Invalid input for field/attribute kind"),
        ({"cidr": "10.9.0.0/24"}, 400, "'name' is a required property"),
    ],
)
def test_bad_pools_are_refused_and_change_nothing(admin_api, db, pool, status, message):
    assert create(admin_api, name="taken", cidr="10.0.0.0/24").status_code == 201
    response = create(admin_api, **pool)
    name = {400: "badRequest", 409: "conflictingRequest"}[status]
    assert message in fault(response, status, name)
    assert AddressPool.objects.count() == 1


def test_only_admins(reader_api, member_api, db):
    for api in (reader_api, member_api):
        response = api.get("/os-address-pools")
        assert fault(response, 403, "forbidden") == "Policy doesn't allow corral:os-address-pools to be performed."
    assert create(member_api, name="x", cidr="10.0.0.0/24").status_code == 403
    assert not AddressPool.objects.exists()


def test_a_pool_in_use_keeps_its_cidr_and_is_not_deleted(cloud, admin_api):
    from tests.plugins.cloud import cli_body

    cloud.host("h1")
    assert create(admin_api, name="private", cidr="10.0.0.0/29").status_code == 201
    body = cli_body(cloud.flavor(), cloud.image(), networks="auto")
    assert admin_api.post("/servers", body, version="2.100").status_code == 202
    shown = admin_api.get("/os-address-pools/private").json()["address_pool"]
    assert (shown["capacity"], shown["used"], shown["free"]) == (6, 1, 5)
    refused = admin_api.delete("/os-address-pools/private")
    assert "has 1 address(es) in use" in fault(refused, 409, "conflictingRequest")
    moved = admin_api.put("/os-address-pools/private", {"address_pool": {"cidr": "10.0.1.0/29"}})
    assert "its CIDR cannot change" in fault(moved, 409, "conflictingRequest")
    assert AddressPool.objects.get().cidr == "10.0.0.0/29"
