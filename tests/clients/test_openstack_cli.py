"""End to end: the stock ``openstack`` CLI logs in to a live Corral with a
password and manages aggregates.

The CLI is the one named by $OPENSTACK_CLI, else the pinned one that
tests/provision.py installs into var/oscvenv on first use.
"""

import json
import os
import subprocess

import pytest

from aggregates.host_aggregates.models import Aggregate
from aggregates.identity import services as identity
from tests import provision
from tests.conftest import make_user

OPENSTACK = provision.openstack_cli()  # installed into var/oscvenv on first use

PASSWORD = "cli-secret"
CLOUDS_YAML = """\
clouds:
  corral:
    auth_type: password
    auth:
      auth_url: {base}/identity
      username: operator
      password: {password}
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    identity_api_version: 3
    interface: public
    region_name: {region}
"""


@pytest.fixture
def cloud(live_server, transactional_db, settings, tmp_path):
    """A clouds.yaml for an admin of project "admin"; returns a function
    that runs ``openstack --os-cloud corral ARGS`` and gives (returncode, stdout, stderr)."""
    settings.AUTH_STRATEGY = "keystone"
    settings.PUBLIC_URL = ""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user, project = make_user("operator", "admin", project_name="admin")
    user.set_password(PASSWORD)
    user.save()
    (tmp_path / "clouds.yaml").write_text(
        CLOUDS_YAML.format(base=live_server.url, password=PASSWORD, region=settings.REGION_NAME)
    )
    # OS_* variables would override clouds.yaml; HOME keeps the user's own
    # clouds.yaml out, and the current directory's comes first.
    env = {key: value for key, value in os.environ.items() if not key.startswith("OS_")}
    env["HOME"] = str(tmp_path)
    env.pop("XDG_CONFIG_HOME", None)

    def run(*args):
        done = subprocess.run(
            [OPENSTACK, "--os-cloud", "corral", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        return done.returncode, done.stdout, done.stderr

    run.user, run.project = user, project
    return run


def run_json(cloud, *args):
    returncode, stdout, stderr = cloud(*args, "-f", "json")
    assert returncode == 0, stderr
    return json.loads(stdout)


def run_quiet(cloud, *args):
    returncode, stdout, stderr = cloud(*args)
    assert returncode == 0, stderr
    assert stdout == ""


def test_token_issue(cloud):
    token = run_json(cloud, "token", "issue")
    assert token["project_id"] == cloud.project.id
    assert token["user_id"] == identity.user_id_of(cloud.user)
    assert identity.caller_for_token(token["id"]).is_admin


def test_wrong_password_is_refused(cloud):
    returncode, _, stderr = cloud("--os-password", "wrong", "token", "issue")
    assert returncode != 0
    assert "The request you have made requires authentication. (HTTP 401)" in stderr


def test_aggregate_lifecycle(cloud):
    created = run_json(cloud, "aggregate", "create", "--zone", "az1", "agg1")
    assert created["name"] == "agg1"
    assert created["availability_zone"] == "az1"
    aggregate = Aggregate.objects.get(name="agg1")
    assert created["id"] == aggregate.id

    listed = run_json(cloud, "aggregate", "list")
    assert [(a["Name"], a["Availability Zone"], a["UUID"]) for a in listed] == [("agg1", "az1", str(aggregate.uuid))]

    shown = run_json(cloud, "aggregate", "show", "agg1")
    assert (shown["id"], shown["availability_zone"], shown["properties"]) == (aggregate.id, "az1", {})

    run_quiet(cloud, "aggregate", "set", "--property", "ssd=true", "agg1")
    assert run_json(cloud, "aggregate", "show", "agg1")["properties"] == {"ssd": "true"}

    run_quiet(cloud, "aggregate", "unset", "--property", "ssd", "agg1")
    assert run_json(cloud, "aggregate", "show", "agg1")["properties"] == {}

    run_quiet(cloud, "aggregate", "delete", "agg1")
    assert run_json(cloud, "aggregate", "list") == []
    assert not Aggregate.objects.exists()
