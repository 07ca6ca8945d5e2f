"""os-hypervisors through HTTP: shapes per microversion, paging, the
hostname pattern, ids, and the routes that come and go (§1.4, §2.5)."""

import json
import uuid
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from django.utils import timezone

from aggregates.hosts.models import ComputeNode, Service
from tests.helpers import fault

BASIC_FIELDS = {"id", "hypervisor_hostname", "state", "status"}
USAGE_FIELDS = {
    "vcpus",
    "memory_mb",
    "local_gb",
    "vcpus_used",
    "memory_mb_used",
    "local_gb_used",
    "free_ram_mb",
    "free_disk_gb",
    "current_workload",
    "running_vms",
    "disk_available_least",
    "cpu_info",
}
COMMON_DETAIL_FIELDS = BASIC_FIELDS | {"hypervisor_type", "hypervisor_version", "host_ip", "service"}
CPU_INFO = {"arch": "x86_64", "model": "Skylake", "vendor": "Intel", "topology": {"sockets": 1, "cores": 8}}


def ok(response):
    assert response.status_code == 200, response.content
    return response.json()


def hypervisors(api, path="/os-hypervisors", version=None):
    return ok(api.get(path, version=version))["hypervisors"]


def make_down(host):
    Service.objects.filter(host=host).update(
        last_seen_up=timezone.now() - timedelta(seconds=settings.SERVICE_DOWN_TIME + 5)
    )


@pytest.fixture
def node1(make_host):
    return make_host(
        "node1",
        vcpus=32,
        memory_mb=131072,
        local_gb=2000,
        hypervisor_type="QEMU",
        hypervisor_version=8002000,
        host_ip="192.0.2.10",
        cpu_info=CPU_INFO,
    )


@pytest.fixture
def three_nodes(make_host):
    return [make_host(name) for name in ("compute-a", "compute-b", "compute-c")]


# --- list and detail ---------------------------------------------------------


def test_list_shows_the_basic_fields(admin_api, node1):
    assert hypervisors(admin_api) == [
        {"id": node1.id, "hypervisor_hostname": "node1", "state": "up", "status": "enabled"}
    ]


def test_detail_before_2_28_has_cpu_info_as_a_string(admin_api, node1):
    ComputeNode.objects.update(vcpus_used=4, memory_mb_used=8192, local_gb_used=100, running_vms=2, current_workload=1)
    (item,) = hypervisors(admin_api, "/os-hypervisors/detail", version="2.27")
    service = Service.objects.get(host="node1")
    assert set(item) == COMMON_DETAIL_FIELDS | USAGE_FIELDS
    assert json.loads(item["cpu_info"]) == CPU_INFO
    assert item["service"] == {"id": service.id, "host": "node1", "disabled_reason": None}
    assert {
        k: item[k]
        for k in (
            "vcpus",
            "vcpus_used",
            "memory_mb",
            "memory_mb_used",
            "free_ram_mb",
            "local_gb",
            "local_gb_used",
            "free_disk_gb",
            "running_vms",
            "current_workload",
            "disk_available_least",
        )
    } == {
        "vcpus": 32,
        "vcpus_used": 4,
        "memory_mb": 131072,
        "memory_mb_used": 8192,
        "free_ram_mb": 122880,
        "local_gb": 2000,
        "local_gb_used": 100,
        "free_disk_gb": 1900,
        "running_vms": 2,
        "current_workload": 1,
        "disk_available_least": 2000,
    }
    assert (item["hypervisor_type"], item["hypervisor_version"], item["host_ip"]) == ("QEMU", 8002000, "192.0.2.10")


def test_detail_has_cpu_info_as_an_object_from_2_28(admin_api, node1, make_host):
    make_host("bare")
    items = hypervisors(admin_api, "/os-hypervisors/detail", version="2.28")
    assert [item["cpu_info"] for item in items] == [CPU_INFO, {}]


def test_detail_drops_usage_and_adds_uptime_from_2_88(admin_api, node1):
    (item,) = hypervisors(admin_api, "/os-hypervisors/detail", version="2.87")
    assert "uptime" not in item and USAGE_FIELDS <= set(item)
    (item,) = hypervisors(admin_api, "/os-hypervisors/detail", version="2.88")
    assert set(item) == COMMON_DETAIL_FIELDS | {"uptime"}
    assert item["uptime"] is None


def test_uptime_from_2_88_is_what_the_host_reported_while_it_is_up(admin_api, make_host):
    make_host("node1", uptime=" 10:00:00 up 3 days")
    assert hypervisors(admin_api, "/os-hypervisors/detail", version="2.88")[0]["uptime"] == " 10:00:00 up 3 days"
    make_down("node1")
    assert hypervisors(admin_api, "/os-hypervisors/detail", version="2.88")[0]["uptime"] is None


def test_ids_are_uuids_from_2_53(admin_api, node1):
    service = Service.objects.get(host="node1")
    assert hypervisors(admin_api, version="2.52")[0]["id"] == node1.id
    (item,) = hypervisors(admin_api, "/os-hypervisors/detail", version="2.53")
    assert item["id"] == str(node1.uuid)
    assert item["service"] == {"id": str(service.uuid), "host": "node1", "disabled_reason": None}


def test_state_and_status_come_from_the_service(admin_api, make_host):
    make_host("node1")
    make_host("node2")
    make_down("node1")
    Service.objects.filter(host="node2").update(disabled=True, disabled_reason="maintenance")
    items = hypervisors(admin_api, "/os-hypervisors/detail")
    assert [(i["hypervisor_hostname"], i["state"], i["status"]) for i in items] == [
        ("node1", "down", "enabled"),
        ("node2", "up", "disabled"),
    ]
    assert items[1]["service"]["disabled_reason"] == "maintenance"


def test_forced_down_service_makes_its_nodes_down(admin_api, node1):
    Service.objects.update(forced_down=True)
    assert hypervisors(admin_api)[0]["state"] == "down"


def test_every_node_of_a_multi_node_host_is_listed(admin_api, make_host):
    make_host("ironic", "node-a")
    make_host("ironic", "node-b")
    items = hypervisors(admin_api, "/os-hypervisors/detail")
    assert [(i["hypervisor_hostname"], i["service"]["host"]) for i in items] == [
        ("node-a", "ironic"),
        ("node-b", "ironic"),
    ]


# --- paging (2.33) -------------------------------------------------------------


def next_href(body):
    (link,) = body["hypervisors_links"]
    assert link["rel"] == "next"
    return link["href"]


@pytest.mark.parametrize("path", ["/os-hypervisors", "/os-hypervisors/detail"])
def test_paging_with_limit_and_next_links(admin_api, three_nodes, path):
    body = ok(admin_api.get(f"{path}?limit=2", version="2.33"))
    assert [h["hypervisor_hostname"] for h in body["hypervisors"]] == ["compute-a", "compute-b"]
    href = next_href(body)
    parts = urlsplit(href)
    assert parts.path == f"/compute/v2.1{path}"
    assert parse_qs(parts.query) == {"limit": ["2"], "marker": [str(three_nodes[1].id)]}
    body = ok(admin_api.get(f"{parts.path}?{parts.query}", version="2.33"))
    assert [h["hypervisor_hostname"] for h in body["hypervisors"]] == ["compute-c"]
    assert "hypervisors_links" not in body


def test_next_link_uses_uuids_from_2_53(admin_api, three_nodes):
    body = ok(admin_api.get("/os-hypervisors?limit=1", version="2.53"))
    parts = urlsplit(next_href(body))
    assert parse_qs(parts.query)["marker"] == [str(three_nodes[0].uuid)]
    body = ok(admin_api.get(f"{parts.path}?{parts.query}", version="2.53"))
    assert [h["id"] for h in body["hypervisors"]] == [str(three_nodes[1].uuid)]


def test_next_link_uses_the_public_url(admin_api, three_nodes, settings):
    settings.PUBLIC_URL = "https://cloud.example.com"
    body = ok(admin_api.get("/os-hypervisors?limit=1", version="2.33"))
    assert next_href(body).startswith("https://cloud.example.com/compute/v2.1/os-hypervisors?")


def test_marker_may_be_an_id_or_a_uuid(admin_api, three_nodes):
    by_id = hypervisors(admin_api, f"/os-hypervisors?marker={three_nodes[0].id}", version="2.33")
    by_uuid = hypervisors(admin_api, f"/os-hypervisors?marker={three_nodes[0].uuid}", version="2.53")
    assert [h["hypervisor_hostname"] for h in by_id] == ["compute-b", "compute-c"]
    assert [h["hypervisor_hostname"] for h in by_uuid] == ["compute-b", "compute-c"]


def test_a_page_that_is_not_full_has_no_link(admin_api, three_nodes):
    assert "hypervisors_links" not in ok(admin_api.get("/os-hypervisors?limit=5", version="2.33"))
    assert "hypervisors_links" not in ok(admin_api.get("/os-hypervisors", version="2.33"))


def test_limit_zero_means_the_maximum(admin_api, three_nodes):
    body = ok(admin_api.get("/os-hypervisors?limit=0", version="2.33"))
    assert len(body["hypervisors"]) == 3 and "hypervisors_links" not in body


def test_pages_hold_at_most_the_maximum_from_2_33(admin_api, three_nodes, monkeypatch):
    monkeypatch.setattr("aggregates.hosts.api.hypervisors.MAX_LIMIT", 2)
    assert len(hypervisors(admin_api, version="2.32")) == 3
    body = ok(admin_api.get("/os-hypervisors", version="2.33"))
    assert len(body["hypervisors"]) == 2 and "hypervisors_links" not in body
    assert len(hypervisors(admin_api, "/os-hypervisors?limit=5", version="2.33")) == 2


def test_paging_is_ignored_before_2_33(admin_api, three_nodes):
    body = ok(admin_api.get("/os-hypervisors?limit=1&marker=nope", version="2.32"))
    assert len(body["hypervisors"]) == 3 and "hypervisors_links" not in body


@pytest.mark.parametrize("marker", ["999", str(uuid.UUID(int=1)), "nope"])
def test_unknown_marker_is_400(admin_api, three_nodes, marker):
    assert (
        fault(admin_api.get(f"/os-hypervisors?marker={marker}", version="2.53"), 400, "badRequest")
        == f"marker [{marker}] not found"
    )


@pytest.mark.parametrize("version", ["2.33", "2.53"])
@pytest.mark.parametrize("limit", ["-1", "abc", "1.5", ""])
def test_bad_limit_is_400(admin_api, three_nodes, version, limit):
    message = fault(admin_api.get(f"/os-hypervisors/detail?limit={limit}", version=version), 400, "badRequest")
    assert message.startswith(f"Invalid input for query parameters limit. Value: {limit}.")


# --- hostname pattern and with_servers (2.53) -----------------------------------


def test_hostname_pattern_is_a_substring_match(admin_api, three_nodes, make_host):
    make_host("other")
    items = hypervisors(admin_api, "/os-hypervisors?hypervisor_hostname_pattern=compute-", version="2.53")
    assert [h["hypervisor_hostname"] for h in items] == ["compute-a", "compute-b", "compute-c"]
    items = hypervisors(admin_api, "/os-hypervisors/detail?hypervisor_hostname_pattern=te-b", version="2.53")
    assert [h["hypervisor_hostname"] for h in items] == ["compute-b"]
    assert "vcpus" in items[0]


def test_hostname_pattern_matching_nothing_is_404(admin_api, three_nodes):
    message = fault(
        admin_api.get("/os-hypervisors?hypervisor_hostname_pattern=zzz", version="2.53"), 404, "itemNotFound"
    )
    assert message == "No hypervisor matching 'zzz' could be found."


@pytest.mark.parametrize("paging", ["limit=1", "limit=0", "marker={marker}"])
def test_hostname_pattern_with_paging_is_400(admin_api, three_nodes, paging):
    query = paging.format(marker=three_nodes[0].uuid)
    message = fault(
        admin_api.get(f"/os-hypervisors?hypervisor_hostname_pattern=compute&{query}", version="2.53"), 400, "badRequest"
    )
    assert message == ("Paging over hypervisors with the hypervisor_hostname_pattern query parameter is not supported.")


def test_hostname_pattern_must_be_a_hostname(admin_api, three_nodes):
    message = fault(
        admin_api.get("/os-hypervisors?hypervisor_hostname_pattern=a%20b", version="2.53"), 400, "badRequest"
    )
    assert message.startswith("Invalid input for query parameters hypervisor_hostname_pattern.")


def test_hostname_pattern_is_ignored_before_2_53(admin_api, three_nodes):
    assert len(hypervisors(admin_api, "/os-hypervisors?hypervisor_hostname_pattern=zzz", version="2.52")) == 3


@pytest.mark.parametrize("path", ["/os-hypervisors", "/os-hypervisors/detail"])
def test_with_servers_shows_an_empty_list_from_2_75(admin_api, node1, path):
    assert "servers" not in hypervisors(admin_api, f"{path}?with_servers=true", version="2.53")[0]
    assert hypervisors(admin_api, f"{path}?with_servers=true", version="2.75")[0]["servers"] == []
    assert "servers" not in hypervisors(admin_api, f"{path}?with_servers=false", version="2.75")[0]
    assert "servers" not in hypervisors(admin_api, path, version="2.75")[0]


def test_with_servers_must_be_a_boolean(admin_api, node1):
    message = fault(admin_api.get("/os-hypervisors?with_servers=maybe", version="2.53"), 400, "badRequest")
    assert message.startswith("Invalid input for query parameters with_servers. Value: maybe.")


def test_unknown_query_parameters_are_400_from_2_53(admin_api, node1):
    assert len(hypervisors(admin_api, "/os-hypervisors?foo=1", version="2.52")) == 1
    for path in ("/os-hypervisors", "/os-hypervisors/detail", f"/os-hypervisors/{node1.uuid}"):
        message = fault(admin_api.get(f"{path}?foo=1", version="2.53"), 400, "badRequest")
        assert message.startswith("Invalid input for query parameters foo.")


# --- show --------------------------------------------------------------------


def test_show_by_integer_id_before_2_53(admin_api, node1):
    item = ok(admin_api.get(f"/os-hypervisors/{node1.id}"))["hypervisor"]
    assert set(item) == COMMON_DETAIL_FIELDS | USAGE_FIELDS
    assert item["id"] == node1.id and item["hypervisor_hostname"] == "node1"
    assert isinstance(item["cpu_info"], str)


def test_show_by_uuid_from_2_53(admin_api, node1):
    item = ok(admin_api.get(f"/os-hypervisors/{node1.uuid}", version="2.53"))["hypervisor"]
    assert item["id"] == str(node1.uuid) and item["cpu_info"] == CPU_INFO
    item = ok(admin_api.get(f"/os-hypervisors/{node1.uuid}", version="2.88"))["hypervisor"]
    assert set(item) == COMMON_DETAIL_FIELDS | {"uptime"}


def test_show_with_servers(admin_api, node1):
    assert (
        "servers" not in ok(admin_api.get(f"/os-hypervisors/{node1.uuid}?with_servers=1", version="2.53"))["hypervisor"]
    )
    assert (
        ok(admin_api.get(f"/os-hypervisors/{node1.uuid}?with_servers=1", version="2.75"))["hypervisor"]["servers"] == []
    )
    fault(admin_api.get(f"/os-hypervisors/{node1.uuid}?with_servers=maybe", version="2.75"), 400, "badRequest")


@pytest.mark.parametrize("ref", ["abc", "1.0", "{uuid}"])
def test_show_non_integer_id_is_404_before_2_53(admin_api, node1, ref):
    ref = ref.format(uuid=node1.uuid)
    assert (
        fault(admin_api.get(f"/os-hypervisors/{ref}", version="2.52"), 404, "itemNotFound")
        == f"Hypervisor with ID '{ref}' could not be found."
    )


def test_show_unknown_id_is_404(admin_api, node1):
    assert (
        fault(admin_api.get("/os-hypervisors/999"), 404, "itemNotFound")
        == "Hypervisor with ID '999' could not be found."
    )
    missing = uuid.uuid4()
    assert (
        fault(admin_api.get(f"/os-hypervisors/{missing}", version="2.53"), 404, "itemNotFound")
        == f"Hypervisor with ID '{missing}' could not be found."
    )


@pytest.mark.parametrize("ref", ["abc", "{id}"])
def test_show_non_uuid_is_400_from_2_53(admin_api, node1, ref):
    ref = ref.format(id=node1.id)
    assert fault(admin_api.get(f"/os-hypervisors/{ref}", version="2.53"), 400, "badRequest") == f"Invalid uuid {ref}"


# --- uptime and statistics (up to 2.87) ------------------------------------------


def test_uptime(admin_api, make_host):
    node = make_host("node1", uptime=" 10:00:00 up 3 days,  2 users")
    body = ok(admin_api.get(f"/os-hypervisors/{node.id}/uptime"))
    assert body == {
        "hypervisor": {
            "id": node.id,
            "hypervisor_hostname": "node1",
            "state": "up",
            "status": "enabled",
            "uptime": " 10:00:00 up 3 days,  2 users",
        }
    }
    body = ok(admin_api.get(f"/os-hypervisors/{node.uuid}/uptime", version="2.87"))
    assert body["hypervisor"]["id"] == str(node.uuid)


def test_uptime_of_a_host_that_never_reported_it_is_501(admin_api, node1):
    message = fault(admin_api.get(f"/os-hypervisors/{node1.id}/uptime"), 501, "notImplemented")
    assert message.startswith("The requested functionality is not supported")


def test_uptime_of_a_down_host_is_400(admin_api, make_host):
    node = make_host("node1", uptime="up 3 days")
    make_down("node1")
    assert (
        fault(admin_api.get(f"/os-hypervisors/{node.id}/uptime"), 400, "badRequest")
        == "Compute service of node1 is unavailable at this time."
    )


def test_uptime_ids(admin_api, node1):
    fault(admin_api.get("/os-hypervisors/abc/uptime"), 404, "itemNotFound")
    fault(admin_api.get("/os-hypervisors/999/uptime"), 404, "itemNotFound")
    fault(admin_api.get("/os-hypervisors/abc/uptime", version="2.53"), 400, "badRequest")
    fault(admin_api.get(f"/os-hypervisors/{uuid.uuid4()}/uptime", version="2.53"), 404, "itemNotFound")


def test_uptime_route_is_gone_from_2_88(admin_api, make_host):
    node = make_host("node1", uptime="up 3 days")
    fault(admin_api.get(f"/os-hypervisors/{node.uuid}/uptime", version="2.88"), 404, "itemNotFound")


def test_statistics_sum_the_nodes_of_enabled_compute_services(admin_api, make_host):
    make_host("node1", vcpus=16, memory_mb=1000, local_gb=100)
    make_host("node2", vcpus=8, memory_mb=500, local_gb=50, running_vms=3)
    make_host("node3", vcpus=64, memory_mb=9999, local_gb=999)
    ComputeNode.objects.filter(host="node2").update(
        vcpus_used=2, memory_mb_used=200, local_gb_used=20, current_workload=1, disk_available_least=30
    )
    Service.objects.filter(host="node3").update(disabled=True)
    assert ok(admin_api.get("/os-hypervisors/statistics", version="2.87")) == {
        "hypervisor_statistics": {
            "count": 2,
            "vcpus": 24,
            "memory_mb": 1500,
            "local_gb": 150,
            "vcpus_used": 2,
            "memory_mb_used": 200,
            "local_gb_used": 20,
            "free_ram_mb": 1300,
            "free_disk_gb": 130,
            "current_workload": 1,
            "running_vms": 3,
            "disk_available_least": 130,
        }
    }


def test_statistics_without_nodes_are_zero(admin_api):
    stats = ok(admin_api.get("/os-hypervisors/statistics"))["hypervisor_statistics"]
    assert stats["count"] == 0 and stats["vcpus"] == 0 and stats["free_ram_mb"] == 0


def test_statistics_route_is_gone_from_2_88(admin_api, node1):
    fault(admin_api.get("/os-hypervisors/statistics", version="2.88"), 404, "itemNotFound")


# --- search and servers routes (up to 2.52) -------------------------------------


@pytest.mark.parametrize("route", ["search", "servers"])
def test_pattern_routes_list_matching_nodes(admin_api, three_nodes, make_host, route):
    make_host("other")
    items = hypervisors(admin_api, f"/os-hypervisors/compute-/{route}", version="2.52")
    assert [h["hypervisor_hostname"] for h in items] == ["compute-a", "compute-b", "compute-c"]
    assert set(items[0]) == BASIC_FIELDS
    assert items[0]["id"] == three_nodes[0].id


@pytest.mark.parametrize("route", ["search", "servers"])
def test_pattern_routes_matching_nothing_are_404(admin_api, three_nodes, route):
    assert (
        fault(admin_api.get(f"/os-hypervisors/zzz/{route}"), 404, "itemNotFound")
        == "No hypervisor matching 'zzz' could be found."
    )


@pytest.mark.parametrize("route", ["search", "servers"])
def test_pattern_routes_are_gone_from_2_53(admin_api, three_nodes, route):
    fault(admin_api.get(f"/os-hypervisors/compute/{route}", version="2.53"), 404, "itemNotFound")


# --- permissions -------------------------------------------------------------

ROUTES = [
    ("/os-hypervisors", "list"),
    ("/os-hypervisors/detail", "list-detail"),
    ("/os-hypervisors/{id}", "show"),
    ("/os-hypervisors/statistics", "statistics"),
    ("/os-hypervisors/{id}/uptime", "uptime"),
    ("/os-hypervisors/node/search", "search"),
    ("/os-hypervisors/node/servers", "servers"),
]


@pytest.mark.parametrize("path, policy", ROUTES)
def test_reader_may_read(reader_api, make_host, path, policy):
    node = make_host("node1", uptime="up 1 day")
    assert reader_api.get(path.format(id=node.id)).status_code == 200


@pytest.mark.parametrize("path, policy", ROUTES)
def test_member_may_not_read(member_api, node1, path, policy):
    message = fault(member_api.get(path.format(id=node1.id)), 403, "forbidden")
    assert f"os_compute_api:os-hypervisors:{policy}" in message


@pytest.mark.parametrize("path, policy", ROUTES)
def test_reading_needs_a_token(anon_api, path, policy):
    fault(anon_api.get(path.format(id=1)), 401, "unauthorized")
