"""GET /os-simple-tenant-usage[/{tenant_id}]: each project's usage over a
period, from its servers' recorded lifetimes (launched_at to terminated_at)
and their flavors, as Nova computes it; 2.40's paging; Nova's 400s."""

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest

from aggregates.servers.models import Server
from tests.helpers import fault
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

PERIOD = "start=2026-01-01T00:00:00&end=2026-01-01T10:00:00"
SERVER_KEYS = {
    "ended_at",
    "flavor",
    "hours",
    "instance_id",
    "local_gb",
    "memory_mb",
    "name",
    "started_at",
    "state",
    "tenant_id",
    "uptime",
    "vcpus",
}
TOTAL_KEYS = {"start", "stop", "tenant_id", "total_hours", "total_local_gb_usage", "total_memory_mb_usage"}
TOTAL_KEYS |= {"total_vcpus_usage"}


def at(hour, minute=0, day=1):
    return datetime(2026, 1, day, hour, minute, tzinfo=UTC)


@pytest.fixture
def other_api(token_for):
    return ApiClient(token_for("member", username="other-user", project_name="other"))


@pytest.fixture
def usage(cloud, member_api, other_api):
    """In project demo: "a" launched at 02:00 and running, "b" launched the
    day before at 22:00 and deleted at 04:30, "late" launched after the
    period; in project other: "c" launched at 09:00. Flavor: 2 vCPUs,
    512 MB, 10 GB root and 5 ephemeral."""
    cloud.hosts("h1")
    flavor, image = cloud.flavor("m1.usage", vcpus=2, ram=512, disk=10, ephemeral=5), cloud.image()

    def boot(api, name, launched):
        response = api.post("/servers", cli_body(flavor, image, name=name), version="2.37")
        assert response.status_code == 202, response.content
        server_id = response.json()["server"]["id"]
        Server.objects.filter(uuid=server_id).update(launched_at=launched, created_at=launched)
        return server_id

    ids = {
        "a": boot(member_api, "a", at(2)),
        "b": boot(member_api, "b", at(3)),
        "late": boot(member_api, "late", at(11)),
        "c": boot(other_api, "c", at(9)),
    }
    assert member_api.delete(f"/servers/{ids['b']}").status_code == 204
    Server.objects.filter(uuid=ids["b"]).update(
        launched_at=datetime(2025, 12, 31, 22, tzinfo=UTC), terminated_at=at(4, 30), deleted_at=at(4, 30)
    )
    projects = {key: str(Server.objects.get(uuid=value).project_id) for key, value in ids.items()}
    return ids, projects


def get(api, path, version="2.1"):
    response = api.get(path, version=version)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_admin_lists_every_projects_totals(usage, admin_api):
    ids, projects = usage
    body = get(admin_api, f"/os-simple-tenant-usage?{PERIOD}")
    assert list(body) == ["tenant_usages"]
    demo, other = sorted(body["tenant_usages"], key=lambda t: t["tenant_id"] != projects["a"])
    assert set(demo) == TOTAL_KEYS and "server_usages" not in demo
    assert demo == {
        "tenant_id": projects["a"],
        "start": "2026-01-01T00:00:00.000000",
        "stop": "2026-01-01T10:00:00.000000",
        "total_hours": 12.5,
        "total_vcpus_usage": 25.0,
        "total_memory_mb_usage": 6400.0,
        "total_local_gb_usage": 187.5,
    }
    assert other["tenant_id"] == projects["c"] and other["total_hours"] == 1.0
    assert other["total_vcpus_usage"] == 2.0 and other["total_local_gb_usage"] == 15.0
    # Nova's order: by project id
    assert [t["tenant_id"] for t in body["tenant_usages"]] == sorted([projects["a"], projects["c"]])


def test_detailed_lists_each_servers_usage(usage, admin_api):
    ids, projects = usage
    body = get(admin_api, f"/os-simple-tenant-usage?{PERIOD}&detailed=1")
    demo = next(t for t in body["tenant_usages"] if t["tenant_id"] == projects["a"])
    servers = {s["name"]: s for s in demo["server_usages"]}
    assert set(servers) == {"a", "b"}  # "late" launched after the period
    assert set(servers["a"]) == SERVER_KEYS
    assert servers["b"] == {
        "instance_id": ids["b"],
        "name": "b",
        "tenant_id": projects["b"],
        "flavor": "m1.usage",
        "hours": 4.5,
        "vcpus": 2,
        "memory_mb": 512,
        "local_gb": 15,
        "started_at": "2025-12-31T22:00:00.000000",
        "ended_at": "2026-01-01T04:30:00.000000",
        "state": "terminated",
        "uptime": 6 * 3600 + 1800,
    }
    running = servers["a"]
    assert running["hours"] == 8.0 and running["ended_at"] is None and running["state"] == "active"
    expected = (datetime.now(UTC) - at(2)).total_seconds()
    assert expected - 60 < running["uptime"] <= expected


def test_a_member_reads_its_own_project_only(usage, member_api, other_api, admin_api, reader_api):
    ids, projects = usage
    # a reader sees every admin view, this one too
    assert len(get(reader_api, f"/os-simple-tenant-usage?{PERIOD}")["tenant_usages"]) == 2
    assert get(reader_api, f"/os-simple-tenant-usage/{projects['c']}?{PERIOD}")["tenant_usage"]["total_hours"] == 1.0
    own = get(member_api, f"/os-simple-tenant-usage/{projects['a']}?{PERIOD}")["tenant_usage"]
    assert own["total_hours"] == 12.5 and {s["name"] for s in own["server_usages"]} == {"a", "b"}
    assert get(admin_api, f"/os-simple-tenant-usage/{projects['c']}?{PERIOD}")["tenant_usage"]["total_hours"] == 1.0
    response = other_api.get(f"/os-simple-tenant-usage/{projects['a']}?{PERIOD}")
    assert fault(response, 403, "forbidden") == (
        "Policy doesn't allow os_compute_api:os-simple-tenant-usage:show to be performed."
    )
    response = member_api.get(f"/os-simple-tenant-usage?{PERIOD}")
    assert fault(response, 403, "forbidden") == (
        "Policy doesn't allow os_compute_api:os-simple-tenant-usage:list to be performed."
    )


def test_a_project_with_no_usage_is_an_empty_object(usage, admin_api):
    body = get(admin_api, "/os-simple-tenant-usage/nobody?start=2020-01-01T00:00:00&end=2020-01-02T00:00:00")
    assert body == {"tenant_usage": {}}
    assert get(admin_api, "/os-simple-tenant-usage?start=2020-01-01T00:00:00&end=2020-01-02T00:00:00") == {
        "tenant_usages": []
    }


def test_the_period_stops_now_and_other_formats_are_read(usage, admin_api):
    body = get(admin_api, "/os-simple-tenant-usage?start=2026-01-01%2002:00:00.5&end=2999-01-01T00:00:00.000001")
    stop = datetime.fromisoformat(body["tenant_usages"][0]["stop"]).replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - stop).total_seconds()) < 60
    assert body["tenant_usages"][0]["start"] == "2026-01-01T02:00:00.500000"


def test_paging_from_2_40(usage, admin_api):
    ids, projects = usage
    order = sorted(
        [(projects[key], ids[key]) for key in ("a", "b", "late", "c")],
    )
    in_period = [server for _, server in order if server != ids["late"]]
    query = f"/os-simple-tenant-usage?{PERIOD}&detailed=1&limit=2"
    body = get(admin_api, query, version="2.40")
    listed = [s["instance_id"] for t in body["tenant_usages"] for s in t["server_usages"]]
    assert listed == in_period[:2]
    (link,) = body["tenant_usages_links"]
    assert link["rel"] == "next"
    href = urlsplit(link["href"])
    assert href.path.endswith("/compute/v2.1/os-simple-tenant-usage")
    params = parse_qs(href.query)
    assert params["marker"] == [in_period[1]] and params["limit"] == ["2"] and params["detailed"] == ["1"]
    page2 = get(admin_api, f"{query}&marker={in_period[1]}", version="2.40")
    assert [s["instance_id"] for t in page2["tenant_usages"] for s in t["server_usages"]] == in_period[2:]
    assert "tenant_usages_links" not in page2
    # before 2.40 limit and marker are not read, and no links are given
    old = get(admin_api, query, version="2.39")
    assert "tenant_usages_links" not in old
    assert sum(len(t["server_usages"]) for t in old["tenant_usages"]) == 3
    # one project's usage pages too, with tenant_usage_links
    tenant = projects["a"]
    one = get(admin_api, f"/os-simple-tenant-usage/{tenant}?{PERIOD}&limit=1", version="2.40")
    assert len(one["tenant_usage"]["server_usages"]) == 1
    assert urlsplit(one["tenant_usage_links"][0]["href"]).path.endswith(f"/os-simple-tenant-usage/{tenant}")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("start=yesterday", "Invalid datetime string: Datetime is in invalid format"),
        ("end=2026-13-01T00:00:00", "Invalid datetime string: Datetime is in invalid format"),
        (
            "start=2026-01-02T00:00:00&end=2026-01-01T00:00:00",
            "Invalid start time. The start time cannot occur after the end time.",
        ),
        (
            "start=2026-01-01T00:00:00&end=2026-01-01T00:00:00",
            "Invalid start time. The start time cannot occur after the end time.",
        ),
    ],
)
def test_a_bad_period_is_a_400(usage, admin_api, query, message):
    ids, projects = usage
    before = list(Server.objects.values().order_by("id"))
    for path in ("/os-simple-tenant-usage", f"/os-simple-tenant-usage/{projects['a']}"):
        assert fault(admin_api.get(f"{path}?{query}"), 400, "badRequest") == message
    assert list(Server.objects.values().order_by("id")) == before


def test_bad_paging_and_unknown_parameters(usage, admin_api):
    response = admin_api.get(f"/os-simple-tenant-usage?{PERIOD}&marker=nope", version="2.40")
    assert fault(response, 400, "badRequest") == "Marker nope could not be found."
    response = admin_api.get(f"/os-simple-tenant-usage?{PERIOD}&limit=-1", version="2.40")
    assert fault(response, 400, "badRequest").startswith("Invalid input for query parameters limit. Value: -1.")
    assert admin_api.get(f"/os-simple-tenant-usage?{PERIOD}&foo=1", version="2.74").status_code == 200
    response = admin_api.get(f"/os-simple-tenant-usage?{PERIOD}&foo=1", version="2.75")
    assert fault(response, 400, "badRequest") == (
        "Invalid input for query parameters foo. Value: 1. Additional properties are not allowed ('foo' was unexpected)"
    )
