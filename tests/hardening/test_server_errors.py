"""A server error never shows its internals (issue 11): each API answers a
generic message in its own format, and the log holds the traceback with the
request id the client was given."""

import logging

import pytest
from django.db import IntegrityError
from django.test import Client

SECRET = 'duplicate key value violates unique constraint "secret_constraint_name"'


def _boom(*args, **kwargs):
    raise IntegrityError(SECRET)


def _assert_logged(caplog, request_id):
    records = [r for r in caplog.records if r.levelno >= logging.ERROR and request_id in r.getMessage()]
    assert records, [r.getMessage() for r in caplog.records]
    assert any(r.exc_info and SECRET in str(r.exc_info[1]) for r in records)


def test_placement_500_is_generic_and_logged(db, settings, monkeypatch, caplog):
    settings.AUTH_STRATEGY = "noauth2"
    monkeypatch.setattr("placement.api.base.ensure_standard_names", _boom)
    response = Client().get(
        "/placement/resource_providers", headers={"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.30"}
    )
    assert response.status_code == 500
    assert b"secret_constraint_name" not in response.content
    (error,) = response.json()["errors"]
    assert error["status"] == 500 and error["detail"] and error["title"] == "Internal Server Error"
    assert error["request_id"] == response.headers["X-OpenStack-Request-ID"]
    _assert_logged(caplog, error["request_id"])


def test_compute_500_is_generic_and_logged(admin_api, monkeypatch, caplog):
    monkeypatch.setattr("aggregates.compute_api.base.caller_of", _boom)
    response = admin_api.get("/flavors")
    assert response.status_code == 500
    assert b"secret_constraint_name" not in response.content
    assert response.json()["computeFault"]["code"] == 500
    _assert_logged(caplog, response.headers["X-Compute-Request-ID"])


def test_identity_500_is_generic_and_logged(db, monkeypatch, caplog):
    monkeypatch.setattr("aggregates.identity.api.version_document", _boom)
    response = Client().get("/identity/v3")
    assert response.status_code == 500
    assert b"secret_constraint_name" not in response.content
    assert response.json()["error"]["code"] == 500
    _assert_logged(caplog, response.headers["X-OpenStack-Request-ID"])


def test_image_500_is_generic_and_logged(db, monkeypatch, caplog):
    monkeypatch.setattr("aggregates.images.api.views._caller", _boom)
    response = Client().get("/image/v2/images", headers={"X-Auth-Token": "x", "Accept": "application/json"})
    assert response.status_code == 500
    assert b"secret_constraint_name" not in response.content
    assert response.json()["code"] == "500 Internal Server Error"
    _assert_logged(caplog, response.headers["X-OpenStack-Request-ID"])


@pytest.mark.parametrize(
    "path, key",
    [("/compute/v2.1/flavors", "computeFault"), ("/identity/v3", "error")],
)
def test_an_error_escaping_the_api_handler_is_still_json(admin_api, monkeypatch, caplog, path, key):
    """An exception after the API's own handler (here: while finishing the
    response) reaches Django, whose page is HTML: the API path still gets JSON."""
    monkeypatch.setattr("rest_framework.views.APIView.finalize_response", _boom)
    client = Client(raise_request_exception=False)
    response = client.get(path, headers={"X-Auth-Token": admin_api.token})
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert key in response.json()
    assert b"secret_constraint_name" not in response.content
    request_id = response.headers["X-OpenStack-Request-ID"]
    assert any(request_id in r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR)


def test_console_errors_stay_html(admin_api, monkeypatch):
    """Only API paths are rewritten: the console keeps Django's page."""
    monkeypatch.setattr("rest_framework.views.APIView.finalize_response", _boom)
    response = Client(raise_request_exception=False).get("/login/")
    assert "json" not in response.get("Content-Type", "")
