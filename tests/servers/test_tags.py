"""Server tags from 2.26: /servers/{id}/tags (list, replace all, delete all)
and /servers/{id}/tags/{tag} (check, add, delete) with Nova's rules (at
most 50 tags, 1-60 characters without '/' or ','), tags in server bodies,
tags given at create (2.52) and the tags filters of GET /servers."""

from aggregates.servers.models import Server
from tests.helpers import fault
from tests.plugins.api import ApiClient
from tests.plugins.cloud import cli_body

V = "2.26"
UNKNOWN = "6f1ed2c2-9c64-4b1e-8a3c-0d5b5d1f3c11"


def tags_of(api, server_id):
    response = api.get(f"/servers/{server_id}/tags", version=V)
    assert response.status_code == 200, response.content
    return response.json()["tags"]


def test_tags_are_replaced_added_checked_and_deleted(boot, member_api):
    server_id = boot(member_api)
    path = f"/servers/{server_id}/tags"
    assert tags_of(member_api, server_id) == []

    response = member_api.put(path, {"tags": ["web", "prod", "web"]}, version=V)
    assert (response.status_code, response.json()) == (200, {"tags": ["prod", "web"]})

    response = member_api.put(f"{path}/blue", version=V)
    assert response.status_code == 201 and response.content == b""
    assert response.headers["Location"].endswith(f"/servers/{server_id}/tags/blue")
    assert member_api.put(f"{path}/blue", version=V).status_code == 204  # already there
    assert tags_of(member_api, server_id) == ["blue", "prod", "web"]

    assert member_api.get(f"{path}/blue", version=V).status_code == 204
    message = fault(member_api.get(f"{path}/red", version=V), 404, "itemNotFound")
    assert message == f"Server {server_id} has no tag 'red'"

    assert member_api.delete(f"{path}/blue", version=V).status_code == 204
    message = fault(member_api.delete(f"{path}/blue", version=V), 404, "itemNotFound")
    assert message == f"Instance {server_id} has no tag 'blue'"

    for version, shown in (("2.25", None), ("2.26", ["prod", "web"])):
        body = member_api.get(f"/servers/{server_id}", version=version).json()["server"]
        assert body.get("tags") == shown
    assert member_api.get("/servers/detail", version=V).json()["servers"][0]["tags"] == ["prod", "web"]

    response = member_api.delete(path, version=V)
    assert response.status_code == 204 and response.content == b""
    assert tags_of(member_api, server_id) == []


def test_before_2_26_there_are_no_tag_routes(boot, member_api):
    server_id = boot(member_api)
    for method in ("get", "delete"):
        response = getattr(member_api, method)(f"/servers/{server_id}/tags", version="2.25")
        assert fault(response, 404, "itemNotFound") == "The resource could not be found."
    assert member_api.put(f"/servers/{server_id}/tags/a", version="2.25").status_code == 404


def test_tags_given_at_create_from_2_52(boot, member_api):
    server_id = boot(member_api, version="2.52", tags=["b", "a"])
    assert tags_of(member_api, server_id) == ["a", "b"]
    message = fault(
        member_api.post("/servers", cli_body(boot.flavor, boot.image, tags=["a"]), version="2.51"), 400, "badRequest"
    )
    assert "('tags' was unexpected)" in message


def test_nova_s_tag_rules_are_400_and_change_nothing(boot, member_api):
    server_id = boot(member_api)
    path = f"/servers/{server_id}/tags"
    member_api.put(path, {"tags": ["keep"]}, version=V)
    bad_bodies = [
        {"tags": ["a/b"]},
        {"tags": ["a,b"]},
        {"tags": [""]},
        {"tags": ["x" * 61]},
        {"tags": [f"t{i}" for i in range(51)]},
        {"tags": "a"},
        {"tag": ["a"]},
    ]
    for body in bad_bodies:
        fault(member_api.put(path, body, version=V), 400, "badRequest")
    for tag in ("a,b", "x" * 61):
        message = fault(member_api.put(f"{path}/{tag}", version=V), 400, "badRequest")
        assert message.startswith(
            f"Tag '{tag}' is invalid. It must be a non empty string without characters '/' and ','."
        )
    fault(member_api.put(f"{path}/a", {"tag": "a"}, version=V), 400, "badRequest")
    assert tags_of(member_api, server_id) == ["keep"]

    fifty = [f"t{i:02d}" for i in range(50)]
    assert member_api.put(path, {"tags": fifty}, version=V).status_code == 200
    message = fault(member_api.put(f"{path}/one-more", version=V), 400, "badRequest")
    assert message == "The number of tags exceeded the per-server limit 50"
    assert tags_of(member_api, server_id) == fifty


def test_tags_change_only_in_the_states_nova_allows(cloud, boot, member_api):
    server_id = boot(member_api)
    Server.objects.filter(uuid=server_id).update(vm_state="error")
    path = f"/servers/{server_id}/tags"
    cases = [
        (member_api.put(path, {"tags": ["a"]}, version=V), "update tags"),
        (member_api.put(f"{path}/a", version=V), "update tag"),
        (member_api.delete(f"{path}/a", version=V), "delete tag"),
        (member_api.delete(path, version=V), "delete tags"),
    ]
    for response, action in cases:
        message = fault(response, 409, "conflictingRequest")
        assert message == f"Cannot '{action}' instance {server_id} while it is in vm_state error"
    assert tags_of(member_api, server_id) == []


def test_unknown_and_other_projects_servers_are_404(boot, member_api, token_for):
    server_id = boot(member_api)
    other = ApiClient(token_for("member", username="other", project_name="other"))
    for api, ref in ((member_api, UNKNOWN), (other, server_id)):
        expected = f"Instance {ref} could not be found."
        assert fault(api.get(f"/servers/{ref}/tags", version=V), 404, "itemNotFound") == expected
        assert fault(api.put(f"/servers/{ref}/tags", {"tags": []}, version=V), 404, "itemNotFound") == expected
        assert fault(api.put(f"/servers/{ref}/tags/a", version=V), 404, "itemNotFound") == expected
        assert fault(api.get(f"/servers/{ref}/tags/a", version=V), 404, "itemNotFound") == expected


def test_list_filters_on_tags(boot, member_api):
    both = boot(member_api, name="both", version="2.52", tags=["a", "b"])
    only_a = boot(member_api, name="only-a", version="2.52", tags=["a"])
    none = boot(member_api, name="none")

    def ids(query):
        response = member_api.get(f"/servers?{query}", version=V)
        assert response.status_code == 200, response.content
        return {item["id"] for item in response.json()["servers"]}

    assert ids("tags=a,b") == {both}
    assert ids("tags=a") == {both, only_a}
    assert ids("tags-any=b,c") == {both}
    assert ids("not-tags=a,b") == {only_a, none}
    assert ids("not-tags-any=b,c") == {only_a, none}
    assert ids("tags=a&not-tags-any=b") == {only_a}
