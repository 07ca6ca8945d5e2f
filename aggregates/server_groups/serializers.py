"""``/os-server-groups`` bodies per microversion (Nova's
``_format_server_group``): ``policies`` and an empty ``metadata`` before
2.64, ``policy`` and ``rules`` from it; ``project_id`` and ``user_id`` from
2.13; members are the servers not deleted."""

from typing import Any

from aggregates.server_groups.services import GroupView


def group_body(view: GroupView, version: tuple[int, int]) -> dict[str, Any]:
    group = view.group
    body: dict[str, Any] = {"id": str(group.uuid), "name": group.name}
    if version >= (2, 64):
        body["policy"] = group.policy
        body["rules"] = dict(group.rules or {})
    else:
        body["policies"] = [group.policy]
        body["metadata"] = {}
    body["members"] = list(view.members)
    if version >= (2, 13):
        body["project_id"] = group.project_id
        body["user_id"] = group.user_id
    return body


def show_body(view: GroupView, version: tuple[int, int]) -> dict[str, Any]:
    return {"server_group": group_body(view, version)}


def list_body(views: list[GroupView], version: tuple[int, int]) -> dict[str, Any]:
    return {"server_groups": [group_body(view, version) for view in views]}
