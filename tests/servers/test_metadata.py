"""Server metadata: /servers/{id}/metadata and /servers/{id}/metadata/{key}
in Nova's semantics (POST merges, PUT replaces), metadata given at create,
Nova's quota of 128 items (403), its key rules (400) and its refusals while
the server is not in a state Nova changes metadata in (409)."""

from aggregates.servers.models import Server
from tests.helpers import fault
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

V = "2.100"
UNKNOWN = "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"


def metadata_of(api, server_id):
    response = api.get(f"/servers/{server_id}/metadata", version=V)
    assert response.status_code == 200, response.content
    return response.json()["metadata"]


def test_metadata_given_at_create_is_stored_and_shown(boot, member_api):
    server_id = boot(member_api, metadata={"role": "web", "tier": "1"})
    shown = member_api.get(f"/servers/{server_id}", version=V).json()["server"]
    assert shown["metadata"] == {"role": "web", "tier": "1"}
    detail = member_api.get("/servers/detail", version=V).json()["servers"]
    assert detail[0]["metadata"] == {"role": "web", "tier": "1"}
    assert metadata_of(member_api, server_id) == {"role": "web", "tier": "1"}


def test_post_merges_put_replaces_and_items_are_read_set_and_deleted(boot, member_api):
    server_id = boot(member_api, metadata={"a": "1", "b": "2"})
    path = f"/servers/{server_id}/metadata"

    response = member_api.post(path, {"metadata": {"b": "20", "c": "3"}}, version=V)
    assert response.status_code == 200, response.content
    assert response.json() == {"metadata": {"a": "1", "b": "20", "c": "3"}}

    response = member_api.put(path, {"metadata": {"z": "26"}}, version=V)
    assert response.status_code == 200, response.content
    assert response.json() == {"metadata": {"z": "26"}}
    assert metadata_of(member_api, server_id) == {"z": "26"}

    response = member_api.get(f"{path}/z", version=V)
    assert (response.status_code, response.json()) == (200, {"meta": {"z": "26"}})
    message = fault(member_api.get(f"{path}/a", version=V), 404, "itemNotFound")
    assert message == "Metadata item was not found"

    response = member_api.put(f"{path}/with space:ok", {"meta": {"with space:ok": "v"}}, version=V)
    assert (response.status_code, response.json()) == (200, {"meta": {"with space:ok": "v"}})
    assert metadata_of(member_api, server_id) == {"z": "26", "with space:ok": "v"}

    response = member_api.delete(f"{path}/z", version=V)
    assert response.status_code == 204 and response.content == b""
    assert metadata_of(member_api, server_id) == {"with space:ok": "v"}
    assert fault(member_api.delete(f"{path}/z", version=V), 404, "itemNotFound") == "Metadata item was not found"

    shown = member_api.get(f"/servers/{server_id}", version=V).json()["server"]
    assert shown["metadata"] == {"with space:ok": "v"}


def test_bad_bodies_are_400_and_change_nothing(boot, member_api):
    server_id = boot(member_api, metadata={"a": "1"})
    path = f"/servers/{server_id}/metadata"
    bad = [
        ("post", path, {"metadata": {"bad/key": "x"}}, "'bad/key' does not match any of the regexes"),
        ("put", path, {"metadata": {"k": "x" * 256}}, "is too long"),
        ("post", path, {"metadata": {"k": 1}}, "1 is not of type 'string'"),
        ("post", path, {"meta": {"k": "v"}}, "'metadata' is a required property"),
        ("put", path, {"metadata": {"k" * 256: "v"}}, "does not match any of the regexes"),
        ("put", f"{path}/k", {"meta": {"k": "v", "j": "w"}}, "has too many properties"),
        ("put", f"{path}/k", {"meta": {}}, "should be non-empty"),
        ("put", f"{path}/k", {"metadata": {"k": "v"}}, "'meta' is a required property"),
    ]
    for method, url, body, words in bad:
        message = fault(getattr(member_api, method)(url, body, version=V), 400, "badRequest")
        assert words in message, (body, message)
    message = fault(member_api.put(f"{path}/k", {"meta": {"j": "v"}}, version=V), 400, "badRequest")
    assert message == "Request body and URI mismatch"
    assert metadata_of(member_api, server_id) == {"a": "1"}


def test_nova_metadata_quota_of_128_items_is_a_403(boot, member_api):
    server_id = boot(member_api)
    path = f"/servers/{server_id}/metadata"
    full = {f"k{i}": "v" for i in range(128)}
    assert member_api.put(path, {"metadata": full}, version=V).status_code == 200

    message = fault(member_api.post(path, {"metadata": {"one-more": "v"}}, version=V), 403, "forbidden")
    assert message == "Maximum number of metadata items exceeds 128"
    message = fault(member_api.put(f"{path}/one-more", {"meta": {"one-more": "v"}}, version=V), 403, "forbidden")
    assert message == "Maximum number of metadata items exceeds 128"
    too_many = {f"k{i}": "v" for i in range(129)}
    assert fault(member_api.put(path, {"metadata": too_many}, version=V), 403, "forbidden") == message
    assert metadata_of(member_api, server_id) == full
    # replacing a value does not add an item
    assert member_api.post(path, {"metadata": {"k0": "new"}}, version=V).status_code == 200

    response = member_api.post("/servers", boot.body("vm2", metadata=too_many), version=V)
    assert fault(response, 403, "forbidden") == message
    assert Server.objects.count() == 1


def test_unknown_servers_and_other_projects_servers_are_404(boot, member_api, token_for):
    server_id = boot(member_api, metadata={"a": "1"})
    other = ApiClient(token_for("member", username="other", project_name="other"))
    for server in (UNKNOWN, server_id):
        api = member_api if server == UNKNOWN else other
        expected = f"Instance {server} could not be found."
        assert fault(api.get(f"/servers/{server}/metadata", version=V), 404, "itemNotFound") == expected
        assert fault(api.get(f"/servers/{server}/metadata/a", version=V), 404, "itemNotFound") == expected
        body = {"metadata": {"b": "2"}}
        assert fault(api.post(f"/servers/{server}/metadata", body, version=V), 404, "itemNotFound") == expected
        assert fault(api.put(f"/servers/{server}/metadata", body, version=V), 404, "itemNotFound") == expected
        response = api.put(f"/servers/{server}/metadata/b", {"meta": {"b": "2"}}, version=V)
        assert fault(response, 404, "itemNotFound") == expected
        assert fault(api.delete(f"/servers/{server}/metadata/a", version=V), 404, "itemNotFound") == expected
    assert metadata_of(member_api, server_id) == {"a": "1"}


def test_metadata_is_refused_409_outside_the_states_nova_changes_it_in(cloud, boot, member_api):
    server_id = boot(member_api, metadata={"a": "1"})
    path = f"/servers/{server_id}/metadata"
    Server.objects.filter(uuid=server_id).update(task_state="migrating")
    message = fault(member_api.post(path, {"metadata": {"b": "2"}}, version=V), 409, "conflictingRequest")
    assert message == f"Cannot 'update metadata' instance {server_id} while it is in task_state migrating"
    assert fault(member_api.put(path, {"metadata": {}}, version=V), 409, "conflictingRequest") == message
    message = fault(member_api.delete(f"{path}/a", version=V), 409, "conflictingRequest")
    assert message == f"Cannot 'delete metadata' instance {server_id} while it is in task_state migrating"
    assert metadata_of(member_api, server_id) == {"a": "1"}

    # a server whose build failed (no host fits) is in vm_state error
    failed = member_api.post(
        "/servers", cli_body(cloud.flavor(name="huge", vcpus=999), cloud.image(name="i2"), name="vm2"), version=V
    ).json()["server"]["id"]
    response = member_api.post(f"/servers/{failed}/metadata", {"metadata": {"b": "2"}}, version=V)
    message = fault(response, 409, "conflictingRequest")
    assert message == f"Cannot 'update metadata' instance {failed} while it is in vm_state error"
    assert metadata_of(member_api, failed) == {}
