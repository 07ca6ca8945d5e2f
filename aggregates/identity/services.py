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
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.audit.models import Event
from aggregates.identity import throttle
from aggregates.identity.caller import Caller, roles_on_project
from aggregates.identity.models import Project, RoleAssignment, Token

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


def list_projects(name: str | None = None, enabled: bool | None = None) -> list[Project]:
    projects = Project.objects.all()
    if name is not None:
        projects = projects.filter(name=name)
    if enabled is not None:
        projects = projects.filter(enabled=enabled)
    return list(projects)


def get_project(project_id: str) -> Project | None:
    return Project.objects.filter(pk=project_id).first()


def ensure_project(name: str, description: str = "", project_id: str | None = None) -> Project:
    project, _ = Project.objects.get_or_create(
        name=name, defaults={"description": description, **({"id": project_id} if project_id else {})}
    )
    return project


def grant(user: "User", project: Project, role: str) -> None:
    RoleAssignment.objects.update_or_create(user=user, project=project, defaults={"role": role})
