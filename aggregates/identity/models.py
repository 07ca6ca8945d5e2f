"""Identity data: projects, role assignments and API tokens (users are Django users)."""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


def new_hex_id() -> str:
    return uuid.uuid4().hex


class Project(models.Model):
    """A tenant. Ids are 32-hex like Keystone's, because aggregate
    metadata such as ``filter_tenant_id`` names them."""

    id = models.CharField(primary_key=True, max_length=64, default=new_hex_id)
    name = models.CharField(max_length=64, unique=True)
    description = models.TextField(blank=True, default="")
    enabled = models.BooleanField(default=True)
    domain_id = models.CharField(max_length=64, default="default")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class RoleAssignment(models.Model):
    ADMIN = "admin"
    READER = "reader"
    MEMBER = "member"
    # Keystone's bootstrap roles: a project's manager may do what Nova's
    # project_manager_or_admin rules give (moves without a host).
    MANAGER = "manager"
    ROLES = [(ADMIN, "admin"), (READER, "reader"), (MEMBER, "member"), (MANAGER, "manager")]

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="role_assignments")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="role_assignments")
    role = models.CharField(max_length=16, choices=ROLES)

    class Meta:
        # As Keystone, a user may hold several roles on one project.
        constraints = [models.UniqueConstraint(fields=["user", "project", "role"], name="uniq_role_user_project_role")]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} on {self.project}"


class UserAttributes(models.Model):
    """What Keystone keeps of a user beyond the Django user (name, password,
    email, enabled): its description and default project. A user without a
    row has neither. ``default_project_id`` is not a foreign key: Keystone
    accepts one naming no project, and clears it when the project is deleted."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="identity_attributes"
    )
    description = models.TextField(null=True, blank=True)
    default_project_id = models.CharField(max_length=64, null=True, blank=True, db_index=True)

    def __str__(self) -> str:
        return f"attributes of {self.user}"


class Token(models.Model):
    """An issued API token. Only the SHA-256 of the token is stored."""

    token_hash = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE)
    issued_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"token of {self.user} until {self.expires_at:%Y-%m-%d %H:%M}"


class LoginFailure(models.Model):
    """One refused login, kept for the login throttle (``identity.throttle``):
    in the database so that every gunicorn worker sees the same count.
    ``key`` is ``user:<name>`` or ``addr:<address>``; rows older than the
    throttle window are deleted as new failures come in."""

    key = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["key", "created_at"], name="login_failure_key_time")]
