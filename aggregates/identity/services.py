"""Identity: projects, role assignments, API tokens and Keystone-style logins.

Tokens are random strings handed to the client once; only their SHA-256 is
stored. Roles are read at every check, so revoking a role takes effect at once.

There is one domain, Keystone's ``Default`` (id ``default``): every user and
project belongs to it. Users are Django users; their Keystone id is a 32-hex
UUID derived from the user's primary key (see ``user_id_of``), so it needs no
column, never changes when the user is renamed, and is the same on every call.
"""

import hashlib
import secrets
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.audit.models import Event
from aggregates.errors import Conflict, Invalid, NotFound
from aggregates.identity import throttle
from aggregates.identity.caller import ROLE_IMPLIES, Caller, roles_on_project
from aggregates.identity.models import Project, RoleAssignment, Token, UserAttributes

if TYPE_CHECKING:
    # django-stubs' stand-in for the AUTH_USER_MODEL class (its plugin resolves it).
    from django.contrib.auth.models import _User as User

# A Keystone reference to a user, project or domain, as the request body
# gives it: {"name": ..., "domain": {...}} or {"id": ...} (users also carry
# "password"). Parsed JSON, hence Any.
Ref = Mapping[str, Any]

DEFAULT_DOMAIN = {"id": "default", "name": "Default"}
SUPPORTED_METHODS = ("password", "token")

# Namespace of the ids derived for things that have no id column (users,
# roles, catalog services and endpoints). Changing it changes every such id.
_ID_NAMESPACE = uuid.UUID("f04bbc7a-5af3-46da-8beb-64af0438de64")

UNAUTHORIZED = "The request you have made requires authentication."


class AuthenticationFailed(Exception):
    """The credentials or the requested scope were refused (HTTP 401).

    Refused credentials always carry the generic message, so that a caller
    cannot tell an unknown user from a wrong password or a disabled account."""

    def __init__(self, message: str = UNAUTHORIZED) -> None:
        super().__init__(message)
        self.message = message


# Too many failed logins (HTTP 429 on the API, a message in the console).
Throttled = throttle.Throttled


def derived_id(kind: str, key: object) -> str:
    """A stable 32-hex id for ``kind``/``key`` (Keystone ids are 32-hex UUIDs)."""
    return uuid.uuid5(_ID_NAMESPACE, f"{kind}:{key}").hex


def user_id_of(user: "User") -> str:
    return derived_id("user", user.pk)


def role_id_of(role_name: str) -> str:
    return derived_id("role", role_name)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def audit_id_of(token_row: Token) -> str:
    """Keystone's ``audit_ids`` entry: an id for logs that is not the token."""
    return derived_id("token", token_row.token_hash)[:22]


# --- tokens ----------------------------------------------------------------


def issue_token(user: "User", project: Project | None, expires_at: datetime | None = None) -> tuple[str, Token]:
    """Create a token for ``user`` scoped to ``project`` (None: unscoped);
    returns (token string, Token row). It expires after TOKEN_EXPIRATION
    seconds, or at ``expires_at`` if that comes first."""
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    expiry = now + timedelta(seconds=settings.TOKEN_EXPIRATION)
    row = Token.objects.create(
        token_hash=hash_token(token),
        user=user,
        project=project,
        issued_at=now,
        expires_at=min(expiry, expires_at) if expires_at else expiry,
    )
    Token.objects.filter(expires_at__lt=now - timedelta(days=1)).delete()
    return token, row


def valid_token(token: str | None) -> Token | None:
    """The Token row of ``token`` if it is known, unexpired, and its user and
    project are enabled; else None."""
    if not token:
        return None
    row = (
        Token.objects.select_related("user", "project")
        .filter(token_hash=hash_token(token), expires_at__gt=timezone.now())
        .first()
    )
    if row is None or not row.user.is_active:
        return None
    if row.project is not None and not row.project.enabled:
        return None
    return row


def caller_for_token(token: str | None, request_id: str = "") -> Caller | None:
    """The Caller a valid token stands for, or None if it is unknown,
    expired, or its user or project was disabled."""
    row = valid_token(token)
    if row is None:
        return None
    return Caller(
        user=row.user,
        username=row.user.get_username(),
        project_id=row.project_id or "",
        roles=roles_on_project(row.user, row.project),
        request_id=request_id,
    )


def revoke_token(token: str | None) -> bool:
    """Delete ``token``; returns whether it was a valid token."""
    row = valid_token(token)
    if row is None:
        return False
    row.delete()
    return True


# --- logins (POST /identity/v3/auth/tokens) --------------------------------


def is_default_domain(domain_ref: Ref) -> bool:
    """Whether ``{"name": ...}`` or ``{"id": ...}`` names the Default domain.
    As Keystone, the name wins when both are given."""
    if "name" in domain_ref:
        return domain_ref["name"] == DEFAULT_DOMAIN["name"]
    return domain_ref.get("id") == DEFAULT_DOMAIN["id"]


def find_user(user_ref: Ref) -> "User | None":
    """The user named by ``{"name", "domain"}`` or ``{"id"}``, or None."""
    User = get_user_model()
    if "name" in user_ref:
        if not is_default_domain(user_ref["domain"]):
            return None
        return User.objects.filter(**{User.USERNAME_FIELD: user_ref["name"]}).first()
    wanted = user_ref["id"]
    for pk in User.objects.values_list("pk", flat=True).iterator():
        if derived_id("user", pk) == wanted:
            return User.objects.get(pk=pk)
    return None


def find_project(project_ref: Ref) -> Project | None:
    """The project named by ``{"name", "domain"}`` or ``{"id"}``, or None."""
    if "name" in project_ref:
        if not is_default_domain(project_ref["domain"]):
            return None
        return Project.objects.filter(name=project_ref["name"], domain_id=DEFAULT_DOMAIN["id"]).first()
    return Project.objects.filter(pk=project_ref["id"]).first()


def _user_by_password(user_ref: Ref) -> "User":
    user = find_user(user_ref)
    if user is None:
        # Hash anyway, so that an unknown name takes as long as a wrong password.
        get_user_model()().set_password(user_ref["password"])
        raise AuthenticationFailed()
    if not user.check_password(user_ref["password"]) or not user.is_active:
        raise AuthenticationFailed()
    return user


def _user_by_token(token: str | None) -> tuple["User", datetime]:
    row = valid_token(token)
    if row is None:
        raise AuthenticationFailed()
    return row.user, row.expires_at


def _project_for(user: "User", project_ref: Ref) -> Project:
    """The project ``user`` may scope a token to: it exists, is enabled and
    the user holds a role on it."""
    project = find_project(project_ref)
    if project is None or not project.enabled or not roles_on_project(user, project):
        raise AuthenticationFailed(
            f"User {user.get_username()} has no access to project {_name_or_id(project_ref)}: it does not exist, "
            "is disabled, or the user holds no role on it. Ask an administrator for a role on the project."
        )
    return project


def authenticate_for_token(
    methods: Sequence[str],
    password_user: Ref | None = None,
    token: str | None = None,
    project_ref: Ref | None = None,
    request_id: str = "",
    address: str | None = None,
) -> tuple[str, Token]:
    """Check the credentials of every method in ``methods`` and issue a token
    scoped to ``project_ref`` (unscoped when None).

    ``password_user`` is the password method's ``user`` object, ``token`` the
    token method's token. A token obtained with the token method (re-scoping)
    expires no later than the token it came from. Returns (token string,
    Token row); raises AuthenticationFailed, and records the refusal.

    Password logins are throttled per user name and per source ``address``
    (``throttle``): past the limit, Throttled is raised without checking the
    password; a refused password counts against both."""
    if "password" in methods and password_user is not None:
        throttle.check(_name_or_id(password_user), address, request_id)
    password_refused = False
    try:
        if not methods or set(methods) - set(SUPPORTED_METHODS):
            raise AuthenticationFailed("Attempted to authenticate with an unsupported method.")
        user = expires_at = None
        if "password" in methods:
            assert password_user is not None  # the API's schema requires it with this method
            password_refused = True
            user = _user_by_password(password_user)
            password_refused = False
        if "token" in methods:
            token_user, expires_at = _user_by_token(token)
            if user is not None and token_user.pk != user.pk:
                raise AuthenticationFailed()
            user = token_user
        assert user is not None  # methods holds "password" or "token"
        project = _project_for(user, project_ref) if project_ref is not None else None
        with transaction.atomic():
            return issue_token(user, project, expires_at=expires_at)
    except AuthenticationFailed as exc:
        _record_refusal(methods, password_user, project_ref, exc, request_id)
        if password_refused and password_user is not None:
            throttle.record_failure(_name_or_id(password_user), address)
        raise


def _name_or_id(ref: Ref | None) -> str:
    ref = ref or {}
    return ref.get("name") or ref.get("id") or ""


def _record_refusal(
    methods: Sequence[str],
    password_user: Ref | None,
    project_ref: Ref | None,
    exc: AuthenticationFailed,
    request_id: str,
) -> None:
    """An audit event for a refused login (never with the password)."""
    events.record(
        Caller(username=_name_or_id(password_user)[:150], request_id=request_id),
        "identity.authenticate",
        object_type="token",
        priority=Event.ERROR,
        payload={
            "outcome": "failure",
            "methods": list(methods),
            "project": _name_or_id(project_ref),
            "reason": exc.message,
        },
    )


# --- projects ----------------------------------------------------------------

PROJECT_NAME_MAX = 64  # Keystone's
USER_NAME_MAX = 150  # the Django user's username column (Keystone: 255)
ROLE_NAMES = tuple(name for name, _ in RoleAssignment.ROLES)
_UNSET: Any = object()


def list_projects(name: str | None = None, enabled: bool | None = None, domain_id: str | None = None) -> list[Project]:
    return _projects_filtered(Project.objects.all(), name, enabled, domain_id)


def _projects_filtered(
    projects: QuerySet[Project], name: str | None, enabled: bool | None, domain_id: str | None
) -> list[Project]:
    """Keystone's project list filters (each only when given)."""
    if name is not None:
        projects = projects.filter(name=name)
    if enabled is not None:
        projects = projects.filter(enabled=enabled)
    if domain_id is not None:
        projects = projects.filter(domain_id=domain_id)
    return list(projects)


def get_project(project_id: str) -> Project | None:
    return Project.objects.filter(pk=project_id).first()


def ensure_project(name: str, description: str = "", project_id: str | None = None) -> Project:
    project, _ = Project.objects.get_or_create(
        name=name, defaults={"description": description, **({"id": project_id} if project_id else {})}
    )
    return project


def grant(user: "User", project: Project, role: str) -> None:
    """Give ``user`` ``role`` on ``project`` (seeding; no audit event). A user
    may hold several roles on one project, as in Keystone."""
    RoleAssignment.objects.get_or_create(user=user, project=project, role=role)


@contextmanager
def _atomic_unique(conflict: Callable[[], Conflict]) -> Iterator[None]:
    """A transaction whose unique-constraint failure (a concurrent request
    took the name first) is ``conflict()``, never a 500."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError as exc:
        raise conflict() from exc


def check_domain(domain_id: str | None) -> str:
    """The id of the domain ``domain_id`` names (None: the Default domain);
    Corral has that one only."""
    if domain_id is None or domain_id == DEFAULT_DOMAIN["id"]:
        return DEFAULT_DOMAIN["id"]
    raise NotFound(f"Could not find domain: {domain_id[:64]}.", field="domain_id")


def _name(value: str, limit: int, kind: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"Invalid input for field '{kind}/name': must not be empty or blank.", field="name")
    if len(value) > limit:
        raise Invalid(f"Invalid input for field '{kind}/name': must be at most {limit} characters long.", field="name")
    return value


def _project_conflict(name: str) -> Conflict:
    return Conflict(
        "Conflict occurred attempting to store project - Duplicate entry found with name "
        f"{name} at domain ID {DEFAULT_DOMAIN['id']}.",
        field="name",
    )


def _project_or_404(project_id: str) -> Project:
    project = get_project(project_id)
    if project is None:
        raise NotFound(f"Could not find project: {project_id[:64]}.", field="project")
    return project


def create_project(
    caller: Caller, name: str, description: str | None = None, enabled: bool = True, domain_id: str | None = None
) -> Project:
    """Create a project in the Default domain; 409 if the name is taken."""
    try:
        domain = check_domain(domain_id)
    except NotFound as exc:  # Keystone answers 400 here, 404 for a user
        raise Invalid(exc.message, field="domain_id") from exc
    name = _name(name, PROJECT_NAME_MAX, "project")
    with _atomic_unique(lambda: _project_conflict(name)):
        if Project.objects.filter(name=name).exists():
            raise _project_conflict(name)
        project = Project.objects.create(name=name, description=description or "", enabled=enabled, domain_id=domain)
        events.record(
            caller,
            "identity.project.created",
            object_type="project",
            object_id=project.id,
            payload={"name": name, "enabled": enabled},
        )
    return project


def update_project(
    caller: Caller,
    project_id: str,
    name: str | None = None,
    description: str | None = _UNSET,
    enabled: bool | None = None,
    domain_id: str | None = _UNSET,
) -> Project:
    """Change a project's name, description or enabled flag. Disabling it
    revokes the tokens scoped to it (they stay revoked once it is enabled
    again, as Keystone's revocation events)."""
    with _atomic_unique(lambda: _project_conflict(name or "")):
        project = Project.objects.select_for_update().filter(pk=project_id).first()
        if project is None:
            raise NotFound(f"Could not find project: {project_id[:64]}.", field="project")
        if domain_id is not _UNSET and domain_id != project.domain_id:
            raise Invalid("Cannot change Domain ID", field="domain_id")
        changed: dict[str, Any] = {}
        if name is not None and name != project.name:
            name = _name(name, PROJECT_NAME_MAX, "project")
            if Project.objects.filter(name=name).exclude(pk=project.pk).exists():
                raise _project_conflict(name)
            project.name = changed["name"] = name
        if description is not _UNSET:
            project.description = changed["description"] = description or ""
        if enabled is not None and enabled != project.enabled:
            project.enabled = changed["enabled"] = enabled
            if not enabled:
                Token.objects.filter(project=project).delete()
        project.save()
        events.record(caller, "identity.project.updated", object_type="project", object_id=project.id, payload=changed)
    return project


def delete_project(caller: Caller, project_id: str) -> None:
    """Delete a project, its role assignments and the tokens scoped to it.
    As in Keystone, servers, images and flavor access of the project are left
    as they are (owned by a project id nobody can scope to any more), and
    users whose default project it was lose that default."""
    with transaction.atomic():
        project = _project_or_404(project_id)
        UserAttributes.objects.filter(default_project_id=project.id).update(default_project_id=None)
        name = project.name
        project.delete()
        events.record(
            caller, "identity.project.deleted", object_type="project", object_id=project_id, payload={"name": name}
        )


# --- users ---------------------------------------------------------------------


def attributes_of(user: "User") -> UserAttributes:
    """The user's Keystone attributes (an unsaved empty row if it has none)."""
    try:
        return user.identity_attributes
    except UserAttributes.DoesNotExist:
        return UserAttributes(user=user)


def list_users(name: str | None = None, enabled: bool | None = None) -> list["User"]:
    User = get_user_model()
    users = User.objects.select_related("identity_attributes").order_by(User.USERNAME_FIELD)
    if name is not None:
        users = users.filter(**{User.USERNAME_FIELD: name})
    if enabled is not None:
        users = users.filter(is_active=enabled)
    return list(users)


def get_user(user_id: str) -> "User | None":
    """The user whose Keystone id is ``user_id``, or None."""
    return find_user({"id": user_id})


def _user_or_404(user_id: str) -> "User":
    user = get_user(user_id)
    if user is None:
        raise NotFound(f"Could not find user: {user_id[:64]}.", field="user")
    return user


def _user_conflict(name: str) -> Conflict:
    return Conflict(
        "Conflict occurred attempting to store user - Duplicate entry found with name "
        f"{name} at domain ID {DEFAULT_DOMAIN['id']}.",
        field="name",
    )


def _set_password(user: "User", password: str | None) -> None:
    if password is None:
        user.set_unusable_password()
    else:
        user.set_password(password)


def create_user(
    caller: Caller,
    name: str,
    password: str | None = None,
    email: str | None = None,
    description: str | None = None,
    default_project_id: str | None = None,
    enabled: bool = True,
    domain_id: str | None = None,
) -> "User":
    """Create a user of the Default domain; 409 if the name is taken. A user
    without a password cannot log in. ``default_project_id`` grants nothing
    (as in Keystone): grant a role with ``grant_role``."""
    check_domain(domain_id)
    name = _name(name, USER_NAME_MAX, "user")
    User = get_user_model()
    with _atomic_unique(lambda: _user_conflict(name)):
        if User.objects.filter(**{User.USERNAME_FIELD: name}).exists():
            raise _user_conflict(name)
        user = User(**{User.USERNAME_FIELD: name}, email=email or "", is_active=enabled)
        _set_password(user, password)
        user.save()
        if description is not None or default_project_id is not None:
            UserAttributes.objects.create(user=user, description=description, default_project_id=default_project_id)
        events.record(
            caller,
            "identity.user.created",
            object_type="user",
            object_id=user_id_of(user),
            payload={"name": name, "enabled": enabled, "default_project_id": default_project_id},
        )
    return user


def update_user(
    caller: Caller,
    user_id: str,
    name: str | None = None,
    password: str | None = _UNSET,
    email: str | None = _UNSET,
    description: str | None = _UNSET,
    default_project_id: str | None = _UNSET,
    enabled: bool | None = None,
    domain_id: str | None = _UNSET,
) -> "User":
    """Change a user. A new password or disabling the user revokes its
    tokens, as in Keystone."""
    User = get_user_model()
    with _atomic_unique(lambda: _user_conflict(name or "")):
        user = _user_or_404(user_id)
        if domain_id is not _UNSET and domain_id != DEFAULT_DOMAIN["id"]:
            raise Invalid("Cannot change Domain ID", field="domain_id")
        changed: list[str] = []
        if name is not None and name != user.get_username():
            name = _name(name, USER_NAME_MAX, "user")
            if User.objects.filter(**{User.USERNAME_FIELD: name}).exclude(pk=user.pk).exists():
                raise _user_conflict(name)
            setattr(user, User.USERNAME_FIELD, name)
            changed.append("name")
        revoke = False
        if password is not _UNSET:
            _set_password(user, password)
            changed.append("password")
            revoke = password is not None
        if email is not _UNSET:
            user.email = email or ""
            changed.append("email")
        if enabled is not None and enabled != user.is_active:
            user.is_active = enabled
            changed.append("enabled")
            revoke = revoke or not enabled
        user.save()
        if description is not _UNSET or default_project_id is not _UNSET:
            attributes = attributes_of(user)
            if description is not _UNSET:
                attributes.description = description
                changed.append("description")
            if default_project_id is not _UNSET:
                attributes.default_project_id = default_project_id
                changed.append("default_project_id")
            attributes.save()
        if revoke:
            Token.objects.filter(user=user).delete()
        events.record(
            caller, "identity.user.updated", object_type="user", object_id=user_id, payload={"changed": changed}
        )
    return user


def delete_user(caller: Caller, user_id: str) -> None:
    """Delete a user with its role assignments; its tokens are revoked."""
    with transaction.atomic():
        user = _user_or_404(user_id)
        name = user.get_username()
        Token.objects.filter(user=user).delete()
        user.delete()
        events.record(caller, "identity.user.deleted", object_type="user", object_id=user_id, payload={"name": name})


def change_own_password(
    user_id: str, original_password: str, password: str, address: str | None = None, request_id: str = ""
) -> None:
    """A user changes its own password, proving it knows the current one (no
    token needed, as in Keystone); its tokens are revoked. A wrong password or
    an unknown user raises AuthenticationFailed, and counts against the login
    throttle as a refused login does."""
    user = get_user(user_id)
    name = user.get_username() if user is not None else user_id
    throttle.check(name, address, request_id)
    if user is None or not user.is_active or not user.check_password(original_password):
        if user is None:
            get_user_model()().set_password(original_password)  # as long as a wrong password takes
        throttle.record_failure(name, address)
        raise AuthenticationFailed("Error when changing user password: Invalid user / password")
    with transaction.atomic():
        user.set_password(password)
        user.save()
        Token.objects.filter(user=user).delete()
        events.record(
            Caller(user=user, username=name, request_id=request_id),
            "identity.user.updated",
            object_type="user",
            object_id=user_id,
            payload={"changed": ["password"], "by": "the user"},
        )


def projects_of_user(
    user_id: str, name: str | None = None, enabled: bool | None = None, domain_id: str | None = None
) -> list[Project]:
    """The projects the user holds a role on (``GET /v3/users/{id}/projects``)."""
    user = _user_or_404(user_id)
    return _projects_filtered(Project.objects.filter(role_assignments__user=user).distinct(), name, enabled, domain_id)


# --- roles and role assignments -------------------------------------------------


def role_named(role_id: str) -> str | None:
    """The name of the role whose id is ``role_id``, or None."""
    return next((name for name in ROLE_NAMES if role_id_of(name) == role_id), None)


def _role_or_404(role_id: str) -> str:
    name = role_named(role_id)
    if name is None:
        raise NotFound(f"Could not find role: {role_id[:64]}.", field="role")
    return name


def _assignment_not_found(role_id: str, user_id: str, project_id: str) -> NotFound:
    return NotFound(
        f"Could not find role assignment with role: {role_id[:64]}, user or group: {user_id[:64]}, "
        f"project, domain, or system: {project_id[:64]}.",
        field="role",
    )


def _grant_target(project_id: str, user_id: str, role_id: str) -> tuple[Project, "User", str]:
    return _project_or_404(project_id), _user_or_404(user_id), _role_or_404(role_id)


def grant_role(caller: Caller, project_id: str, user_id: str, role_id: str) -> None:
    """Give the user the role on the project (nothing changes if it holds it)."""
    try:
        with transaction.atomic():
            project, user, role = _grant_target(project_id, user_id, role_id)
            _, created = RoleAssignment.objects.get_or_create(user=user, project=project, role=role)
            if created:
                events.record(
                    caller,
                    "identity.role_assignment.created",
                    object_type="project",
                    object_id=project.id,
                    payload={"user": user_id_of(user), "user_name": user.get_username(), "role": role},
                )
    except IntegrityError:
        pass  # a concurrent request granted it: the role is held, as asked


def revoke_role(caller: Caller, project_id: str, user_id: str, role_id: str) -> None:
    """Take the role away from the user on the project (404 if it holds none)."""
    with transaction.atomic():
        project, user, role = _grant_target(project_id, user_id, role_id)
        deleted, _ = RoleAssignment.objects.filter(user=user, project=project, role=role).delete()
        if not deleted:
            raise _assignment_not_found(role_id, user_id, project_id)
        events.record(
            caller,
            "identity.role_assignment.deleted",
            object_type="project",
            object_id=project.id,
            payload={"user": user_id_of(user), "user_name": user.get_username(), "role": role},
        )


def has_role(project_id: str, user_id: str, role_id: str) -> None:
    """Nothing if the user holds the role on the project directly; else NotFound."""
    project, user, role = _grant_target(project_id, user_id, role_id)
    if not RoleAssignment.objects.filter(user=user, project=project, role=role).exists():
        raise _assignment_not_found(role_id, user_id, project_id)


def roles_granted(project_id: str, user_id: str) -> list[str]:
    """The roles granted to the user on the project (not the implied ones)."""
    project, user = _project_or_404(project_id), _user_or_404(user_id)
    return sorted(RoleAssignment.objects.filter(user=user, project=project).values_list("role", flat=True))


class Assignment:
    """One row of ``GET /v3/role_assignments``: ``prior_role`` is the granted
    role an effective (implied) ``role`` comes from."""

    def __init__(self, user: "User", project: Project, role: str, prior_role: str | None = None) -> None:
        self.user, self.project, self.role, self.prior_role = user, project, role, prior_role

    @property
    def user_id(self) -> str:
        """The user's Keystone id."""
        return user_id_of(self.user)

    @property
    def role_id(self) -> str:
        return role_id_of(self.role)


def list_role_assignments(
    user_id: str | None = None,
    project_id: str | None = None,
    role_id: str | None = None,
    effective: bool = False,
) -> list[Assignment]:
    """Role assignments on projects, filtered by user, project and role ids
    (unknown ids match nothing). With ``effective``, each assignment also
    brings the roles its role implies."""
    rows = RoleAssignment.objects.select_related("user", "project").order_by("project__name", "user_id", "role")
    if project_id is not None:
        rows = rows.filter(project_id=project_id)
    if user_id is not None:
        user = get_user(user_id)
        if user is None:
            return []
        rows = rows.filter(user=user)
    rows_list = list(rows)
    out = [Assignment(row.user, row.project, row.role) for row in rows_list]
    if effective:
        seen = {(row.user_id, row.project_id, row.role) for row in rows_list}
        for row in rows_list:
            for role in sorted(ROLE_IMPLIES.get(row.role, {row.role}) - {row.role}):
                if (row.user_id, row.project_id, role) not in seen:
                    seen.add((row.user_id, row.project_id, role))
                    out.append(Assignment(row.user, row.project, role, prior_role=row.role))
    if role_id is not None:
        out = [assignment for assignment in out if role_id_of(assignment.role) == role_id]
    return out
