"""The rule table (config/policy.py) with an operator policy file, in
Corral's own identity mode (fast: no Keystone): the file's rule takes
effect, ``show_policy`` prints the effective policy, and a named file that
does not exist is refused rather than ignored."""

import io

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from oslo_policy.policy import PolicyNotRegistered

from config import policy


def show_policy(*args):
    out = io.StringIO()
    call_command("show_policy", *args, stdout=out)
    return out.getvalue()


def test_a_policy_file_grants_a_role_one_more_rule(member_api, settings, tmp_path):
    assert member_api.get("/os-aggregates").status_code == 403
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text('"os_compute_api:os-aggregates:index": "rule:context_is_admin or role:member"\n')
    settings.POLICY_FILE = str(policy_file)
    assert member_api.get("/os-aggregates").status_code == 200
    assert member_api.post("/os-aggregates", {"aggregate": {"name": "a1"}}).status_code == 403
    assert member_api.get("/os-hypervisors").status_code == 403


def test_show_policy_prints_the_effective_rules(settings, tmp_path):
    printed = show_policy()
    assert '"os_compute_api:os-aggregates:create": "rule:context_is_admin"' in printed
    assert '"placement:resource_providers:list": "rule:admin_or_service_api"' in printed
    assert '"add_image": "rule:project_member_or_admin"' in printed
    assert '"admin_reader_api": "(role:admin or role:reader)"' in printed
    assert len(printed.splitlines()) == len(policy.RULES) + 11  # the base rules

    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text('"os_compute_api:os-aggregates:index": "role:member"\n')
    settings.POLICY_FILE = str(policy_file)
    assert show_policy("--rule", "os_compute_api:os-aggregates:index") == (
        '"os_compute_api:os-aggregates:index": "role:member"\n'
    )


def test_the_reader_reads_admin_views_only_in_corrals_own_identity(settings):
    member_token = policy.creds(["member", "reader"], "p1")
    assert policy.allowed("admin_reader_api", member_token)
    settings.AUTH_STRATEGY = "external-keystone"
    settings.KEYSTONE_AUTH_URL = "http://127.0.0.1:9"
    assert not policy.allowed("admin_reader_api", member_token)
    assert policy.allowed("admin_reader_api", policy.creds(["admin"], "p1"))


def test_a_missing_policy_file_is_refused(settings, tmp_path):
    settings.POLICY_FILE = str(tmp_path / "missing.yaml")
    with pytest.raises(ImproperlyConfigured, match="missing.yaml"):
        policy.allowed("os_compute_api:extensions", policy.creds(["member"], "p1"))


def test_an_unknown_rule_name_raises():
    with pytest.raises(PolicyNotRegistered, match="has not been registered"):
        policy.allowed("os_compute_api:no-such-rule", policy.creds(["admin"], "p1"))
