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
from tests.plugins.api import ApiClient


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


# Rules Nova and Glance name that Corral used to check in code: named in the
# table with their defaults, and a policy file changes what each one allows.
NAMED_RULES = {
    "os_compute_api:servers:index:get_all_tenants": "rule:context_is_admin",
    "os_compute_api:servers:detail:get_all_tenants": "rule:context_is_admin",
    "os_compute_api:servers:create:forced_host": "rule:context_is_admin",
    "compute:servers:create:requested_destination": "rule:context_is_admin",
    "os_compute_api:os-admin-actions:reset_state": "rule:context_is_admin",
    "os_compute_api:os-simple-tenant-usage:list": "rule:admin_reader_api",
    "os_compute_api:os-simple-tenant-usage:show": "(rule:admin_reader_api or project_id:%(project_id)s)",
    "os_compute_api:os-instance-usage-audit-log:list": "rule:admin_reader_api",
    "os_compute_api:os-instance-usage-audit-log:show": "rule:admin_reader_api",
    "get_images": "(rule:admin_reader_api or rule:project_reader_api or rule:project_member_api)",
    "get_image": "(rule:admin_reader_api or rule:project_reader_api or rule:project_member_api)",
    "download_image": "(rule:admin_reader_api or rule:project_reader_api or rule:project_member_api)",
}


def test_the_rules_once_checked_in_code_are_named_with_their_defaults():
    effective = policy.effective()
    assert {name: effective[name] for name in NAMED_RULES} == NAMED_RULES


def test_a_policy_file_moves_the_rules_once_checked_in_code(member_api, admin_api, settings, tmp_path):
    other_project = "0" * 32
    member_images, admin_images = (ApiClient(api.token, prefix="/image/v2") for api in (member_api, admin_api))
    # Corral's own defaults: as before, the admin's (a member's own project's usage is its own).
    assert member_api.get("/servers/detail?all_tenants=1").status_code == 403
    assert member_api.get("/servers?all_tenants=1").status_code == 403
    assert member_api.get("/os-simple-tenant-usage").status_code == 403
    assert member_api.get(f"/os-simple-tenant-usage/{other_project}").status_code == 403
    assert member_api.get("/os-instance_usage_audit_log").status_code == 403
    assert member_images.get("/images").status_code == 200
    assert admin_images.get("/images").status_code == 200

    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(
        '"os_compute_api:servers:detail:get_all_tenants": "role:member"\n'
        '"os_compute_api:os-simple-tenant-usage:list": "role:member"\n'
        '"os_compute_api:os-simple-tenant-usage:show": "role:member"\n'
        '"os_compute_api:os-instance-usage-audit-log:list": "role:member"\n'
        '"get_images": "role:admin"\n'
    )
    settings.POLICY_FILE = str(policy_file)
    assert member_api.get("/servers/detail?all_tenants=1").status_code == 200
    assert member_api.get("/servers?all_tenants=1").status_code == 403  # index has its own rule
    assert member_api.get("/os-simple-tenant-usage").status_code == 200
    assert member_api.get(f"/os-simple-tenant-usage/{other_project}").status_code == 200
    assert member_api.get("/os-instance_usage_audit_log").status_code == 200
    assert member_images.get("/images").status_code == 403
    assert admin_images.get("/images").status_code == 200


def test_an_edited_policy_file_takes_effect_on_the_next_check(settings, tmp_path):
    member = policy.creds(["member"], "p1")
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text('"os_compute_api:os-aggregates:index": "role:member"\n')
    settings.POLICY_FILE = str(policy_file)
    assert policy.allowed("os_compute_api:os-aggregates:index", member)
    assert policy.allowed("os_compute_api:os-aggregates:index", member)  # the decision, taken again
    # Edited in place, no setting changed: the next check follows the file.
    policy_file.write_text('"os_compute_api:os-aggregates:index": "role:admin"\n')
    assert not policy.allowed("os_compute_api:os-aggregates:index", member)
    assert policy.allowed("os_compute_api:os-aggregates:index", policy.creds(["admin"], "p1"))
