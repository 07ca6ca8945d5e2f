"""Identity: projects, role assignments and API tokens.

Tokens are random strings handed to the client once; only their SHA-256 is
stored. Roles are read at every check, so revoking a role takes effect at once.
"""
import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from .context import ADMIN, MEMBER, READER, Caller
from .models import Project, RoleAssignment, Token

ROLE_IMPLIES = {ADMIN: {ADMIN, READER, MEMBER}, READER: {READER, MEMBER}, MEMBER: {MEMBER}}


def hash_token(token):
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def expand_roles(role_names):
    roles = set()
    for name in role_names:
        roles |= ROLE_IMPLIES.get(name, {name})
    return frozenset(roles)


def roles_on_project(user, project):
    if project is None:
        return frozenset()
    names = RoleAssignment.objects.filter(user=user, project=project).values_list("role", flat=True)
    return expand_roles(names)


def roles_of_user(user):
    """Roles a console user holds: a superuser is an admin; otherwise the
    strongest role the user holds on any project."""
    if user.is_superuser:
        return expand_roles([ADMIN])
    return expand_roles(RoleAssignment.objects.filter(user=user).values_list("role", flat=True))


def issue_token(user, project):
    """Create a token for ``user`` scoped to ``project``; returns (token string, Token row)."""
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    row = Token.objects.create(
        token_hash=hash_token(token),
        user=user,
        project=project,
        issued_at=now,
        expires_at=now + timedelta(seconds=settings.TOKEN_EXPIRATION),
    )
    Token.objects.filter(expires_at__lt=now - timedelta(days=1)).delete()
    return token, row


def caller_for_token(token, request_id=""):
    """The Caller a valid token stands for, or None if it is unknown,
    expired, or its user or project was disabled."""
    row = (
        Token.objects.select_related("user", "project")
        .filter(token_hash=hash_token(token), expires_at__gt=timezone.now())
        .first()
    )
    if row is None or not row.user.is_active:
        return None
    if row.project is not None and not row.project.enabled:
        return None
    return Caller(
        user=row.user,
        username=row.user.get_username(),
        project_id=row.project_id or "",
        roles=roles_on_project(row.user, row.project),
        request_id=request_id,
    )


def ensure_project(name, description="", project_id=None):
    project, _ = Project.objects.get_or_create(
        name=name, defaults={"description": description, **({"id": project_id} if project_id else {})}
    )
    return project


def grant(user, project, role):
    RoleAssignment.objects.update_or_create(user=user, project=project, defaults={"role": role})
