"""Who is asking: the caller of a service function, whichever surface it came from."""
from dataclasses import dataclass, field

ADMIN = "admin"
READER = "reader"
MEMBER = "member"


@dataclass
class Caller:
    user: object = None  # a Django user, or None for system callers
    username: str = ""
    project_id: str = ""
    roles: frozenset = field(default_factory=frozenset)
    request_id: str = ""

    @property
    def is_admin(self):
        return ADMIN in self.roles

    @property
    def can_read_admin_views(self):
        return bool(self.roles & {ADMIN, READER})

    @classmethod
    def system(cls, name="corral", request_id=""):
        """A caller for management commands and tasks: acts as admin."""
        return cls(user=None, username=name, roles=frozenset({ADMIN}), request_id=request_id)

    @classmethod
    def for_user(cls, user, request_id=""):
        """A console user: staff superusers are admins, other staff readers."""
        from aggregates.identity import roles_of_user

        return cls(user=user, username=user.get_username(), roles=roles_of_user(user), request_id=request_id)
