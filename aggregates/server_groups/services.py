"""Server groups: create, list, show, delete (Nova's os-server-groups), the
``group`` hint of a boot (the group checked, the new servers made members in
the boot's transaction), and a server's group. The policy is kept by the
scheduler (``scheduling.filters``, ``scheduling.weighers``,
``scheduling.groups``)."""

import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet, Subquery

from aggregates.audit import services as events
from aggregates.errors import Forbidden, Invalid, NotFound
from aggregates.identity import services as identity
from aggregates.identity.caller import Caller
from aggregates.quotas import services as quotas
from aggregates.server_groups.models import ServerGroup, ServerGroupMember
from aggregates.servers.models import Server
from aggregates.value_schemas import MAX_INT

log = logging.getLogger(__name__)

HARD_POLICIES = (ServerGroup.AFFINITY, ServerGroup.ANTI_AFFINITY)


def check_group_quota(project_id: str, user_id: str) -> None:
    """The server_groups quota of a create, inside its transaction (Nova:
    403 "Quota exceeded, too many server groups.")."""
    quotas.check(
        project_id, user_id or None, {"server_groups": 1}, used={"server_groups": groups_of_project(project_id)}
    )


def groups_of_project(project_id: str) -> int:
    """The server_groups quota's usage: the project's groups."""
    return ServerGroup.objects.filter(project_id=project_id).count()


def count_groups(project_id: str, user_id: str | None = None) -> int:
    """The server_groups usage the limits and detailed quota sets show."""
    rows = ServerGroup.objects.filter(project_id=project_id)
    return (rows.filter(user_id=user_id) if user_id else rows).count()


def members_of(group: ServerGroup) -> int:
    """The server_group_members quota's usage: the group's servers not deleted."""
    members = ServerGroupMember.objects.filter(group=group).order_by().values("server_uuid")
    alive = Server.objects.filter(uuid__in=Subquery(members), deleted_at__isnull=True).exclude(vm_state=Server.DELETED)
    return alive.count()  # one query


@dataclass
class GroupView:
    """A group with its members that are servers not deleted, in join order."""

    group: ServerGroup
    members: list[str]


def _not_deleted(uuids: Iterable[str]) -> set[str]:
    wanted = list(uuids)
    if not wanted:
        return set()
    rows = Server.objects.filter(uuid__in=wanted, deleted_at__isnull=True).exclude(vm_state=Server.DELETED)
    return {str(value) for value in rows.values_list("uuid", flat=True)}


def _views(groups: Sequence[ServerGroup]) -> list[GroupView]:
    members: dict[int, list[str]] = {group.pk: [] for group in groups}
    rows = ServerGroupMember.objects.filter(group_id__in=list(members)).order_by("id")
    pairs = [(group_id, str(server_uuid)) for group_id, server_uuid in rows.values_list("group_id", "server_uuid")]
    alive = _not_deleted(server_uuid for _, server_uuid in pairs)
    for group_id, server_uuid in pairs:
        if server_uuid in alive:
            members[group_id].append(server_uuid)
    return [GroupView(group, members[group.pk]) for group in groups]


def _find(group_id: str) -> ServerGroup:
    group = ServerGroup.objects.filter(uuid=group_id).first() if _is_uuid(group_id) else None
    if group is None:
        raise NotFound(f"Instance group {group_id} could not be found.")
    return group


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def _check_owner(caller: Caller, group: ServerGroup, policy: str, readers_too: bool = False) -> None:
    """Another project's group is for admins only (readers may read it)."""
    allowed = caller.can_read_admin_views if readers_too else caller.is_admin
    if not allowed and group.project_id != caller.project_id:
        raise Forbidden.by_policy(policy)


def list_groups(
    caller: Caller, all_projects: bool = False, limit: int | None = None, offset: int = 0
) -> list[GroupView]:
    """The caller's project's groups; every project's for an admin (or a
    reader) asking ``all_projects`` (a member asking gets its own, as in Nova)."""
    groups: QuerySet[ServerGroup] = ServerGroup.objects.order_by("id")
    if not (all_projects and caller.can_read_admin_views):
        groups = groups.filter(project_id=caller.project_id)
    page = list(groups[offset : offset + limit] if limit is not None else groups[offset:])
    return _views(page)


def get_group(caller: Caller, group_id: str) -> GroupView:
    group = _find(group_id)
    _check_owner(caller, group, "os_compute_api:os-server-groups:show", readers_too=True)
    return _views([group])[0]


def create_group(caller: Caller, name: str, policy: str, rules: dict[str, int] | None = None) -> GroupView:
    """A new group of the caller's project. Rules are for anti-affinity only."""
    with events.failures_recorded(caller, "create_server_group", "server_group"):
        rules = dict(rules or {})
        if policy not in dict(ServerGroup.POLICIES):
            raise Invalid(f"Invalid policy: {policy}", field="policy")
        if rules and policy != ServerGroup.ANTI_AFFINITY:
            raise Invalid("Only anti-affinity policy supports rules.", field="rules")
        for key, value in rules.items():
            if not 1 <= int(value) <= MAX_INT:
                raise Invalid(f"Invalid input for field/attribute {key}: it must be 1 to {MAX_INT}.", field=key)
        user_id = identity.user_id_of(caller.user) if caller.user is not None else caller.username
        with transaction.atomic():
            check_group_quota(caller.project_id, user_id)
            group = ServerGroup.objects.create(
                name=name, project_id=caller.project_id, user_id=user_id, policy=policy, rules=rules
            )
            events.record(
                caller,
                "server_group.create",
                "server_group",
                object_uuid=group.uuid,
                payload={"name": name, "policy": policy, "rules": rules, "project_id": group.project_id},
            )
    log.info("Created server group %s (%s, %s)", group.uuid, name, policy)
    return GroupView(group, [])


def delete_group(caller: Caller, group_id: str) -> None:
    """Delete a group; its servers stay where they are, in no group."""
    with events.failures_recorded(caller, "delete_server_group", "server_group"):
        group = _find(group_id)
        _check_owner(caller, group, "os_compute_api:os-server-groups:delete")
        with transaction.atomic():
            deleted, _ = ServerGroup.objects.filter(pk=group.pk).delete()
            if not deleted:
                raise NotFound(f"Instance group {group_id} could not be found.")
            events.record(
                caller,
                "server_group.delete",
                "server_group",
                object_uuid=group.uuid,
                payload={"name": group.name, "policy": group.policy},
            )


# --- boots ---------------------------------------------------------------------


def group_hint(hint: object) -> str | None:
    """The group uuid a boot's ``group`` hint names (a uuid, or a list of
    one), as given; None without the hint."""
    if hint is None or hint == [] or hint == "":
        return None
    values = hint if isinstance(hint, list) else [hint]
    if len(values) != 1:
        raise Invalid("A server can be in only one server group: give one group uuid.", field="group")
    return str(values[0])


def lock_for_boot(caller: Caller, group_id: str) -> tuple[ServerGroup, int]:
    """The group a boot's hint names, its row locked (inside the boot's
    transaction, before its quota check: the server_group_members quota
    counts one boot at a time), and its members counted, what that quota has
    used. Another project's group is refused as unknown (Nova does not
    check; see docs/compatibility.md)."""
    found = ServerGroup.objects.select_for_update().filter(uuid=group_id).first() if _is_uuid(group_id) else None
    if found is None or (not caller.is_admin and found.project_id != caller.project_id):
        raise Invalid(f"Instance group {group_id} could not be found.", field="group")
    return found, members_of(found)


def add_members(group: ServerGroup, server_uuids: Sequence[str]) -> None:
    """Make the new servers members (inside the boot's transaction, after
    ``lock_for_boot`` and the quota check that counted them)."""
    ServerGroupMember.objects.bulk_create(ServerGroupMember(group=group, server_uuid=u) for u in server_uuids)


def groups_of_servers(server_uuids: Iterable[str]) -> dict[str, str]:
    """Server uuid -> its group's uuid, for the servers in a group."""
    rows = ServerGroupMember.objects.filter(server_uuid__in=list(server_uuids)).values_list(
        "server_uuid", "group__uuid"
    )
    return {str(server_uuid): str(group_uuid) for server_uuid, group_uuid in rows}
