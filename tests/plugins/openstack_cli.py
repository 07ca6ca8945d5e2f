"""The stock ``openstack`` CLI (python-openstackclient with osc-placement),
logged in with a password to a live Corral. The CLI is the one named by
$OPENSTACK_CLI, else the pinned one that tests/provision.py installs into
var/oscvenv on first use: by the session fixture below, never while tests
are collected."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests import provision
from tests.plugins.api import make_user

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


@pytest.fixture(scope="session")
def openstack_cli():
    """The path of the stock CLI, installed on first use."""
    return provision.openstack_cli()


@pytest.fixture(scope="session")
def sdk_clients():
    """(the Python of the stock CLI's virtualenv, which holds openstacksdk
    4.22.0; the bin folder of Ansible's, with its openstack.cloud collection),
    installed on first use."""
    return Path(provision.openstack_cli()).parent / "python", provision.ansible_venv() / "bin"


@pytest.fixture
def openstack(openstack_cli, live_server, transactional_db, settings, tmp_path):
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
            [openstack_cli, "--os-cloud", "corral", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        return done.returncode, done.stdout, done.stderr

    run.user, run.project = user, project
    return run


def run_json(openstack, *args):
    """The CLI's JSON output of ``ARGS -f json`` (it must succeed)."""
    returncode, stdout, stderr = openstack(*args, "-f", "json")
    assert returncode == 0, stderr
    return json.loads(stdout)


def run_quiet(openstack, *args):
    """Run ``ARGS``: it must succeed and print nothing."""
    returncode, stdout, stderr = openstack(*args)
    assert returncode == 0, stderr
    assert stdout == ""
