"""The placement API's HTTP behaviour: auth, microversions, errors, headers."""

from placement.api import microversion

from .conftest import PlacementClient, new_uuid


def test_root_is_open_and_built_from_the_version_table(db, noauth):
    response = PlacementClient(token=None).get("/")
    assert response.status_code == 200
    version = response.json()["versions"][0]
    assert version["max_version"] == microversion.VERSIONS[-1][0] == "1.39"
    assert version["min_version"] == "1.0"
    assert response["OpenStack-API-Version"] == "placement 1.39"


def test_missing_token_is_401_except_at_root(db, noauth):
    assert PlacementClient(token=None).get("/resource_providers").status_code == 401


def test_a_401_says_where_to_get_a_token(db, settings):
    """As keystonemiddleware does: ``WWW-Authenticate: Keystone uri=...``."""
    settings.AUTH_STRATEGY = "keystone"
    for token in (None, "not-a-token"):
        response = PlacementClient(token=token).get("/resource_providers")
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == 'Keystone uri="http://testserver/identity"'
    settings.PUBLIC_URL = "https://cloud.example.test"
    response = PlacementClient(token=None).get("/resource_providers")
    assert response["WWW-Authenticate"] == 'Keystone uri="https://cloud.example.test/identity"'
    assert "WWW-Authenticate" not in PlacementClient(token=None).get("/")  # open route: 200
    settings.CORRAL_SERVICE = "placement"  # served alone: no Keystone surface of its own to name
    assert "WWW-Authenticate" not in PlacementClient(token=None).get("/resource_providers")


def test_non_admin_is_forbidden(user_placement):
    response = user_placement.get("/resource_providers")
    assert response.status_code == 403
    assert "placement:resource_providers:list" in response.json()["errors"][0]["detail"]


def test_keystone_tokens_are_checked_by_the_configured_validator(db, settings, token_for):
    settings.AUTH_STRATEGY = "keystone"
    assert PlacementClient(token=token_for("admin")).get("/resource_providers").status_code == 200
    assert PlacementClient(token=token_for("member", "bob")).get("/resource_providers").status_code == 403
    assert PlacementClient(token="not-a-token").get("/resource_providers").status_code == 401


def test_unacceptable_version_is_406_with_range(placement):
    response = placement.get("/", version="1.40")
    assert response.status_code == 406
    error = response.json()["errors"][0]
    assert error["min_version"] == "1.0" and error["max_version"] == "1.39"
    assert "Unacceptable version header: 1.40" in error["detail"]


def test_malformed_version_is_400(placement):
    response = placement.get("/", version="pony.horse")
    assert response.status_code == 400
    assert "invalid version string: pony.horse" in response.json()["errors"][0]["detail"]


def test_unknown_path_is_404_with_code_from_1_23(placement):
    old = placement.get("/nothing-here", version="1.22").json()["errors"][0]
    new = placement.get("/nothing-here", version="1.23").json()["errors"][0]
    assert "code" not in old
    assert new["code"] == "placement.undefined_code"
    assert new["request_id"].startswith("req-")


def test_wrong_method_is_405_with_allow(placement):
    response = placement.delete("/resource_providers")
    assert response.status_code == 405
    assert set(response["Allow"].split(", ")) == {"GET", "POST"}


def test_body_needs_json_content_type(placement):
    response = placement.post("/resource_providers", raw="name=x", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415


def test_malformed_json_is_400_and_changes_nothing(placement):
    response = placement.post("/resource_providers", raw="{not json")
    assert response.status_code == 400
    assert "Malformed JSON" in response.json()["errors"][0]["detail"]
    assert placement.get("/resource_providers").json()["resource_providers"] == []


def test_accept_must_allow_json(placement):
    assert placement.get("/resource_providers", headers={"Accept": "text/plain"}).status_code == 406
    assert placement.get("/resource_providers", headers={"Accept": "*/*"}).status_code == 200


def test_cache_headers_from_1_15(placement):
    assert "Last-Modified" not in placement.get("/resource_providers", version="1.14")
    response = placement.get("/resource_providers", version="1.15")
    assert response["Cache-Control"] == "no-cache"
    assert response["Last-Modified"].endswith("GMT")


def test_links_and_location_follow_the_mount_point(placement):
    rp = new_uuid()
    response = placement.post("/resource_providers", {"name": "n1", "uuid": rp}, version="1.20")
    assert response["Location"] == f"http://testserver/placement/resource_providers/{rp}"
    links = {link["rel"]: link["href"] for link in response.json()["links"]}
    assert links["self"] == f"/placement/resource_providers/{rp}"
    assert links["inventories"] == f"/placement/resource_providers/{rp}/inventories"


def test_sdk_discovery_without_trailing_slash(db, noauth):
    """openstacksdk asks GET <placement URL> with no slash and no token."""
    from django.test import Client

    response = Client().get("/placement")
    assert response.status_code == 200
    (version,) = response.json()["versions"]
    assert (version["id"], version["min_version"], version["max_version"]) == ("v1.0", "1.0", "1.39")
