"""GET /os-instance_usage_audit_log[/{before_timestamp}]: Nova's report of
its monthly instance usage audit. Corral runs no audit, so every compute
host (disabled ones too) is one the audit has not run on, as Nova reports a
period no audit ran in."""

from datetime import UTC, datetime

import pytest

from tests.helpers import fault

KEYS = {
    "period_beginning",
    "period_ending",
    "num_hosts",
    "num_hosts_done",
    "num_hosts_running",
    "num_hosts_not_run",
    "hosts_not_run",
    "total_instances",
    "total_errors",
    "overall_status",
    "log",
}


@pytest.fixture
def hosts(cloud):
    cloud.hosts("h1", "h2")
    cloud.disable("h2")


def test_the_last_month_with_no_host_done(hosts, admin_api):
    response = admin_api.get("/os-instance_usage_audit_log")
    assert response.status_code == 200, response.content
    (name,) = response.json()
    log = response.json()[name]
    assert name == "instance_usage_audit_logs" and set(log) == KEYS
    now = datetime.now(UTC)
    end = datetime(now.year, now.month, 1)
    begin = datetime(end.year - (end.month == 1), (end.month - 2) % 12 + 1, 1)
    assert log == {
        "period_beginning": str(begin),
        "period_ending": str(end),
        "num_hosts": 2,
        "num_hosts_done": 0,
        "num_hosts_running": 0,
        "num_hosts_not_run": 2,
        "hosts_not_run": ["h1", "h2"],
        "total_instances": 0,
        "total_errors": 0,
        "overall_status": "0 of 2 hosts done. 0 errors.",
        "log": {},
    }


@pytest.mark.parametrize(
    ("before", "beginning", "ending"),
    [
        ("2012-07-15 10:00:00", "2012-06-01 00:00:00", "2012-07-01 00:00:00"),
        ("2012-07-01 00:00:00", "2012-05-01 00:00:00", "2012-06-01 00:00:00"),
        ("2013-01-01 00:00:00.5", "2012-12-01 00:00:00", "2013-01-01 00:00:00"),
        ("2013-01-01 00:00:00", "2012-11-01 00:00:00", "2012-12-01 00:00:00"),
        ("2013-02-03 04:05:06", "2013-01-01 00:00:00", "2013-02-01 00:00:00"),
    ],
)
def test_the_period_completed_before_a_timestamp(hosts, admin_api, before, beginning, ending):
    response = admin_api.get(f"/os-instance_usage_audit_log/{before}")
    assert response.status_code == 200, response.content
    log = response.json()["instance_usage_audit_log"]
    assert (log["period_beginning"], log["period_ending"]) == (beginning, ending)
    assert log["hosts_not_run"] == ["h1", "h2"] and log["overall_status"] == "0 of 2 hosts done. 0 errors."


def test_no_host_at_all_is_all_done(admin_api):
    log = admin_api.get("/os-instance_usage_audit_log").json()["instance_usage_audit_logs"]
    assert (log["num_hosts"], log["hosts_not_run"], log["overall_status"]) == (0, [], "ALL hosts done. 0 errors.")


@pytest.mark.parametrize("before", ["yesterday", "2012-07-15T10:00:00", "2012-13-01 00:00:00", "2012-07-15 10:00:00."])
def test_a_bad_timestamp_is_a_400(admin_api, before):
    response = admin_api.get(f"/os-instance_usage_audit_log/{before}")
    assert fault(response, 400, "badRequest") == f"Invalid timestamp for date {before}"


def test_admins_and_readers_only_and_strict_queries_from_2_102(admin_api, member_api, reader_api):
    assert reader_api.get("/os-instance_usage_audit_log").status_code == 200
    for api in (member_api,):
        response = api.get("/os-instance_usage_audit_log")
        assert fault(response, 403, "forbidden") == (
            "Policy doesn't allow os_compute_api:os-instance-usage-audit-log:list to be performed."
        )
        response = api.get("/os-instance_usage_audit_log/yesterday")
        assert fault(response, 403, "forbidden") == (
            "Policy doesn't allow os_compute_api:os-instance-usage-audit-log:show to be performed."
        )
    assert admin_api.get("/os-instance_usage_audit_log?foo=1", version="2.101").status_code == 200
    response = admin_api.get("/os-instance_usage_audit_log?foo=1", version="2.102")
    assert fault(response, 400, "badRequest") == (
        "Invalid input for query parameters foo. Value: 1. Additional properties are not allowed ('foo' was unexpected)"
    )
