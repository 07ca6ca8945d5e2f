"""Quota limits as Nova's DbQuotaDriver keeps them: a project's limits, a
user's limits within a project, and quota classes (only ``default`` is
read: it overrides the configured defaults). A resource with no row takes
the next level's value; -1 is unlimited. Usage is never stored: it is
counted from the servers (``services.usage``). ``ProjectQuotaLock`` is one
row per project, locked by every check that may add usage, so that checks
of one project queue and each counts what the one before it wrote."""

from django.db import models


class ProjectQuota(models.Model):
    """A limit set for a project (``user_id`` empty) or for one user in it."""

    project_id = models.CharField(max_length=255)
    user_id = models.CharField(max_length=255, blank=True, default="")
    resource = models.CharField(max_length=255)
    hard_limit = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project_id", "user_id", "resource"], name="quota_project_user_resource")
        ]

    def __str__(self) -> str:
        who = f"{self.project_id}/{self.user_id}" if self.user_id else self.project_id
        return f"{who} {self.resource}={self.hard_limit}"


class QuotaClassLimit(models.Model):
    """A limit of a quota class (Nova's os-quota-class-sets)."""

    class_name = models.CharField(max_length=255)
    resource = models.CharField(max_length=255)
    hard_limit = models.IntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["class_name", "resource"], name="quota_class_resource")]

    def __str__(self) -> str:
        return f"{self.class_name} {self.resource}={self.hard_limit}"


class ProjectQuotaLock(models.Model):
    """The row a quota check locks for its project (created on first use)."""

    project_id = models.CharField(max_length=255, primary_key=True)

    def __str__(self) -> str:
        return self.project_id
