"""GET /os-migrations (Nova's fields per microversion, its filters, paging
from 2.59) and GET /servers/{id}/migrations[/{id}] (in-progress live
migrations only)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from aggregates.moves.models import ServerMigration

from .conftest import act, boot, fault

BASE_FIELDS = {
    "created_at",
    "dest_compute",
    "dest_host",
    "dest_node",
    "id",
    "instance_uuid",
    "new_instance_type_id",
    "old_instance_type_id",
    "source_compute",
    "source_node",
    "status",
    "updated_at",
}


@pytest.fixture
def history(two_hosts, admin_api):
    """A live migration, a cold one (finished), and a live one in progress (a row)."""
    nodes, flavor, image = two_hosts
    server = boot(admin_api, flavor, image)
    first = server.host
    assert act(admin_api, server, {"os-migrateLive": {"host": None, "block_migration": "auto"}}, "2.30").status_code
    assert act(admin_api, server, {"migrate": None}).status_code == 202
    live, cold = ServerMigration.objects.order_by("id")
    now = timezone.now()
    ServerMigration.objects.filter(pk=live.pk).update(created_at=now - timedelta(minutes=2))
    ServerMigration.objects.filter(pk=cold.pk).update(created_at=now - timedelta(minutes=1))
    running = ServerMigration.objects.create(
        server=live.server,
        migration_type="live-migration",
        status="running",
        source_compute="h9",
        source_node="h9",
        project_id=live.project_id,
        user_id=live.user_id,
    )
    return server, first, ServerMigration.objects.get(pk=live.pk), ServerMigration.objects.get(pk=cold.pk), running


def listed(api, version, query=""):
    response = api.get(f"/os-migrations{query}", version=version)
    assert response.status_code == 200, response.content
    return response.json()


def test_fields_per_microversion(history, admin_api):
    server, first, live, cold, running = history
    old = listed(admin_api, "2.1")
    assert set(old) == {"migrations"}
    assert [item["id"] for item in old["migrations"]] == [live.id, cold.id, running.id]  # by id before 2.59
    assert all(set(item) == BASE_FIELDS for item in old["migrations"])
    item = old["migrations"][0]
    assert item["instance_uuid"] == str(server.uuid) and item["status"] == "completed"
    assert item["source_compute"] == first and item["dest_compute"] != first
    assert item["old_instance_type_id"] == item["new_instance_type_id"]
    assert isinstance(item["old_instance_type_id"], int)
    assert item["created_at"].count(":") == 2 and "." in item["created_at"] and not item["created_at"].endswith("Z")

    items = listed(admin_api, "2.23")["migrations"]
    assert {item["migration_type"] for item in items} == {"live-migration", "migration"}
    in_progress = next(item for item in items if item["id"] == running.id)
    assert [link["rel"] for link in in_progress["links"]] == ["self", "bookmark"]
    assert in_progress["links"][0]["href"].endswith(f"/compute/v2.1/servers/{server.uuid}/migrations/{running.id}")
    assert all("links" not in item for item in items if item["id"] != running.id)

    newest = listed(admin_api, "2.59")["migrations"]
    assert [item["uuid"] for item in newest] == [str(running.uuid), str(cold.uuid), str(live.uuid)]
    assert all("user_id" not in item for item in newest)
    with_owner = listed(admin_api, "2.80")["migrations"]
    assert with_owner[0]["project_id"] == server.project_id and with_owner[0]["user_id"] == server.user_id


def test_filters(history, admin_api):
    server, first, live, cold, running = history
    second = live.dest_compute

    def ids(query, version="2.80"):
        return sorted(item["id"] for item in listed(admin_api, version, query)["migrations"])

    assert ids("?migration_type=migration") == [cold.id]
    assert ids("?migration_type=live-migration") == [live.id, running.id]
    assert ids("?status=finished") == [cold.id]
    assert ids(f"?host={first}") == [live.id, cold.id]
    assert ids(f"?source_compute={first}") == [live.id]
    assert ids(f"?dest_compute={first}") == [cold.id]
    assert ids(f"?source_compute={second}") == [cold.id]
    assert ids(f"?instance_uuid={server.uuid}") == [live.id, cold.id, running.id]
    assert ids("?instance_uuid=not-a-uuid") == []
    assert ids(f"?project_id={server.project_id}") == [live.id, cold.id, running.id]
    assert ids("?user_id=nobody") == []
    later = (timezone.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert ids(f"?changes-since={later}") == []
    assert ids("?anything=1", version="2.58") == [live.id, cold.id, running.id]  # open before 2.59


def test_paging_from_2_59(history, admin_api):
    server, first, live, cold, running = history
    page = listed(admin_api, "2.59", "?limit=2")
    assert [item["id"] for item in page["migrations"]] == [running.id, cold.id]
    (link,) = page["migrations_links"]
    assert link["rel"] == "next" and f"marker={cold.uuid}" in link["href"] and "limit=2" in link["href"]
    rest = listed(admin_api, "2.59", f"?limit=2&marker={cold.uuid}")
    assert [item["id"] for item in rest["migrations"]] == [live.id] and "migrations_links" not in rest
    assert listed(admin_api, "2.59", "?limit=0") == {"migrations": []}


def test_bad_queries(history, admin_api, member_api):
    assert fault(admin_api.get("/os-migrations?marker=6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11", version="2.59")) == (
        400,
        "badRequest",
        "Marker 6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11 could not be found.",
    )
    status, _, message = fault(admin_api.get("/os-migrations?foo=1", version="2.59"))
    assert status == 400 and "'foo' was unexpected" in message
    status, _, message = fault(admin_api.get("/os-migrations?limit=-1", version="2.59"))
    assert status == 400 and "limit" in message
    status, _, message = fault(admin_api.get("/os-migrations?user_id=x", version="2.79"))
    assert status == 400 and "'user_id' was unexpected" in message
    status, _, message = fault(admin_api.get("/os-migrations?changes-since=yesterday", version="2.59"))
    assert status == 400 and "changes-since" in message
    status, name, message = fault(member_api.get("/os-migrations", version="2.80"))
    assert (status, name) == (403, "forbidden") and "os-migrations:index" in message


def test_server_migrations_show_in_progress_live_migrations_only(history, admin_api):
    server, first, live, cold, running = history
    path = f"/servers/{server.uuid}/migrations"
    assert admin_api.get(path, version="2.22").status_code == 404
    body = admin_api.get(path, version="2.80").json()
    (item,) = body["migrations"]
    assert item["id"] == running.id and item["server_uuid"] == str(server.uuid) and item["status"] == "running"
    assert item["memory_total_bytes"] is None and item["uuid"] == str(running.uuid) and "user_id" in item
    assert "uuid" not in admin_api.get(path, version="2.58").json()["migrations"][0]

    shown = admin_api.get(f"{path}/{running.id}", version="2.23").json()["migration"]
    assert shown["id"] == running.id and "uuid" not in shown
    assert fault(admin_api.get(f"{path}/{cold.id}", version="2.80")) == (
        404,
        "itemNotFound",
        f"Migration {cold.id} for server {server.uuid} is not live-migration.",
    )
    assert fault(admin_api.get(f"{path}/{live.id}", version="2.80")) == (
        404,
        "itemNotFound",
        f"Live migration {live.id} for server {server.uuid} is not in progress.",
    )
    assert fault(admin_api.get(f"{path}/999999", version="2.80"))[0] == 404
    assert fault(admin_api.get(f"{path}/abc", version="2.80"))[0] == 404
    assert admin_api.get(f"{path}?x=1", version="2.102").status_code == 400
