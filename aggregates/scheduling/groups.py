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
from dataclasses import dataclass
from uuid import UUID

from django.db import connection, transaction

from aggregates.scheduling import filters
from aggregates.scheduling.request import GroupSpec
from aggregates.server_groups.models import ServerGroup, ServerGroupMember
from aggregates.servers.models import Server

HARD_POLICIES = {
    ServerGroup.AFFINITY: "ServerGroupAffinityFilter",
    ServerGroup.ANTI_AFFINITY: "ServerGroupAntiAffinityFilter",
}


@dataclass(frozen=True)
class _Fixed:
    """What never changes in a server group (Nova has no update of one):
    kept per process, so that a boot reads its group's members only."""

    pk: int
    uuid: str
    name: str
    policy: str
    max_server_per_host: int

    @classmethod
    def of(cls, group: ServerGroup) -> "_Fixed":
        rules = group.rules or {}
        return cls(group.pk, str(group.uuid), group.name, group.policy, int(rules.get("max_server_per_host") or 1))


_FIXED: dict[str, _Fixed] = {}
_FIXED_KEPT = 10_000


def _fixed(group_uuid: str) -> _Fixed | None:
    """The group's fixed part, read once per process (None: no such group)."""
    known = _FIXED.get(group_uuid)
    if known is None:
        group = ServerGroup.objects.filter(uuid=group_uuid).first()
        if group is None:
            return None
        if len(_FIXED) >= _FIXED_KEPT:
            _FIXED.clear()
        known = _FIXED[group_uuid] = _Fixed.of(group)
    return known


def _members_of(group_pk: int) -> list[tuple[str, str | None, str | None, str | None]]:
    """The group's members' servers not deleted: (uuid, host, task_state,
    the host the member was admitted to), in one query: members joined to
    their servers (no foreign key links them, so the ORM would correlate a
    subquery per member, several times slower)."""
    member, server = ServerGroupMember._meta.db_table, Server._meta.db_table
    with connection.cursor() as cursor:  # plain rows: a model instance per member costs more than the query
        cursor.execute(
            f"SELECT s.uuid, s.host, s.task_state, m.host FROM {member} m "
            f"JOIN {server} s ON s.uuid = m.server_uuid "
            "WHERE m.group_id = %s AND s.deleted_at IS NULL AND (s.vm_state IS NULL OR s.vm_state <> %s)",
            [group_pk, Server.DELETED],
        )
        # uuid.UUID on PostgreSQL, 32 hex digits on SQLite: the same text either way
        return [(str(UUID(str(row[0]))), row[1], row[2], row[3]) for row in cursor.fetchall()]


def _members_by_host(group_pk: int, leaving: Iterable[str] = ()) -> dict[str, set[str]]:
    """Where the group's members are: each member's host, and the host it
    was admitted to while its boot or move is in progress; deleted servers
    and the servers ``leaving`` (being scheduled) left out."""
    skip = set(leaving)
    found: dict[str, set[str]] = {}
    for member, host, task_state, being_placed in _members_of(group_pk):
        if member in skip:
            continue
        hosts = {host} if host else set()
        if task_state is not None and being_placed:
            hosts.add(being_placed)  # being built or moved there
        for name in hosts:
            found.setdefault(name, set()).add(member)
    return found


def _spec(fixed: _Fixed, leaving: Iterable[str]) -> GroupSpec:
    return GroupSpec(
        uuid=fixed.uuid,
        name=fixed.name,
        policy=fixed.policy,
        max_server_per_host=fixed.max_server_per_host,
        members_by_host=_members_by_host(fixed.pk, leaving),
    )


def spec_of(group: ServerGroup, leaving: Iterable[str] = ()) -> GroupSpec:
    return _spec(_Fixed.of(group), leaving)


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
    fixed = _fixed(group_uuid)
    return _spec(fixed, leaving) if fixed is not None else None


class Admission:
    """Admits a member of a group with a hard policy to a host, one member
    at a time (the group's row lock); see the module's docstring."""

    def __init__(self, group_uuid: str) -> None:
        self.group_uuid = group_uuid

    def admit(self, member_uuid: str, host: str) -> tuple[str, str] | None:
        """Record ``host`` as ``member_uuid``'s, or say (filter, reason) why the
        group's policy refuses it there now."""
        fixed = _fixed(self.group_uuid)
        if fixed is None:
            return None  # deleted meanwhile: no policy left to keep
        with transaction.atomic():
            if not ServerGroup.objects.select_for_update().filter(pk=fixed.pk).values_list("pk"):
                return None
            if fixed.policy in HARD_POLICIES:
                reason = filters.group_refusal(_spec(fixed, leaving=[member_uuid]), host)
                if reason is not None:
                    return HARD_POLICIES[fixed.policy], reason
            ServerGroupMember.objects.filter(group_id=fixed.pk, server_uuid=member_uuid).update(host=host)
        return None

    def withdraw(self, member_uuid: str) -> None:
        """The claim after an admission failed: the member is not there."""
        ServerGroupMember.objects.filter(server_uuid=member_uuid).update(host=None)


def admission_for(group: GroupSpec | None) -> Admission | None:
    return Admission(group.uuid) if group is not None and group.policy in HARD_POLICIES else None
