"""Who is asking: the caller of a service function, whichever surface it
came from, and the roles a user holds (read at every check, so revoking a
role takes effect at once)."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from aggregates.identity.models import Project, RoleAssignment
from config import policy

if TYPE_CHECKING:
    # django-stubs' stand-in for the AUTH_USER_MODEL class (its plugin resolves it).
    from django.contrib.auth.models import _User as User

ADMIN = "admin"
READER = "reader"
MEMBER = "member"
MANAGER = "manager"
# Keystone's defaults have admin imply manager, manager imply member; Corral's
# reader is a read-only admin (its own implications, docs/compatibility.md).
ROLE_IMPLIES = {
    ADMIN: {ADMIN, MANAGER, READER, MEMBER},
    MANAGER: {MANAGER, MEMBER},
    READER: {READER, MEMBER},
    MEMBER: {MEMBER},
}


def expand_roles(role_names: Iterable[str]) -> frozenset[str]:
    roles: set[str] = set()
    for name in role_names:
        roles |= ROLE_IMPLIES.get(name, {name})
    return frozenset(roles)


def roles_on_project(user: "User", project: Project | None) -> frozenset[str]:
    if project is None:
        return frozenset()
    names = RoleAssignment.objects.filter(user=user, project=project).values_list("role", flat=True)
    return expand_roles(names)


def roles_of_user(user: "User") -> frozenset[str]:
    """Roles a console user holds: a superuser is an admin; otherwise the
    strongest role the user holds on any project."""
    if user.is_superuser:
        return expand_roles([ADMIN])
    return expand_roles(RoleAssignment.objects.filter(user=user).values_list("role", flat=True))


@dataclass
class Caller:
    user: "User | None" = None  # a Django user, or None for system callers
    username: str = ""
    project_id: str = ""
    roles: frozenset[str] = field(default_factory=frozenset)
    request_id: str = ""
    # The user's id where it is not a Django user's (an external Keystone's user).
    user_id: str = ""
    # This caller's policy decisions, by rule and target: a list view asks
    # the same rule for every row, and one oslo.policy check costs ~0.2 ms.
    _decisions: dict[tuple[str, tuple[tuple[str, Any], ...]], bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def is_admin(self) -> bool:
        return ADMIN in self.roles

    @property
    def can_read_admin_views(self) -> bool:
        """Whether the caller reads the administrators' views (the policy's
        ``admin_reader_api``: a read-only admin)."""
        return self.may("admin_reader_api")

    @property
    def creds(self) -> dict[str, Any]:
        return policy.creds(self.roles, self.project_id, self.user_id or self.username)

    def may(self, rule: str, target: Mapping[str, Any] | None = None) -> bool:
        """Whether the policy's ``rule`` lets this caller act on ``target``
        (by default its own project)."""
        key = (rule, tuple(sorted((target or {}).items())))
        decision = self._decisions.get(key)
        if decision is None:
            decision = self._decisions[key] = policy.allowed(rule, self.creds, target)
        return decision

    @classmethod
    def system(cls, name: str = "corral", request_id: str = "") -> Self:
        """A caller for management commands and tasks: acts as admin."""
        return cls(user=None, username=name, roles=frozenset({ADMIN}), request_id=request_id)

    @classmethod
    def for_user(cls, user: "User", request_id: str = "") -> Self:
        """A console user: staff superusers are admins, other staff readers."""
        return cls(user=user, username=user.get_username(), roles=roles_of_user(user), request_id=request_id)
