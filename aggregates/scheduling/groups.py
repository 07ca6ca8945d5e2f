"""Server groups as the scheduler sees them: a group's spec (its policy,
and where its members are or are being placed), and the admission every
boot and move of a member passes before its claim.

Nova lets concurrent members race and rejects the loser late, on the
compute host (``_validate_instance_group_policy``). Corral decides them one
after another instead: admitting a host takes the group's row lock (a
``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's transactions begin
IMMEDIATE, one writer at a time), reads where the other members are now,
applies the group's rule, and records the admitted host on the member
before the transaction ends; the next member's admission sees it. A host
refused there is the next host's turn, as after a lost claim."""

from collections.abc import Iterable

from django.db import transaction

from aggregates.scheduling import filters
from aggregates.scheduling.request import GroupSpec
from aggregates.server_groups.models import ServerGroup, ServerGroupMember
from aggregates.servers.models import Server

HARD_POLICIES = {
    ServerGroup.AFFINITY: "ServerGroupAffinityFilter",
    ServerGroup.ANTI_AFFINITY: "ServerGroupAntiAffinityFilter",
}


def _members_of(group: ServerGroup) -> list[tuple[object, str | None, str | None, str | None]]:
    """The group's members' servers not deleted: (uuid, host, task_state,
    the host the member was admitted to), in one query: members joined to
    their servers (no foreign key links them, so the ORM would correlate a
    subquery per member, several times slower)."""
    member, server = ServerGroupMember._meta.db_table, Server._meta.db_table
    rows = Server.objects.raw(
        f"SELECT s.id, s.uuid, s.host, s.task_state, m.host AS admitted FROM {member} m "
        f"JOIN {server} s ON s.uuid = m.server_uuid "
        "WHERE m.group_id = %s AND s.deleted_at IS NULL AND (s.vm_state IS NULL OR s.vm_state <> %s)",
        [group.pk, Server.DELETED],
    )
    return [(row.uuid, row.host, row.task_state, getattr(row, "admitted", None)) for row in rows]


def _members_by_host(group: ServerGroup, leaving: Iterable[str] = ()) -> dict[str, set[str]]:
    """Where ``group``'s members are: each member's host, and the host it
    was admitted to while its boot or move is in progress; deleted servers
    and the servers ``leaving`` (being scheduled) left out."""
    skip = set(leaving)
    found: dict[str, set[str]] = {}
    for server_uuid, host, task_state, being_placed in _members_of(group):
        member = str(server_uuid)
        if member in skip:
            continue
        hosts = {host} if host else set()
        if task_state is not None and being_placed:
            hosts.add(being_placed)  # being built or moved there
        for name in hosts:
            found.setdefault(name, set()).add(member)
    return found


def spec_of(group: ServerGroup, leaving: Iterable[str] = ()) -> GroupSpec:
    rules = group.rules or {}
    return GroupSpec(
        uuid=str(group.uuid),
        name=group.name,
        policy=group.policy,
        max_server_per_host=int(rules.get("max_server_per_host") or 1),
        members_by_host=_members_by_host(group, leaving),
    )


def group_of(server_uuid: str) -> ServerGroup | None:
    member = ServerGroupMember.objects.select_related("group").filter(server_uuid=server_uuid).first()
    return member.group if member is not None else None


def group_uuids_of(server_uuids: Iterable[str]) -> dict[str, str]:
    rows = ServerGroupMember.objects.filter(server_uuid__in=list(server_uuids)).values_list(
        "server_uuid", "group__uuid"
    )
    return {str(server_uuid): str(group_uuid) for server_uuid, group_uuid in rows}


def spec_for(group_uuid: str, leaving: Iterable[str] = ()) -> GroupSpec | None:
    """The spec of the group ``group_uuid`` (None when it is gone)."""
    group = ServerGroup.objects.filter(uuid=group_uuid).first()
    return spec_of(group, leaving) if group is not None else None


class Admission:
    """Admits a member of a group with a hard policy to a host, one member
    at a time (the group's row lock); see the module's docstring."""

    def __init__(self, group_uuid: str) -> None:
        self.group_uuid = group_uuid

    def admit(self, member_uuid: str, host: str) -> tuple[str, str] | None:
        """Record ``host`` as ``member_uuid``'s, or say (filter, reason) why the
        group's policy refuses it there now."""
        with transaction.atomic():
            group = ServerGroup.objects.select_for_update().filter(uuid=self.group_uuid).first()
            if group is None:
                return None  # deleted meanwhile: no policy left to keep
            if group.policy in HARD_POLICIES:
                reason = filters.group_refusal(spec_of(group, leaving=[member_uuid]), host)
                if reason is not None:
                    return HARD_POLICIES[group.policy], reason
            ServerGroupMember.objects.filter(group=group, server_uuid=member_uuid).update(host=host)
        return None

    def withdraw(self, member_uuid: str) -> None:
        """The claim after an admission failed: the member is not there."""
        ServerGroupMember.objects.filter(server_uuid=member_uuid).update(host=None)


def admission_for(group: GroupSpec | None) -> Admission | None:
    return Admission(group.uuid) if group is not None and group.policy in HARD_POLICIES else None
