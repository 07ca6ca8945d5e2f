"""The legacy v2.0 endpoint the version list advertises, and JSON faults under /compute/."""

import pytest
from django.test import Client


def test_v20_self_link_answers_nova_single_version_document(db):
    listed = {v["id"]: v for v in Client().get("/compute/").json()["versions"]}["v2.0"]
    href = listed["links"][0]["href"]
    assert href == "http://testserver/compute/v2/"
    response = Client().get(href.removeprefix("http://testserver"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    version = response.json()["version"]
    assert (version["id"], version["status"]) == ("v2.0", "DEPRECATED")
    assert {"rel": "self", "href": "http://testserver/compute/v2/"} in version["links"]
    assert version["media-types"][0]["type"] == "application/vnd.openstack.compute+json;version=2"


def test_v2_without_slash_redirects_as_nova(db):
    response = Client().get("/compute/v2")
    assert response.status_code == 302
    assert response["Location"] == "http://testserver/compute/v2/"


@pytest.mark.parametrize("path", ["/compute/v3/", "/compute/nothing", "/compute/v2/servers", "/compute/v2.0/"])
def test_unknown_paths_under_compute_are_nova_json_faults(db, path):
    response = Client().get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"itemNotFound": {"code": 404, "message": "The resource could not be found."}}
