"""GET and HEAD /healthcheck, as oslo.middleware's healthcheck answers them:
what a load balancer sees, what an admin sees, and the states that take a
node out of the pool (database, migrations, the disable file) or do not
(placement, broker)."""

import json

import pytest
from django.core.management import call_command
from django.db import connections
from django.test import Client


def get(token=None, accept=None, method="get"):
    headers = {}
    if token:
        headers["X-Auth-Token"] = token
    if accept:
        headers["Accept"] = accept
    return getattr(Client(), method)("/healthcheck", headers=headers)


@pytest.fixture
def own_placement(settings):
    settings.PLACEMENT_URL = ""


def test_get_answers_200_ok_in_plain_text(db, own_placement):
    response = get()
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert response.content == b"OK"


def test_head_answers_204_without_a_body(db, own_placement):
    response = get(method="head")
    assert response.status_code == 204
    assert response.content == b""


def test_json_when_asked_and_not_detailed_without_an_admin_token(db, own_placement, member_api):
    for token in (None, member_api.token, "not-a-token"):
        response = get(token, accept="application/json")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"detailed": False, "reasons": ["OK"]}


def test_plain_text_wins_a_tie_and_an_unknown_type(db, own_placement):
    assert get(accept="text/html").content == b"OK"
    assert get(accept="*/*").content == b"OK"


def test_an_admin_gets_each_check_its_state_and_its_seconds(db, own_placement, admin_api):
    response = get(admin_api.token, accept="application/json")
    assert response.status_code == 200
    body = response.json()
    assert body["detailed"] is True
    checks = {reason["class"]: reason for reason in body["reasons"]}
    assert set(checks) == {"database", "migrations", "placement", "broker"}
    for check in checks.values():
        assert check["state"] == "ok"
        assert check["reason"] == "OK"
        assert 0 <= check["seconds"] < 5


def test_every_other_method_is_refused(db, own_placement):
    assert Client().post("/healthcheck").status_code == 405
    assert Client().delete("/healthcheck").status_code == 405


def test_a_placement_outage_keeps_the_node_in_the_pool_and_shows_as_degraded(db, settings, admin_api):
    settings.PLACEMENT_URL = "http://127.0.0.1:9/placement"  # nothing listens there
    anonymous = get(accept="application/json")
    assert anonymous.status_code == 200
    assert anonymous.json() == {"detailed": False, "reasons": ["OK"]}
    assert get().content == b"OK"

    detailed = get(admin_api.token, accept="application/json").json()
    placement = next(r for r in detailed["reasons"] if r["class"] == "placement")
    assert placement["state"] == "degraded"
    assert placement["reason"] == "PLACEMENT UNAVAILABLE"
    assert "127.0.0.1:9" in placement["details"]


def test_a_broker_outage_keeps_the_node_in_the_pool_and_shows_as_degraded(db, own_placement, settings, admin_api):
    from config import celery_app

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"
    saved = celery_app.conf.broker_url
    celery_app.conf.broker_url = settings.CELERY_BROKER_URL
    try:
        assert get().status_code == 200
        detailed = get(admin_api.token, accept="application/json").json()
    finally:
        celery_app.conf.broker_url = saved
    broker = next(r for r in detailed["reasons"] if r["class"] == "broker")
    assert broker["state"] == "degraded"
    assert broker["reason"] == "BROKER UNAVAILABLE"


def test_the_disable_file_drains_the_node(db, own_placement, settings, tmp_path, admin_api):
    switch = tmp_path / "healthcheck_disable"
    settings.HEALTHCHECK_DISABLE_BY_FILE = str(switch)
    assert get().status_code == 200

    switch.touch()
    response = get()
    assert response.status_code == 503
    assert response.content == b"DISABLED BY FILE"
    assert get(method="head").status_code == 503
    assert get(accept="application/json").json() == {"detailed": False, "reasons": ["DISABLED BY FILE"]}
    detailed = get(admin_api.token, accept="application/json").json()
    assert detailed["reasons"][0]["class"] == "disable_by_file"
    assert str(switch) in detailed["reasons"][0]["details"]

    switch.unlink()
    assert get().status_code == 200


def test_an_unreachable_database_answers_503_and_tells_a_stranger_nothing(db, own_placement, monkeypatch, admin_api):
    # The check opens a connection of its own from the database settings:
    # point them at a database that cannot be opened (the requests' own
    # connection, already open, still reads the admin's token).
    admin_token = admin_api.token
    missing = "/nonexistent-directory/corral.sqlite3"
    monkeypatch.setitem(connections.settings["default"], "NAME", missing)

    response = get()
    assert response.status_code == 503
    assert response.content == b"DATABASE UNAVAILABLE"
    assert get(method="head").status_code == 503
    anonymous = get(accept="application/json")
    assert anonymous.status_code == 503
    assert anonymous.json() == {"detailed": False, "reasons": ["DATABASE UNAVAILABLE"]}
    assert "nonexistent" not in anonymous.content.decode()

    detailed = get(admin_token, accept="application/json").json()
    database = next(r for r in detailed["reasons"] if r["class"] == "database")
    assert database["state"] == "failed"
    assert "OperationalError" in database["details"]
    assert "migrations" not in {r["class"] for r in detailed["reasons"]}


@pytest.mark.django_db(transaction=True)
def test_a_migration_not_applied_answers_503(own_placement):
    call_command("migrate", "aggregates", "0014", verbosity=0)
    try:
        response = get()
        assert response.status_code == 503
        assert response.content == b"MIGRATIONS NOT APPLIED"
        assert json.loads(get(accept="application/json").content)["reasons"] == ["MIGRATIONS NOT APPLIED"]
    finally:
        call_command("migrate", verbosity=0)
    assert get().status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_token_that_cannot_be_checked_while_the_database_is_down_gets_the_plain_answer(
    own_placement, monkeypatch, token_for
):
    admin_token = token_for("admin")
    monkeypatch.setitem(connections.settings["default"], "NAME", "/nonexistent-directory/corral.sqlite3")
    connections["default"].close()  # the requests' own connection cannot be opened again either

    response = get(admin_token, accept="application/json")
    assert response.status_code == 503
    assert response.json() == {"detailed": False, "reasons": ["DATABASE UNAVAILABLE"]}
