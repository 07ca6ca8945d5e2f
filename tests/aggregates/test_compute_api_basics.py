"""Version documents, microversion negotiation, request ids and generic faults."""

import pytest
from django.test import Client


@pytest.mark.parametrize("path", ["/compute", "/compute/"])
def test_version_list_needs_no_token(db, path):
    response = Client().get(path)
    assert response.status_code == 200
    versions = {v["id"]: v for v in response.json()["versions"]}
    assert versions["v2.1"]["status"] == "CURRENT"
    assert versions["v2.1"]["version"] == "2.104" and versions["v2.1"]["min_version"] == "2.1"
    assert versions["v2.0"]["status"] == "DEPRECATED"
    assert versions["v2.1"]["links"] == [{"rel": "self", "href": "http://testserver/compute/v2.1/"}]


@pytest.mark.parametrize("path", ["/compute/v2.1", "/compute/v2.1/"])
def test_v21_document_needs_no_token(db, path):
    response = Client().get(path)
    assert response.status_code == 200
    version = response.json()["version"]
    assert (version["id"], version["version"], version["min_version"]) == ("v2.1", "2.104", "2.1")
    assert {"rel": "self", "href": "http://testserver/compute/v2.1/"} in version["links"]
    assert version["media-types"][0]["base"] == "application/json"


def test_public_url_setting_drives_links(db, settings):
    settings.PUBLIC_URL = "https://cloud.example.test"
    assert Client().get("/compute/v2.1").json()["version"]["links"][0]["href"] == (
        "https://cloud.example.test/compute/v2.1/"
    )


def test_no_version_header_means_2_1(admin_api):
    response = admin_api.get("/os-aggregates")
    assert response.headers["OpenStack-API-Version"] == "compute 2.1"
    assert response.headers["X-OpenStack-Nova-API-Version"] == "2.1"
    assert response.headers["Vary"] == "OpenStack-API-Version, X-OpenStack-Nova-API-Version"


def test_legacy_header_is_accepted(admin_api):
    response = admin_api.get("/os-aggregates", headers={"X-OpenStack-Nova-API-Version": "2.53"})
    assert response.headers["OpenStack-API-Version"] == "compute 2.53"


def test_standard_header_wins_and_last_compute_entry_counts(admin_api):
    response = admin_api.get(
        "/os-aggregates",
        headers={
            "OpenStack-API-Version": "placement 1.10, compute 2.5, compute 2.60",
            "X-OpenStack-Nova-API-Version": "2.30",
        },
    )
    assert response.headers["OpenStack-API-Version"] == "compute 2.60"


def test_standard_header_without_compute_falls_back_to_legacy(admin_api):
    response = admin_api.get(
        "/os-aggregates", headers={"OpenStack-API-Version": "placement 1.10", "X-OpenStack-Nova-API-Version": "2.30"}
    )
    assert response.headers["OpenStack-API-Version"] == "compute 2.30"


def test_latest_is_the_maximum(admin_api):
    assert admin_api.get("/os-aggregates", version="latest").headers["OpenStack-API-Version"] == "compute 2.104"


@pytest.mark.parametrize("version", ["2.01", "LATEST", "two", "2", "2.1.1"])
def test_malformed_version_is_400(admin_api, version):
    response = admin_api.get("/os-aggregates", version=version)
    assert response.status_code == 400
    assert "is of invalid format" in response.json()["badRequest"]["message"]


@pytest.mark.parametrize("version", ["2.105", "3.0", "1.1", "2.0"])
def test_unsupported_version_is_406(admin_api, version):
    response = admin_api.get("/os-aggregates", version=version)
    assert response.status_code == 406
    body = response.json()["computeFault"]
    assert body["code"] == 406
    assert body["message"] == (f"Version {version} is not supported by the API. Minimum is 2.1 and maximum is 2.104.")
    assert response.headers["OpenStack-API-Version"] == f"compute {version}"


def test_unknown_route_is_a_nova_404(admin_api):
    response = admin_api.get("/os-nothing-here")
    assert response.status_code == 404
    assert response.json() == {"itemNotFound": {"code": 404, "message": "The resource could not be found."}}


def test_wrong_method_is_405(admin_api):
    response = admin_api.request("patch", "/os-aggregates", {"x": 1})
    assert response.status_code == 405
    assert response.json()["badMethod"]["code"] == 405


def test_every_response_carries_a_request_id(admin_api):
    response = admin_api.get("/os-aggregates")
    assert response.headers["X-OpenStack-Request-ID"].startswith("req-")
    assert response.headers["X-Compute-Request-ID"] == response.headers["X-OpenStack-Request-ID"]


@pytest.mark.parametrize("accept", ["", "text/html", "*/*"])
def test_any_accept_header_gets_json(admin_api, accept):
    response = admin_api.get("/os-aggregates", headers={"Accept": accept})
    assert response.status_code == 200 and response.json() == {"aggregates": []}
