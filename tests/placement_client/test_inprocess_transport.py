"""The in-process transport: with PLACEMENT_URL empty, the placement client
hands its requests to Corral's own placement in this process (no socket),
and the answers are those placement gives over HTTP."""

import os
import socket
import subprocess
import sys
import uuid
from datetime import timedelta

import pytest
import requests
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client
from django.urls import get_urlconf, set_urlconf

from aggregates import placement_client
from aggregates.identity import service_token
from aggregates.identity import services as identity
from aggregates.identity.models import Token
from aggregates.mirroring.models import PlacementMirrorRequest, ProviderSyncRequest
from aggregates.placement_client import PlacementClient, PlacementTransactionError, inprocess
from placement import models as pm
from placement.standards import sync_standard_names
from tests.plugins.api import add_host, create_aggregate

VERSION = "1.39"


def new_uuid():
    return str(uuid.uuid4())


@pytest.fixture
def no_sockets(monkeypatch):
    """Any attempt to connect a socket fails the test."""
    attempts = []

    def refuse(sock, address):
        attempts.append(address)
        raise AssertionError(f"a socket was connected to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


@pytest.fixture
def own(settings, monkeypatch):
    """Corral's own placement, in process, in keystone mode (the client
    authenticates with the token Corral issues for its service user)."""
    settings.PLACEMENT_URL = ""
    settings.PLACEMENT_AUTH_TOKEN, settings.AUTH_STRATEGY = "", "keystone"
    service_token.forget_service_token()
    return placement_client.client()


# --- choosing the transport ------------------------------------------------------------


@pytest.mark.parametrize(
    "url, public_url, in_process",
    [
        ("", "", True),
        ("   ", "", True),
        (inprocess.INPROCESS_URL, "", True),
        (inprocess.INPROCESS_URL + "/", "", True),
        ("https://cloud.example.test/placement", "https://cloud.example.test", True),
        ("https://cloud.example.test/placement/", "https://cloud.example.test", True),
        ("https://other.example.test/placement", "https://cloud.example.test", False),
        ("http://127.0.0.1:8000/placement", "", False),
        ("http://127.0.0.1:8778", "", False),
    ],
)
def test_which_urls_mean_our_own_placement(settings, url, public_url, in_process):
    settings.PUBLIC_URL = public_url
    assert inprocess.is_own_placement(url) is in_process
    client = PlacementClient(base_url=url, token="admin")
    assert client.in_process is in_process
    assert client.base_url == (inprocess.INPROCESS_URL if in_process else url.rstrip("/"))


def test_a_placement_only_server_never_calls_its_public_url_in_process(settings):
    settings.PUBLIC_URL, settings.CORRAL_SERVICE = "https://placement.example.test", "placement"
    assert not inprocess.is_own_placement("https://placement.example.test/placement")


def test_the_default_setting_is_in_process():
    """conftest points every test at a closed port: the shipped default is
    checked in a fresh process without PLACEMENT_URL in its environment."""
    env = {k: v for k, v in os.environ.items() if k != "PLACEMENT_URL"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "from aggregates.placement_client import PlacementClient; "
        "client = PlacementClient(token='x'); print(repr(settings.PLACEMENT_URL), client.in_process, client.base_url)"
    )
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["''", "True", "http://corral.internal/placement"], result.stderr[-2000:]


# --- the client against our placement, in process -------------------------------------------


@pytest.mark.django_db
def test_client_creates_providers_and_sets_aggregates_in_placements_tables(own, no_sockets):
    assert own.in_process and own.base_url == "http://corral.internal/placement"
    provider, aggregates = new_uuid(), [new_uuid(), new_uuid()]
    assert own.create_provider(provider, "node1") == 0
    assert own.change_provider_aggregates(provider, add=aggregates) is True
    assert own.provider_aggregates(provider) == (set(aggregates), 1)
    assert own.provider_uuid_by_name("node1") == provider
    assert own.set_trait(provider, "COMPUTE_STATUS_DISABLED", True).changed
    assert own.requests_made >= 7
    # The rows are in placement's own tables.
    row = pm.ResourceProvider.objects.get(uuid=provider)
    assert row.name == "node1" and row.generation == 2
    assert sorted(row.aggregates.values_list("uuid", flat=True)) == sorted(aggregates)
    assert list(row.traits.values_list("name", flat=True)) == ["COMPUTE_STATUS_DISABLED"]
    assert no_sockets == []


@pytest.mark.django_db
def test_errors_are_mapped_as_over_http(own):
    with pytest.raises(placement_client.ProviderNotFound) as raised:
        own.provider_aggregates(new_uuid())
    assert raised.value.status == 404
    provider = new_uuid()
    own.create_provider(provider, "node1")
    with pytest.raises(placement_client.PlacementError) as raised:
        own.create_provider(new_uuid(), "node1")
    assert raised.value.status == 409 and "node1 already exists" in raised.value.message
    assert own.delete_provider(provider) is True and own.delete_provider(provider) is False


@pytest.mark.django_db
def test_an_expired_service_token_is_renewed_once(own):
    own.list_providers()  # issues the service token
    revoked = service_token.service_token()
    assert identity.revoke_token(revoked)
    before = own.requests_made
    assert own.list_providers() == []
    assert own.requests_made - before == 2  # a 401, then the same request with a new token
    assert service_token.service_token() != revoked


@pytest.mark.django_db
def test_the_client_asks_its_token_provider_for_a_new_token_once_after_a_401(settings):
    settings.PLACEMENT_URL, settings.AUTH_STRATEGY, settings.PLACEMENT_AUTH_TOKEN = "", "keystone", ""
    service_token.forget_service_token()
    valid, asked = service_token.service_token(), []

    def provider(renew=False):
        asked.append(renew)
        return valid if renew else "not-a-token"

    client = PlacementClient(token_provider=provider)
    assert client.list_providers() == [] and client.requests_made == 2
    assert asked == [False, True]
    same = PlacementClient(token_provider=lambda renew=False: "not-a-token")
    with pytest.raises(placement_client.PlacementError) as raised:
        same.list_providers()
    assert raised.value.status == 401 and same.requests_made == 1  # the same token is not sent again


@pytest.mark.django_db
def test_noauth2_admin_token_in_process(settings):
    settings.PLACEMENT_URL, settings.AUTH_STRATEGY, settings.PLACEMENT_AUTH_TOKEN = "", "noauth2", ""
    client = placement_client.client()
    response = client.request("GET", "/resource_providers", VERSION)
    assert response.status_code == 200 and response.json() == {"resource_providers": []}
    denied = PlacementClient(token="bob:project").request("GET", "/resource_providers", VERSION)
    assert denied.status_code == 403 and denied.json()["errors"][0]["code"] == "placement.undefined_code"


@pytest.mark.django_db
def test_the_response_is_a_real_requests_response(own):
    response = own.request("POST", "/resource_providers", "1.20", body={"name": "n1", "uuid": new_uuid()})
    assert isinstance(response, requests.Response)
    assert response.status_code == 200 and response.reason == "OK" and response.ok
    assert response.headers["content-type"] == "application/json"
    assert response.headers["Content-Length"] == str(len(response.content))
    assert response.url == "http://corral.internal/placement/resource_providers"
    assert response.request.headers["OpenStack-API-Version"] == "placement 1.20"
    assert response.json()["name"] == "n1"
    assert list(response.iter_content(4))[0] == response.content[:4]
    assert response.elapsed >= timedelta(0)


@pytest.mark.django_db
def test_query_strings_and_quoted_paths_reach_placement(own):
    own.create_provider(new_uuid(), "name with spaces & more")
    assert [p["name"] for p in own.list_providers(name="name with spaces & more")] == ["name with spaces & more"]
    response = own.request("GET", "/traits/CUSTOM_%E2%9C%93", VERSION)
    assert response.status_code == 404  # reached the trait route, quoted


@pytest.mark.django_db
def test_the_calling_requests_urlconf_and_connection_are_left_alone(own):
    connection.ensure_connection()
    raw = connection.connection
    set_urlconf("config.urls")
    try:
        own.create_provider(new_uuid(), "node1")
        assert get_urlconf() == "config.urls"
    finally:
        set_urlconf(None)
    assert connection.connection is raw  # not closed (no request_finished signal)
    assert own.list_providers(name="node1")


# --- never inside a transaction -------------------------------------------------------------


@pytest.mark.django_db
def test_refused_inside_a_transaction_before_anything_is_sent(own, no_sockets, monkeypatch):
    sent, before = [], own.requests_made
    monkeypatch.setattr(inprocess, "call_placement", lambda request: sent.append(request))
    with transaction.atomic():
        with pytest.raises(PlacementTransactionError, match="never called with a database transaction open"):
            own.create_provider(new_uuid(), "node1")
    assert sent == [] and own.requests_made == before
    assert not Token.objects.exists()  # not even a token was issued
    assert not pm.ResourceProvider.objects.exists()


@pytest.mark.django_db
def test_the_transport_itself_refuses_inside_a_transaction(settings):
    session = inprocess.mount(requests.Session())
    with transaction.atomic(), pytest.raises(PlacementTransactionError):
        session.get(inprocess.INPROCESS_URL + "/", headers={"X-Auth-Token": "admin"})
    assert session.get(inprocess.INPROCESS_URL + "/").status_code == 200  # the test's own transaction is fine


@pytest.mark.django_db
def test_the_http_path_refuses_inside_a_transaction_too(closed_port_url, no_sockets):
    client = PlacementClient(base_url=closed_port_url, token="admin")
    assert not client.in_process
    with transaction.atomic(), pytest.raises(PlacementTransactionError):
        client.list_providers()
    assert no_sockets == [] and client.requests_made == 0  # a new client: nothing sent
    with pytest.raises(AssertionError, match="a socket was connected"):
        client.list_providers()  # outside a transaction it does try the socket


@pytest.mark.django_db(transaction=True)
def test_refused_in_a_real_transaction_and_fine_after_commit(own):
    """Without a test case's transaction around: an atomic block refuses, and
    on_commit (how the mirroring calls placement) runs after the commit."""
    provider = new_uuid()
    outcome = []
    with transaction.atomic():
        with pytest.raises(PlacementTransactionError):
            own.list_providers()
        transaction.on_commit(lambda: outcome.append(own.create_provider(provider, "node1")))
    assert outcome == [0]
    assert pm.ResourceProvider.objects.filter(uuid=provider).exists()
    connection.set_autocommit(False)
    try:
        with pytest.raises(PlacementTransactionError):
            own.list_providers()
    finally:
        connection.rollback()
        connection.set_autocommit(True)


# --- the same answers as over HTTP -----------------------------------------------------------

# Added by the web server, not by placement: not compared.
SERVER_HEADERS = {"date", "server", "connection"}
# Differ between any two answers: compared for presence only.
PER_ANSWER_HEADERS = {"x-openstack-request-id", "last-modified"}


def comparable(response):
    headers = {}
    for name, value in response.headers.items():
        name = name.lower()
        if name not in SERVER_HEADERS:
            headers[name] = "(present)" if name in PER_ANSWER_HEADERS else value
    body = response.json() if response.content else None
    if body and "errors" in body:
        for error in body["errors"]:
            assert error.pop("request_id").startswith("req-")
    return response.status_code, headers, body


@pytest.mark.django_db(transaction=True)
def test_the_same_answers_as_over_http(own_placement):
    over_http = own_placement.client
    in_process = PlacementClient(base_url="")
    assert in_process.in_process and not over_http.in_process
    provider = new_uuid()
    own_placement.create_provider(provider, "node1")
    calls = [
        ("GET", "/", VERSION, None, None),
        ("GET", "/resource_providers", "1.14", None, {"name": "node1"}),
        ("GET", "/resource_providers", "1.14", None, {"name": "nothing-by-that-name"}),
        ("GET", f"/resource_providers/{provider}/aggregates", "1.19", None, None),
        ("GET", f"/resource_providers/{new_uuid()}", VERSION, None, None),  # 404
        ("GET", "/resource_providers", "9.99", None, None),  # 406
        ("POST", "/resource_providers", "1.20", {"name": "node1"}, None),  # 409 duplicate name
        (
            "PUT",
            f"/resource_providers/{provider}/aggregates",
            "1.23",
            {"aggregates": [], "resource_provider_generation": 7},
            None,
        ),  # 409 concurrent update
        ("DELETE", "/resource_providers", VERSION, None, None),  # 405
    ]
    statuses = []
    for method, path, version, body, params in calls:
        http_answer = over_http.request(method, path, version, body=body, params=params)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(socket.socket, "connect", lambda *a: pytest.fail("in-process call opened a socket"))
            local_answer = in_process.request(method, path, version, body=body, params=params)
        assert comparable(local_answer) == comparable(http_answer), (method, path)
        if not http_answer.content or "errors" not in http_answer.json():
            assert local_answer.content == http_answer.content  # byte for byte
        statuses.append(local_answer.status_code)
    assert statuses == [200, 200, 200, 200, 404, 406, 409, 409, 405]


# --- end to end -----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_add_host_is_mirrored_in_process_with_the_default_settings(settings, admin_api, make_host, no_sockets):
    """PLACEMENT_URL empty (the default), eager Celery, keystone mode, no live
    server: the registration creates the provider and add_host mirrors the
    aggregate, both from the tasks run in the request's own thread after the
    commit; the console then shows the host in placement."""
    settings.PLACEMENT_URL, settings.AUTH_STRATEGY, settings.PLACEMENT_AUTH_TOKEN = "", "keystone", ""
    sync_standard_names()  # transactional tests empty the tables, standard names included
    node = make_host("h1")
    assert ProviderSyncRequest.objects.get().status == ProviderSyncRequest.DONE
    assert pm.ResourceProvider.objects.filter(uuid=str(node.uuid), name=node.hypervisor_hostname).exists()

    aggregate = create_aggregate(admin_api, "agg1")
    response = add_host(admin_api, aggregate, "h1")
    assert response.json()["aggregate"]["hosts"] == ["h1"]  # the outer request rendered after the inner calls
    assert PlacementMirrorRequest.objects.get().status == PlacementMirrorRequest.DONE
    assert set(
        pm.ResourceProviderAggregate.objects.filter(resource_provider__uuid=str(node.uuid)).values_list(
            "aggregate__uuid", flat=True
        )
    ) == {aggregate["uuid"]}

    console = Client()
    console.force_login(get_user_model().objects.create_user("op", is_staff=True, is_superuser=True))
    page = console.get(f"/aggregates/{aggregate['id']}/")
    assert page.status_code == 200
    (row,) = page.context["host_rows"]
    assert row["mirror"][:2] == ("ok", "in placement")
    assert no_sockets == []
