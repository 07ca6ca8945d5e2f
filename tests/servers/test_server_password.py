"""GET and DELETE /servers/{id}/os-server-password: Nova's encrypted
password from the metadata service. Corral has no metadata service, so no
server has one: GET answers an empty password, DELETE clears nothing and
answers 204; both 404 for a server the caller cannot see."""

import pytest

from aggregates.servers.models import Server
from tests.helpers import fault
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body


@pytest.fixture
def hosts(cloud):
    cloud.hosts("h1")


@pytest.fixture
def server_id(cloud, hosts, member_api):
    response = member_api.post("/servers", cli_body(cloud.flavor(), cloud.image()), version="2.37")
    assert response.status_code == 202, response.content
    return response.json()["server"]["id"]


def test_a_server_without_a_password_shows_an_empty_one(hosts, server_id, member_api, admin_api):
    for api in (member_api, admin_api):
        response = api.get(f"/servers/{server_id}/os-server-password", version="2.1")
        assert response.status_code == 200, response.content
        assert response.json() == {"password": ""}


def test_clearing_answers_204_and_changes_nothing_else(hosts, server_id, member_api):
    before = Server.objects.values().get(uuid=server_id)
    response = member_api.delete(f"/servers/{server_id}/os-server-password", version="2.1")
    assert response.status_code == 204, response.content
    assert response.content == b""
    assert Server.objects.values().get(uuid=server_id) == before
    assert member_api.get(f"/servers/{server_id}/os-server-password").json() == {"password": ""}


def test_another_projects_server_or_an_unknown_one_is_404(hosts, server_id, token_for):
    other = ApiClient(token_for("member", username="other-user", project_name="other"))
    for method in ("get", "delete"):
        response = getattr(other, method)(f"/servers/{server_id}/os-server-password", version="2.1")
        assert response.status_code == 404, response.content
        assert fault(response, 404, "itemNotFound") == f"Instance {server_id} could not be found."
    missing = "6f1d0d9e-3a44-4b57-9e1e-0f6c4c1b2a11"
    response = other.get(f"/servers/{missing}/os-server-password")
    assert fault(response, 404, "itemNotFound") == f"Instance {missing} could not be found."


def test_a_deleted_server_is_404(hosts, server_id, member_api):
    assert member_api.delete(f"/servers/{server_id}").status_code == 204
    response = member_api.get(f"/servers/{server_id}/os-server-password")
    assert response.status_code == 404, response.content


def test_query_parameters_are_refused_from_2_102(hosts, server_id, member_api):
    ok = member_api.get(f"/servers/{server_id}/os-server-password?foo=1", version="2.101")
    assert ok.status_code == 200, ok.content
    response = member_api.get(f"/servers/{server_id}/os-server-password?foo=1", version="2.102")
    assert fault(response, 400, "badRequest") == (
        "Invalid input for query parameters foo. Value: 1. Additional properties are not allowed ('foo' was unexpected)"
    )
