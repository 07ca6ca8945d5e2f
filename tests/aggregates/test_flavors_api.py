"""``/flavors``: list, detail, show, create, update (2.55+) and delete, as Nova serves them."""

import json
import uuid

import pytest

from aggregates.audit.models import Event
from aggregates.flavors import services as flavors
from aggregates.flavors.models import Flavor, FlavorAccess, FlavorExtraSpec
from aggregates.identity.models import Project
from tests.plugins.api import ApiClient

CLI_CREATE = {
    "flavor": {
        "name": "ssd.large",
        "ram": 8192,
        "vcpus": 4,
        "disk": 80,
        "id": "6",
        "swap": 0,
        "OS-FLV-EXT-DATA:ephemeral": 0,
        "os-flavor-access:is_public": True,
    }
}


def flavor_body(**fields):
    body = {"name": "m1.small", "ram": 2048, "vcpus": 1, "disk": 20}
    body.update(fields)
    return {"flavor": body}


@pytest.fixture
def make_flavor(db, system):
    def _make(name, flavorid=None, ram=512, disk=1, vcpus=1, **kw):
        return flavors.create_flavor(system, name, ram, vcpus, disk, flavorid=flavorid or name, **kw)

    return _make


@pytest.fixture
def demo_project(admin_api):
    return Project.objects.get(name="demo")


def grant(flavor, project):
    FlavorAccess.objects.create(flavor=flavor, project_id=project.pk)


def listed_ids(response):
    assert response.status_code == 200, response.content
    return [flavor["id"] for flavor in response.json()["flavors"]]


# --- authentication and permissions ----------------------------------------------


@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "/flavors"),
        ("get", "/flavors/detail"),
        ("get", "/flavors/1"),
        ("post", "/flavors"),
        ("put", "/flavors/1"),
        ("delete", "/flavors/1"),
    ],
)
def test_every_route_needs_a_token(anon_api, method, path):
    response = anon_api.request(method, path, flavor_body() if method in ("post", "put") else None, version="2.55")
    assert response.status_code == 401
    assert response.json()["unauthorized"]["code"] == 401


@pytest.mark.parametrize("role_api", ["reader_api", "member_api"])
def test_writes_are_admin_only(request, role_api, make_flavor):
    api = request.getfixturevalue(role_api)
    make_flavor("m1")
    created = api.post("/flavors", flavor_body())
    updated = api.put("/flavors/m1", {"flavor": {"description": "x"}}, version="2.55")
    deleted = api.delete("/flavors/m1")
    for response, policy in ((created, "create"), (updated, "update"), (deleted, "delete")):
        assert response.status_code == 403
        assert f"os_compute_api:os-flavor-manage:{policy}" in response.json()["forbidden"]["message"]
    assert list(Flavor.objects.values_list("flavorid", flat=True)) == ["m1"]
    assert Flavor.objects.get().description is None


def test_members_list_and_show_public_flavors(member_api, make_flavor):
    make_flavor("m1")
    assert listed_ids(member_api.get("/flavors")) == ["m1"]
    assert listed_ids(member_api.get("/flavors/detail")) == ["m1"]
    assert member_api.get("/flavors/m1").json()["flavor"]["name"] == "m1"


# --- create ------------------------------------------------------------------


def test_create_at_base_version(admin_api):
    response = admin_api.post("/flavors", flavor_body())
    assert response.status_code == 200
    flavor = response.json()["flavor"]
    uuid.UUID(flavor["id"])  # an id is generated when none is given
    assert flavor == {
        "id": flavor["id"],
        "name": "m1.small",
        "ram": 2048,
        "vcpus": 1,
        "disk": 20,
        "swap": "",
        "OS-FLV-EXT-DATA:ephemeral": 0,
        "OS-FLV-DISABLED:disabled": False,
        "os-flavor-access:is_public": True,
        "rxtx_factor": 1.0,
        "links": [
            {"rel": "self", "href": f"http://testserver/compute/v2.1/flavors/{flavor['id']}"},
            {"rel": "bookmark", "href": f"http://testserver/compute/flavors/{flavor['id']}"},
        ],
    }
    assert Flavor.objects.get(flavorid=flavor["id"]).memory_mb == 2048


def test_create_as_the_cli_does(admin_api):
    response = admin_api.post("/flavors", CLI_CREATE, version="2.61")
    assert response.status_code == 200
    flavor = response.json()["flavor"]
    assert flavor["id"] == "6"
    assert flavor["swap"] == ""
    assert flavor["description"] is None
    assert flavor["extra_specs"] == {}
    assert flavor["os-flavor-access:is_public"] is True


def test_create_with_every_optional_field(admin_api):
    body = flavor_body(
        id="big.1",
        swap=1024,
        rxtx_factor=2.5,
        description="Large flavor",
        **{"OS-FLV-EXT-DATA:ephemeral": 10, "os-flavor-access:is_public": False},
    )
    flavor = admin_api.post("/flavors", body, version="2.55").json()["flavor"]
    assert (flavor["id"], flavor["swap"], flavor["rxtx_factor"], flavor["OS-FLV-EXT-DATA:ephemeral"]) == (
        "big.1",
        1024,
        2.5,
        10,
    )
    assert flavor["os-flavor-access:is_public"] is False
    assert flavor["description"] == "Large flavor"
    row = Flavor.objects.get(flavorid="big.1")
    assert (row.swap, row.ephemeral_gb, row.rxtx_factor, row.is_public) == (1024, 10, 2.5, False)


def test_private_flavor_starts_with_no_access_as_in_nova(admin_api, member_api):
    admin_api.post("/flavors", flavor_body(id="p1", **{"os-flavor-access:is_public": "false"}))
    assert FlavorAccess.objects.count() == 0
    assert admin_api.get("/flavors/p1/os-flavor-access").json() == {"flavor_access": []}
    # The creator's project was not granted it, so its members do not see it.
    assert member_api.get("/flavors/p1").status_code == 404


@pytest.mark.parametrize("given, stored", [(7, "7"), (None, None), ("a b.c_d-e", "a b.c_d-e"), (1.5, "1.5")])
def test_create_id_forms(admin_api, given, stored):
    flavor = admin_api.post("/flavors", flavor_body(id=given)).json()["flavor"]
    if stored is None:
        uuid.UUID(flavor["id"])
    else:
        assert flavor["id"] == stored


def test_create_accepts_numeric_strings(admin_api):
    flavor = admin_api.post("/flavors", flavor_body(ram="4096", vcpus="2", disk="0", rxtx_factor="1.5")).json()
    assert (flavor["flavor"]["ram"], flavor["flavor"]["vcpus"], flavor["flavor"]["disk"]) == (4096, 2, 0)
    assert flavor["flavor"]["rxtx_factor"] == 1.5


def test_create_response_per_microversion(admin_api):
    at_2_75 = admin_api.post("/flavors", flavor_body(name="a", id="a"), version="2.75").json()["flavor"]
    assert at_2_75["swap"] == 0
    assert at_2_75["extra_specs"] == {}
    at_2_102 = admin_api.post("/flavors", flavor_body(name="b", id="b"), version="2.102").json()["flavor"]
    assert "rxtx_factor" not in at_2_102
    assert "OS-FLV-DISABLED:disabled" not in at_2_102
    at_2_54 = admin_api.post("/flavors", flavor_body(name="c", id="c"), version="2.54").json()["flavor"]
    assert "description" not in at_2_54
    assert "extra_specs" not in at_2_54


def test_create_records_an_event(admin_api):
    flavor = admin_api.post("/flavors", flavor_body(id="e1", description="d"), version="2.55").json()["flavor"]
    event = Event.objects.get(event_type="flavor.create")
    assert (event.object_type, event.object_id, event.username) == ("flavor", "e1", "admin-user")
    assert event.payload["memory_mb"] == flavor["ram"]
    assert event.payload["description"] == "d"
    assert event.payload["extra_specs"] == {} and event.payload["projects"] == []


@pytest.mark.parametrize(
    "duplicate, message",
    [
        (flavor_body(name="other", id="6"), "Flavor with ID 6 already exists."),
        (flavor_body(name="ssd.large", id="7"), "Flavor with name ssd.large already exists."),
    ],
)
def test_create_conflicts(admin_api, duplicate, message):
    assert admin_api.post("/flavors", CLI_CREATE).status_code == 200
    response = admin_api.post("/flavors", duplicate)
    assert response.status_code == 409
    assert response.json()["conflictingRequest"]["message"] == message
    assert Flavor.objects.count() == 1
    assert Event.objects.filter(event_type="flavor.create").count() == 1


BAD_CREATE_BODIES = [
    pytest.param({"flavor": {"ram": 1, "vcpus": 1, "disk": 1}}, "'name' is a required property", id="no-name"),
    pytest.param({"flavor": {"name": "x", "vcpus": 1, "disk": 1}}, "'ram' is a required property", id="no-ram"),
    pytest.param({"flavor": {"name": "x", "ram": 1, "disk": 1}}, "'vcpus' is a required property", id="no-vcpus"),
    pytest.param({"flavor": {"name": "x", "ram": 1, "vcpus": 1}}, "'disk' is a required property", id="no-disk"),
    pytest.param(flavor_body(ram=0), "ram", id="ram-zero"),
    pytest.param(flavor_body(ram="0"), "ram must be >= 1", id="ram-zero-string"),
    pytest.param(flavor_body(vcpus=0), "vcpus", id="vcpus-zero"),
    pytest.param(flavor_body(disk=-1), "disk", id="disk-negative"),
    pytest.param(flavor_body(ram="lots"), "ram", id="ram-word"),
    pytest.param(flavor_body(ram=""), "ram must be an integer", id="ram-empty"),
    pytest.param(flavor_body(ram=1.5), "ram", id="ram-float"),
    pytest.param(flavor_body(ram=True), "ram", id="ram-bool"),
    pytest.param(flavor_body(ram=2147483648), "ram", id="ram-too-big"),
    pytest.param(flavor_body(ram="2147483648"), "ram must be <= 2147483647", id="ram-string-too-big"),
    pytest.param(flavor_body(swap=-1), "swap", id="swap-negative"),
    pytest.param(flavor_body(**{"OS-FLV-EXT-DATA:ephemeral": -1}), "ephemeral", id="ephemeral-negative"),
    pytest.param(flavor_body(rxtx_factor=0), "rxtx_factor", id="rxtx-zero"),
    pytest.param(flavor_body(rxtx_factor="fast"), "rxtx_factor", id="rxtx-word"),
    pytest.param(flavor_body(id=""), "id", id="id-empty"),
    pytest.param(flavor_body(id=" a"), "id", id="id-leading-space"),
    pytest.param(flavor_body(id="a "), "id", id="id-trailing-space"),
    pytest.param(flavor_body(id="a/b"), "id", id="id-slash"),
    pytest.param(flavor_body(id="a\n"), "flavor id", id="id-newline"),
    pytest.param(flavor_body(id="x" * 256), "id", id="id-too-long"),
    pytest.param(flavor_body(id=True), "id", id="id-bool"),
    pytest.param(flavor_body(name=""), "name", id="name-empty"),
    pytest.param(flavor_body(name=" x"), "name", id="name-leading-space"),
    pytest.param(flavor_body(name="x" * 256), "name", id="name-too-long"),
    pytest.param(flavor_body(name="bad\x01name"), "name", id="name-control-char"),
    pytest.param(flavor_body(name=5), "name", id="name-number"),
    pytest.param(flavor_body(**{"os-flavor-access:is_public": "maybe"}), "is_public", id="is-public-word"),
    pytest.param(flavor_body(description="d"), "description", id="description-before-2.55"),
    pytest.param(flavor_body(colour="red"), "Additional properties", id="unknown-field"),
    pytest.param({"flavor": "m1"}, "is not of type 'object'", id="flavor-not-object"),
    pytest.param({"flavour": {}}, "flavor", id="misspelt-top-key"),
    pytest.param([flavor_body()], "is not of type 'object'", id="body-list"),
]


@pytest.mark.parametrize("body, message", BAD_CREATE_BODIES)
def test_create_rejects_bad_input(admin_api, body, message):
    response = admin_api.post("/flavors", body)
    assert response.status_code == 400, response.content
    assert message in response.json()["badRequest"]["message"]
    assert Flavor.objects.count() == 0
    assert not Event.objects.filter(event_type="flavor.create").exists()


@pytest.mark.parametrize(
    "body, version, message",
    [
        (flavor_body(description="x" * 65536), "2.55", "description"),
        (flavor_body(description="two\nlines"), "2.55", "description can only contain printable characters"),
        (flavor_body(description=12), "2.55", "description"),
        (flavor_body(rxtx_factor=1.0), "2.102", "Additional properties"),
    ],
)
def test_create_rejects_bad_input_at_microversions(admin_api, body, version, message):
    response = admin_api.post("/flavors", body, version=version)
    assert response.status_code == 400
    assert message in response.json()["badRequest"]["message"]
    assert Flavor.objects.count() == 0


def test_create_rejects_malformed_json(admin_api):
    response = admin_api.post("/flavors", raw='{"flavor": {"name": ')
    assert response.status_code == 400
    assert "badRequest" in response.json()
    assert Flavor.objects.count() == 0


# --- show ----------------------------------------------------------------------


def test_show_fields_per_microversion(admin_api, make_flavor):
    make_flavor("m1", ram=1024, disk=10, vcpus=2, swap=0, description="small one")
    FlavorExtraSpec.objects.create(flavor=Flavor.objects.get(), key="hw:cpu_policy", value="dedicated")
    base = admin_api.get("/flavors/m1").json()["flavor"]
    assert base["ram"] == 1024 and base["disk"] == 10 and base["vcpus"] == 2 and base["swap"] == ""
    assert base["OS-FLV-DISABLED:disabled"] is False and base["rxtx_factor"] == 1.0
    assert "description" not in base and "extra_specs" not in base
    assert admin_api.get("/flavors/m1", version="2.55").json()["flavor"]["description"] == "small one"
    at_2_61 = admin_api.get("/flavors/m1", version="2.61").json()["flavor"]
    assert at_2_61["extra_specs"] == {"hw:cpu_policy": "dedicated"}
    assert at_2_61["swap"] == ""
    assert admin_api.get("/flavors/m1", version="2.75").json()["flavor"]["swap"] == 0
    latest = admin_api.get("/flavors/m1", version="2.102").json()["flavor"]
    assert "rxtx_factor" not in latest and "OS-FLV-DISABLED:disabled" not in latest
    assert latest["extra_specs"] == {"hw:cpu_policy": "dedicated"}


def test_show_unknown_flavor_is_404_so_the_sdk_find_lists(admin_api, make_flavor):
    make_flavor("ssd.large", flavorid="6")
    response = admin_api.get("/flavors/ssd.large")
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Flavor ssd.large could not be found."
    found = admin_api.get("/flavors/detail?is_public=None", version="2.61").json()["flavors"]
    assert [flavor["id"] for flavor in found if flavor["name"] == "ssd.large"] == ["6"]


def test_show_id_with_spaces(admin_api, make_flavor):
    make_flavor("spaced", flavorid="my flavor")
    flavor = admin_api.get("/flavors/my%20flavor").json()["flavor"]
    assert flavor["id"] == "my flavor"
    assert flavor["links"][0]["href"] == "http://testserver/compute/v2.1/flavors/my%20flavor"


def test_show_strict_query_from_2_102(admin_api, make_flavor):
    make_flavor("m1")
    assert admin_api.get("/flavors/m1?foo=1", version="2.101").status_code == 200
    response = admin_api.get("/flavors/m1?foo=1", version="2.102")
    assert response.status_code == 400
    assert "foo" in response.json()["badRequest"]["message"]


def test_show_private_flavor_only_to_granted_projects(member_api, token_for, make_flavor, demo_project):
    granted = make_flavor("granted", is_public=False)
    make_flavor("secret", is_public=False)
    grant(granted, demo_project)
    assert member_api.get("/flavors/granted").status_code == 200
    assert member_api.get("/flavors/secret").status_code == 404
    outsider = ApiClient(token_for("member", username="outsider", project_name="elsewhere"))
    assert outsider.get("/flavors/granted").status_code == 404


def test_links_use_public_url_when_set(admin_api, make_flavor, settings):
    settings.PUBLIC_URL = "https://cloud.example.com"
    make_flavor("m1")
    links = admin_api.get("/flavors/m1").json()["flavor"]["links"]
    assert links == [
        {"rel": "self", "href": "https://cloud.example.com/compute/v2.1/flavors/m1"},
        {"rel": "bookmark", "href": "https://cloud.example.com/compute/flavors/m1"},
    ]


def test_links_follow_the_request_host(admin_api, make_flavor, settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "api.example.org"]  # an allowed host, as any served name is
    make_flavor("m1")
    flavor = admin_api.get("/flavors", headers={"Host": "api.example.org:8774"}).json()["flavors"][0]
    assert flavor["links"][0]["href"] == "http://api.example.org:8774/compute/v2.1/flavors/m1"


# --- list ----------------------------------------------------------------------


def test_brief_list_fields(admin_api, make_flavor):
    make_flavor("m1", description="d")
    brief = admin_api.get("/flavors").json()
    assert brief == {
        "flavors": [
            {
                "id": "m1",
                "name": "m1",
                "links": [
                    {"rel": "self", "href": "http://testserver/compute/v2.1/flavors/m1"},
                    {"rel": "bookmark", "href": "http://testserver/compute/flavors/m1"},
                ],
            }
        ]
    }
    assert admin_api.get("/flavors", version="2.55").json()["flavors"][0]["description"] == "d"


def test_detail_list_carries_extra_specs_from_2_61_for_members_too(member_api, make_flavor):
    flavor = make_flavor("m1")
    FlavorExtraSpec.objects.create(flavor=flavor, key="hw:numa_nodes", value="1")
    assert "extra_specs" not in member_api.get("/flavors/detail", version="2.60").json()["flavors"][0]
    detail = member_api.get("/flavors/detail", version="2.61").json()["flavors"][0]
    assert detail["extra_specs"] == {"hw:numa_nodes": "1"}


@pytest.fixture
def mixed_flavors(make_flavor, demo_project):
    make_flavor("public")
    granted = make_flavor("granted", is_public=False)
    make_flavor("private", is_public=False)
    grant(granted, demo_project)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("", ["granted", "public"]),
        ("?is_public=true", ["granted", "public"]),
        ("?is_public=None", ["granted", "private", "public"]),
        ("?is_public=none", ["granted", "private", "public"]),
        ("?is_public=false", ["granted", "private"]),
        ("?is_public=0", ["granted", "private"]),
    ],
)
def test_admin_is_public_filter(admin_api, mixed_flavors, query, expected):
    assert listed_ids(admin_api.get("/flavors/detail" + query)) == expected


def test_admin_invalid_is_public_is_400(admin_api, mixed_flavors):
    response = admin_api.get("/flavors?is_public=maybe")
    assert response.status_code == 400
    assert "Invalid is_public filter [maybe]" in response.json()["badRequest"]["message"]


@pytest.mark.parametrize("query", ["", "?is_public=None", "?is_public=false", "?is_public=maybe"])
def test_members_see_public_and_granted_whatever_is_public_says(member_api, mixed_flavors, query):
    assert listed_ids(member_api.get("/flavors" + query)) == ["granted", "public"]


def test_readers_see_every_flavor(reader_api, mixed_flavors):
    assert listed_ids(reader_api.get("/flavors?is_public=None")) == ["granted", "private", "public"]
    assert reader_api.get("/flavors/private").status_code == 200


def test_members_do_not_see_disabled_flavors(member_api, admin_api, make_flavor):
    make_flavor("old")
    make_flavor("new")
    Flavor.objects.filter(flavorid="old").update(disabled=True)
    assert listed_ids(member_api.get("/flavors")) == ["new"]
    assert listed_ids(admin_api.get("/flavors")) == ["new", "old"]


def test_min_ram_and_min_disk(admin_api, make_flavor):
    make_flavor("a", ram=512, disk=1)
    make_flavor("b", ram=2048, disk=20)
    make_flavor("c", ram=4096, disk=5)
    assert listed_ids(admin_api.get("/flavors?minRam=2048")) == ["b", "c"]
    assert listed_ids(admin_api.get("/flavors?minDisk=5")) == ["b", "c"]
    assert listed_ids(admin_api.get("/flavors/detail?minRam=1000&minDisk=10")) == ["b"]


@pytest.mark.parametrize(
    "query, message",
    [
        ("minRam=lots", "Invalid minRam filter [lots]"),
        ("minDisk=1.5", "Invalid minDisk filter [1.5]"),
        ("limit=abc", "limit param must be an integer"),
        ("limit=-1", "limit param must be positive"),
        ("marker=nope", "marker [nope] not found"),
        ("sort_key=colour", "Invalid sort_key [colour]"),
        ("sort_dir=sideways", "Invalid sort_dir [sideways]"),
    ],
)
def test_list_rejects_bad_query_values(admin_api, make_flavor, query, message):
    make_flavor("m1")
    response = admin_api.get(f"/flavors?{query}")
    assert response.status_code == 400
    assert message in response.json()["badRequest"]["message"]


def test_sorting(admin_api, make_flavor):
    make_flavor("b-small", flavorid="1", ram=512)
    make_flavor("a-big", flavorid="2", ram=8192)
    make_flavor("c-mid", flavorid="10", ram=2048)
    assert listed_ids(admin_api.get("/flavors")) == ["1", "10", "2"]  # flavorid sorts as a string
    assert listed_ids(admin_api.get("/flavors?sort_key=name")) == ["2", "1", "10"]
    assert listed_ids(admin_api.get("/flavors?sort_key=memory_mb&sort_dir=desc")) == ["2", "10", "1"]


def test_paging_with_limit_marker_and_next_link(admin_api, make_flavor):
    for name in ("a", "b", "c"):
        make_flavor(name)
    first = admin_api.get("/flavors?limit=2&sort_dir=asc").json()
    assert [flavor["id"] for flavor in first["flavors"]] == ["a", "b"]
    assert first["flavors_links"] == [
        {"rel": "next", "href": "http://testserver/compute/v2.1/flavors?limit=2&sort_dir=asc&marker=b"}
    ]
    second = admin_api.get("/flavors?limit=2&marker=b&sort_dir=asc").json()
    assert [flavor["id"] for flavor in second["flavors"]] == ["c"]
    assert "flavors_links" not in second
    detail = admin_api.get("/flavors/detail?limit=1").json()
    assert detail["flavors_links"][0]["href"] == "http://testserver/compute/v2.1/flavors/detail?limit=1&marker=a"
    assert "flavors_links" not in admin_api.get("/flavors").json()


def test_marker_follows_the_sort_order(admin_api, make_flavor):
    make_flavor("z", flavorid="1")
    make_flavor("y", flavorid="2")
    make_flavor("x", flavorid="3")
    assert listed_ids(admin_api.get("/flavors?sort_key=name&marker=2")) == ["1"]


def test_list_caps_pages_at_max_limit(admin_api, make_flavor, monkeypatch):
    monkeypatch.setattr(flavors, "MAX_LIMIT", 2)
    for name in ("a", "b", "c"):
        make_flavor(name)
    assert listed_ids(admin_api.get("/flavors")) == ["a", "b"]
    assert listed_ids(admin_api.get("/flavors?limit=5")) == ["a", "b"]


def test_list_query_parameters_strict_from_2_75(admin_api, make_flavor):
    make_flavor("m1")
    assert admin_api.get("/flavors?foo=bar", version="2.74").status_code == 200
    for path in ("/flavors?foo=bar", "/flavors/detail?foo=bar"):
        response = admin_api.get(path, version="2.75")
        assert response.status_code == 400
        assert "foo" in response.json()["badRequest"]["message"]
    assert admin_api.get("/flavors?minRam=1&is_public=None&sort_key=name&limit=1", version="2.75").status_code == 200


def test_name_filter_from_2_102(admin_api, make_flavor):
    for name in ("m1.small", "m1.large", "gpu.large"):
        make_flavor(name)
    assert listed_ids(admin_api.get("/flavors?name=large", version="2.102")) == ["gpu.large", "m1.large"]
    assert listed_ids(admin_api.get("/flavors/detail?name=^m1", version="2.102")) == ["m1.large", "m1.small"]
    # Before 2.75 an unknown parameter is ignored; from 2.75 to 2.101 it is refused.
    assert len(listed_ids(admin_api.get("/flavors?name=large", version="2.74"))) == 3
    assert admin_api.get("/flavors?name=large", version="2.101").status_code == 400
    response = admin_api.get("/flavors?name=(", version="2.102")
    assert response.status_code == 400
    assert "Invalid name filter" in response.json()["badRequest"]["message"]


# --- update (2.55+) ----------------------------------------------------------------


def test_update_description(admin_api, make_flavor):
    make_flavor("m1")
    response = admin_api.put("/flavors/m1", {"flavor": {"description": "for web servers"}}, version="2.55")
    assert response.status_code == 200
    flavor = response.json()["flavor"]
    assert flavor["description"] == "for web servers"
    assert "extra_specs" not in flavor
    assert Flavor.objects.get().description == "for web servers"
    event = Event.objects.get(event_type="flavor.update")
    assert (event.object_type, event.object_id, event.payload["description"]) == ("flavor", "m1", "for web servers")
    cleared = admin_api.put("/flavors/m1", {"flavor": {"description": None}}, version="2.61").json()["flavor"]
    assert cleared["description"] is None and cleared["extra_specs"] == {}


def test_update_needs_2_55(admin_api, make_flavor):
    make_flavor("m1")
    response = admin_api.put("/flavors/m1", {"flavor": {"description": "x"}}, version="2.54")
    assert response.status_code == 404
    assert Flavor.objects.get().description is None


def test_update_unknown_flavor(admin_api):
    response = admin_api.put("/flavors/nope", {"flavor": {"description": "x"}}, version="2.55")
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Flavor nope could not be found."


@pytest.mark.parametrize(
    "body, message",
    [
        ({"flavor": {}}, "'description' is a required property"),
        ({"flavor": {"description": "x", "name": "y"}}, "Additional properties"),
        ({"flavor": {"name": "y"}}, "description"),
        ({"flavor": {"description": 5}}, "description"),
        ({"flavor": {"description": "x" * 65536}}, "description"),
        ({"flavor": {"description": "tab\there"}}, "printable"),
        ({"description": "x"}, "flavor"),
        ("text", "is not of type 'object'"),
    ],
)
def test_update_rejects_bad_input(admin_api, make_flavor, body, message):
    make_flavor("m1", description="kept")
    response = admin_api.put("/flavors/m1", body, version="2.55")
    assert response.status_code == 400
    assert message in response.json()["badRequest"]["message"]
    assert Flavor.objects.get().description == "kept"
    assert not Event.objects.filter(event_type="flavor.update").exists()


def test_update_rejects_malformed_json(admin_api, make_flavor):
    make_flavor("m1")
    response = admin_api.put("/flavors/m1", raw="{", version="2.55")
    assert response.status_code == 400


# --- delete --------------------------------------------------------------------------


def test_delete(admin_api, make_flavor, demo_project):
    flavor = make_flavor("m1", is_public=False)
    FlavorExtraSpec.objects.create(flavor=flavor, key="hw:numa_nodes", value="1")
    grant(flavor, demo_project)
    response = admin_api.delete("/flavors/m1")
    assert response.status_code == 202
    assert response.content == b""
    assert admin_api.get("/flavors/m1").status_code == 404
    assert not FlavorExtraSpec.objects.exists() and not FlavorAccess.objects.exists()
    event = Event.objects.get(event_type="flavor.delete")
    assert (event.object_type, event.object_id) == ("flavor", "m1")
    assert event.payload["extra_specs"] == {"hw:numa_nodes": "1"}
    assert event.payload["projects"] == [demo_project.pk]


def test_delete_unknown_flavor(admin_api):
    response = admin_api.delete("/flavors/nope")
    assert response.status_code == 404
    assert response.json()["itemNotFound"]["message"] == "Flavor nope could not be found."
    assert not Event.objects.filter(event_type="flavor.delete").exists()


def test_unsupported_methods_are_405(admin_api):
    assert admin_api.delete("/flavors").status_code == 405
    assert admin_api.post("/flavors/detail", flavor_body()).status_code == 405


def test_responses_carry_microversion_headers(admin_api, make_flavor):
    make_flavor("m1")
    response = admin_api.get("/flavors/m1", version="2.61")
    assert response.headers["OpenStack-API-Version"] == "compute 2.61"
    assert json.loads(response.content)["flavor"]["id"] == "m1"
