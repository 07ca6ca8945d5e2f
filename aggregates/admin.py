"""Django admin registrations: a raw view of every compute-side table.

Changes to aggregates and hosts belong in the console or the API, which go
through the service functions; here aggregates and memberships are read-only
so that no rule can be bypassed by accident.
"""

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.http import HttpRequest

from . import models

if TYPE_CHECKING:
    # django-stubs makes the admin classes generic in their model; Django's
    # own cannot be subscripted at run time, so the bases below name them
    # for the type checker only (one base serves every model).
    ModelAdmin = admin.ModelAdmin[Any]
    TabularInline = admin.TabularInline[Any, Any]
else:
    ModelAdmin = admin.ModelAdmin
    TabularInline = admin.TabularInline


class ReadOnlyAdmin(ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class AggregateMetadataInline(TabularInline):
    model = models.AggregateMetadata
    extra = 0


class AggregateHostInline(TabularInline):
    model = models.AggregateHost
    extra = 0


@admin.register(models.Aggregate)
class AggregateAdmin(ReadOnlyAdmin):
    list_display = ("id", "name", "uuid", "created_at", "updated_at")
    search_fields = ("name", "uuid")
    inlines = [AggregateMetadataInline, AggregateHostInline]


@admin.register(models.AggregateMetadata)
class AggregateMetadataAdmin(ReadOnlyAdmin):
    list_display = ("aggregate", "key", "value")
    list_filter = ("key",)
    search_fields = ("key", "value", "aggregate__name")


@admin.register(models.AggregateHost)
class AggregateHostAdmin(ReadOnlyAdmin):
    list_display = ("aggregate", "host", "created_at")
    search_fields = ("host", "aggregate__name")


@admin.register(models.Service)
class ServiceAdmin(ReadOnlyAdmin):
    list_display = ("id", "host", "binary", "disabled", "disabled_reason", "forced_down", "last_seen_up")
    list_filter = ("binary", "disabled", "forced_down")
    search_fields = ("host", "uuid")


@admin.register(models.ComputeNode)
class ComputeNodeAdmin(ReadOnlyAdmin):
    list_display = ("hypervisor_hostname", "host", "uuid", "vcpus", "memory_mb", "local_gb", "running_vms")
    search_fields = ("hypervisor_hostname", "host", "uuid")


class FlavorExtraSpecInline(TabularInline):
    model = models.FlavorExtraSpec
    extra = 0


@admin.register(models.Flavor)
class FlavorAdmin(ReadOnlyAdmin):
    list_display = ("flavorid", "name", "vcpus", "memory_mb", "root_gb", "is_public")
    search_fields = ("flavorid", "name")
    inlines = [FlavorExtraSpecInline]


@admin.register(models.FlavorExtraSpec)
class FlavorExtraSpecAdmin(ReadOnlyAdmin):
    list_display = ("flavor", "key", "value")
    search_fields = ("key", "flavor__name")


@admin.register(models.FlavorAccess)
class FlavorAccessAdmin(ReadOnlyAdmin):
    list_display = ("flavor", "project_id")


@admin.register(models.Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "event_type", "priority", "object_type", "object_id", "username", "request_id")
    list_filter = ("priority", "object_type")
    search_fields = ("event_type", "object_id", "request_id", "global_request_id", "username")


# The placement outboxes and reconciliation runs: what reached placement, what
# is pending and why (written by the service functions and the reconciler only).
@admin.register(models.PlacementMirrorRequest)
class PlacementMirrorRequestAdmin(ReadOnlyAdmin):
    list_display = ("id", "action", "host", "aggregate_name", "status", "attempts", "next_attempt_at", "created_at")
    list_filter = ("status", "action")
    search_fields = ("host", "aggregate_name", "aggregate_uuid", "last_error")


@admin.register(models.ProviderSyncRequest)
class ProviderSyncRequestAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "action",
        "hypervisor_hostname",
        "host",
        "status",
        "attempts",
        "next_attempt_at",
        "created_at",
    )
    list_filter = ("status", "action")
    search_fields = ("hypervisor_hostname", "host", "node_uuid", "last_error")


@admin.register(models.ReconciliationRun)
class ReconciliationRunAdmin(ReadOnlyAdmin):
    list_display = (
        "started_at",
        "trigger",
        "dry_run",
        "exit_code",
        "missing_found",
        "added",
        "removed",
        "providers_created",
        "inventories_updated",
        "traits_updated",
        "failures",
        "duration_seconds",
    )
    list_filter = ("trigger", "exit_code", "dry_run")


# Identity is managed here: projects, who holds which role, and tokens (revocable).
@admin.register(models.Project)
class ProjectAdmin(ModelAdmin):
    list_display = ("name", "id", "enabled")
    search_fields = ("name", "id")


@admin.register(models.RoleAssignment)
class RoleAssignmentAdmin(ModelAdmin):
    list_display = ("user", "project", "role")
    list_filter = ("role",)


@admin.register(models.UserAttributes)
class UserAttributesAdmin(ModelAdmin):
    list_display = ("user", "default_project_id", "description")


@admin.register(models.Token)
class TokenAdmin(ModelAdmin):
    list_display = ("user", "project", "issued_at", "expires_at")
    readonly_fields = ("token_hash", "user", "project", "issued_at")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(TabularInline):
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ImagePropertyInline(ReadOnlyInline):
    model = models.ImageProperty


class ImageTagInline(ReadOnlyInline):
    model = models.ImageTag


class ImageMemberInline(ReadOnlyInline):
    model = models.ImageMember


@admin.register(models.Image)
class ImageAdmin(ReadOnlyAdmin):
    list_display = ("id", "name", "status", "visibility", "owner", "size", "created_at")
    list_filter = ("status", "visibility", "disk_format")
    search_fields = ("id", "name", "owner")
    inlines = [ImagePropertyInline, ImageTagInline, ImageMemberInline]


@admin.register(models.ImageProperty)
class ImagePropertyAdmin(ReadOnlyAdmin):
    list_display = ("image", "name", "value")
    search_fields = ("name", "value")


@admin.register(models.ImageTag)
class ImageTagAdmin(ReadOnlyAdmin):
    list_display = ("image", "value")
    search_fields = ("value",)


@admin.register(models.ImageMember)
class ImageMemberAdmin(ReadOnlyAdmin):
    list_display = ("image", "member", "status", "updated_at")
    list_filter = ("status",)
    search_fields = ("member",)


class ImageCacheResultInline(ReadOnlyInline):
    model = models.ImageCacheResult


class ImageCacheHostInline(ReadOnlyInline):
    model = models.ImageCacheHost


@admin.register(models.ImageCacheJob)
class ImageCacheJobAdmin(ReadOnlyAdmin):
    list_display = ("uuid", "aggregate_name", "status", "done", "total", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("uuid", "aggregate_name")
    inlines = [ImageCacheHostInline]


@admin.register(models.ImageCacheHost)
class ImageCacheHostAdmin(ReadOnlyAdmin):
    list_display = ("job", "host", "status", "reason", "finished_at")
    list_filter = ("status",)
    search_fields = ("host",)
    inlines = [ImageCacheResultInline]


@admin.register(models.ImageCacheResult)
class ImageCacheResultAdmin(ReadOnlyAdmin):
    list_display = ("host_item", "image_id", "status", "bytes", "seconds", "finished_at")
    list_filter = ("status",)


@admin.register(models.PinnedImage)
class PinnedImageAdmin(ReadOnlyAdmin):
    list_display = ("aggregate", "image_id", "replaces", "created_by", "created_at")
    search_fields = ("image_id",)


@admin.register(models.CacheCheck)
class CacheCheckAdmin(ReadOnlyAdmin):
    list_display = ("host", "image_id", "state", "reason", "checked_at")
    list_filter = ("state",)
    search_fields = ("host", "image_id")


@admin.register(models.SchedulingDecision)
class SchedulingDecisionAdmin(ReadOnlyAdmin):
    list_display = ("uuid", "outcome", "project_id", "created_at")
    list_filter = ("outcome",)
    search_fields = ("uuid", "project_id")


@admin.register(models.Server)
class ServerAdmin(ReadOnlyAdmin):
    list_display = ("name", "uuid", "vm_state", "task_state", "host", "node", "project_id", "created_at")
    list_filter = ("vm_state", "task_state")
    search_fields = ("name", "uuid", "host", "project_id", "reservation_id")


@admin.register(models.ServerTag)
class ServerTagAdmin(ReadOnlyAdmin):
    list_display = ("tag", "server")
    search_fields = ("tag", "server__uuid")


@admin.register(models.InstanceAction)
class InstanceActionAdmin(ReadOnlyAdmin):
    list_display = ("action", "request_id", "server", "user_id", "project_id", "start_time", "message")
    list_filter = ("action",)
    search_fields = ("request_id", "server__uuid", "user_id", "project_id")


@admin.register(models.InstanceActionEvent)
class InstanceActionEventAdmin(ReadOnlyAdmin):
    list_display = ("event", "action", "result", "host", "start_time", "finish_time")
    list_filter = ("result",)
    search_fields = ("event", "action__request_id", "host")


@admin.register(models.ServerMigration)
class ServerMigrationAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "uuid",
        "server",
        "migration_type",
        "status",
        "source_compute",
        "dest_compute",
        "decision",
        "created_at",
        "updated_at",
    )
    list_filter = ("migration_type", "status")
    search_fields = ("uuid", "server__uuid", "source_compute", "dest_compute", "project_id")
    raw_id_fields = ("server", "decision")


class MaintenanceItemInline(TabularInline):
    model = models.MaintenanceItem
    extra = 0
    can_delete = False
    readonly_fields = (
        "server_uuid",
        "name",
        "source",
        "target",
        "status",
        "migration_uuid",
        "decision_uuid",
        "message",
    )

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(models.MaintenanceJob)
class MaintenanceJobAdmin(ReadOnlyAdmin):
    list_display = ("uuid", "host", "action", "status", "total", "done", "created_at", "finished_at")
    list_filter = ("action", "status")
    search_fields = ("host", "uuid")
    inlines = [MaintenanceItemInline]


@admin.register(models.MaintenanceItem)
class MaintenanceItemAdmin(ReadOnlyAdmin):
    list_display = ("job", "server_uuid", "name", "source", "target", "status")
    list_filter = ("status",)
    search_fields = ("server_uuid", "name", "source", "target")


@admin.register(models.Lease)
class LeaseAdmin(ReadOnlyAdmin):
    list_display = ("name", "holder", "expires_at")
    search_fields = ("name", "holder")


# Quotas change through os-quota-sets and the console (their checks against usage).
@admin.register(models.ProjectQuota)
class ProjectQuotaAdmin(ReadOnlyAdmin):
    list_display = ("project_id", "user_id", "resource", "hard_limit")
    search_fields = ("project_id", "user_id", "resource")


@admin.register(models.QuotaClassLimit)
class QuotaClassLimitAdmin(ReadOnlyAdmin):
    list_display = ("class_name", "resource", "hard_limit")
    search_fields = ("class_name", "resource")


@admin.register(models.ProjectQuotaLock)
class ProjectQuotaLockAdmin(ReadOnlyAdmin):
    list_display = ("project_id",)
    search_fields = ("project_id",)


@admin.register(models.AddressPool)
class AddressPoolAdmin(ReadOnlyAdmin):
    list_display = ("name", "cidr", "gateway", "kind", "scope", "zone", "aggregate")
    list_filter = ("kind", "scope")
    search_fields = ("name", "uuid", "cidr")


@admin.register(models.AddressAllocation)
class AddressAllocationAdmin(ReadOnlyAdmin):
    list_display = ("address", "kind", "pool", "server", "mac_addr", "created_at")
    list_filter = ("kind",)
    search_fields = ("address", "server__uuid", "pool__name")


@admin.register(models.ServerGroup)
class ServerGroupAdmin(ReadOnlyAdmin):
    list_display = ("uuid", "name", "policy", "project_id", "created_at")
    list_filter = ("policy",)
    search_fields = ("uuid", "name", "project_id")


@admin.register(models.ServerGroupMember)
class ServerGroupMemberAdmin(ReadOnlyAdmin):
    list_display = ("group", "server_uuid", "host", "created_at")
    search_fields = ("server_uuid", "host")


@admin.register(models.CapacitySample)
class CapacitySampleAdmin(ReadOnlyAdmin):
    list_display = ("taken_at", "scope", "name", "zone", "hosts")
    list_filter = ("scope",)
    search_fields = ("name", "zone")
