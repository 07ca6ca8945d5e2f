"""End to end: the stock ``openstack`` CLI logs in to a live Corral with a
password and manages aggregates.

The CLI is the one named by $OPENSTACK_CLI, else the pinned one that
tests/provision.py installs into var/oscvenv on first use.
"""

from aggregates.host_aggregates.models import Aggregate
from aggregates.identity import services as identity
from tests.plugins.openstack_cli import run_json, run_quiet


def test_token_issue(openstack):
    token = run_json(openstack, "token", "issue")
    assert token["project_id"] == openstack.project.id
    assert token["user_id"] == identity.user_id_of(openstack.user)
    assert identity.caller_for_token(token["id"]).is_admin


def test_wrong_password_is_refused(openstack):
    returncode, _, stderr = openstack("--os-password", "wrong", "token", "issue")
    assert returncode != 0
    assert "The request you have made requires authentication. (HTTP 401)" in stderr


def test_aggregate_lifecycle(openstack):
    created = run_json(openstack, "aggregate", "create", "--zone", "az1", "agg1")
    assert created["name"] == "agg1"
    assert created["availability_zone"] == "az1"
    aggregate = Aggregate.objects.get(name="agg1")
    assert created["id"] == aggregate.id

    listed = run_json(openstack, "aggregate", "list")
    assert [(a["Name"], a["Availability Zone"], a["UUID"]) for a in listed] == [("agg1", "az1", str(aggregate.uuid))]

    shown = run_json(openstack, "aggregate", "show", "agg1")
    assert (shown["id"], shown["availability_zone"], shown["properties"]) == (aggregate.id, "az1", {})

    run_quiet(openstack, "aggregate", "set", "--property", "ssd=true", "agg1")
    assert run_json(openstack, "aggregate", "show", "agg1")["properties"] == {"ssd": "true"}

    run_quiet(openstack, "aggregate", "unset", "--property", "ssd", "agg1")
    assert run_json(openstack, "aggregate", "show", "agg1")["properties"] == {}

    run_quiet(openstack, "aggregate", "delete", "agg1")
    assert run_json(openstack, "aggregate", "list") == []
    assert not Aggregate.objects.exists()
