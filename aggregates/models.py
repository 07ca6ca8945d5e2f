"""Data of the compute side: identity, aggregates, hosts, flavors and events.

Models hold data and the invariants the database can keep; the rules that
span rows (one AZ per host, delete only when empty, ...) live in
``aggregates.services``.
"""
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


def new_hex_id():
    return uuid.uuid4().hex


# --- Identity --------------------------------------------------------------


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

    def __str__(self):
        return self.name


class RoleAssignment(models.Model):
    ADMIN = "admin"
    READER = "reader"
    MEMBER = "member"
    ROLES = [(ADMIN, "admin"), (READER, "reader"), (MEMBER, "member")]

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="role_assignments")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="role_assignments")
    role = models.CharField(max_length=16, choices=ROLES)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="uniq_role_user_project")]

    def __str__(self):
        return f"{self.user} is {self.role} on {self.project}"


class Token(models.Model):
    """An issued API token. Only the SHA-256 of the token is stored."""

    token_hash = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE)
    issued_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self):
        return f"token of {self.user} until {self.expires_at:%Y-%m-%d %H:%M}"


# --- Aggregates ------------------------------------------------------------


class Aggregate(models.Model):
    name = models.CharField(max_length=255, unique=True)
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.name


class AggregateMetadata(models.Model):
    aggregate = models.ForeignKey(Aggregate, on_delete=models.CASCADE, related_name="metadata_items")
    key = models.CharField(max_length=255)
    value = models.CharField(max_length=255)

    class Meta:
        ordering = ["key"]
        constraints = [models.UniqueConstraint(fields=["aggregate", "key"], name="uniq_aggregate_metadata_key")]
        indexes = [models.Index(fields=["key", "value"])]

    def __str__(self):
        return f"{self.key}={self.value}"


class AggregateHost(models.Model):
    """Membership of a host (by its service host name, matched exactly) in an aggregate."""

    aggregate = models.ForeignKey(Aggregate, on_delete=models.CASCADE, related_name="host_items")
    host = models.CharField(max_length=255, db_index=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["aggregate", "host"], name="uniq_aggregate_host")]

    def __str__(self):
        return f"{self.host} in {self.aggregate_id}"


# --- Hosts: services and compute nodes ------------------------------------


class Service(models.Model):
    COMPUTE = "nova-compute"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    host = models.CharField(max_length=255)
    binary = models.CharField(max_length=255)
    topic = models.CharField(max_length=255, blank=True, default="")
    disabled = models.BooleanField(default=False)
    disabled_reason = models.CharField(max_length=255, null=True, blank=True)
    forced_down = models.BooleanField(default=False)
    last_seen_up = models.DateTimeField(null=True, blank=True)
    report_count = models.IntegerField(default=0)
    version = models.IntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["host", "binary"], name="uniq_service_host_binary")]

    def __str__(self):
        return f"{self.binary} on {self.host}"

    @property
    def is_up(self):
        if self.forced_down:
            return False
        seen = self.last_seen_up or self.created_at
        return abs((timezone.now() - seen).total_seconds()) <= settings.SERVICE_DOWN_TIME


class ComputeNode(models.Model):
    """A hypervisor. Its uuid is its placement resource provider's uuid and
    its hypervisor_hostname the provider's name."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    service = models.ForeignKey(Service, on_delete=models.CASCADE, related_name="compute_nodes")
    host = models.CharField(max_length=255, db_index=True)
    hypervisor_hostname = models.CharField(max_length=255)
    hypervisor_type = models.CharField(max_length=255, default="QEMU")
    hypervisor_version = models.IntegerField(default=0)
    host_ip = models.GenericIPAddressField(null=True, blank=True)
    vcpus = models.IntegerField(default=0)
    memory_mb = models.IntegerField(default=0)
    local_gb = models.IntegerField(default=0)
    vcpus_used = models.IntegerField(default=0)
    memory_mb_used = models.IntegerField(default=0)
    local_gb_used = models.IntegerField(default=0)
    running_vms = models.IntegerField(default=0)
    current_workload = models.IntegerField(default=0)
    disk_available_least = models.IntegerField(null=True, blank=True)
    cpu_info = models.JSONField(default=dict, blank=True)
    uptime = models.CharField(max_length=255, null=True, blank=True)
    # Per-host overrides of the settings of the same names in upper case
    # (CPU_ALLOCATION_RATIO...); None: the setting applies.
    cpu_allocation_ratio = models.FloatField(null=True, blank=True)
    ram_allocation_ratio = models.FloatField(null=True, blank=True)
    disk_allocation_ratio = models.FloatField(null=True, blank=True)
    reserved_host_cpus = models.IntegerField(null=True, blank=True)
    reserved_host_memory_mb = models.IntegerField(null=True, blank=True)
    reserved_host_disk_mb = models.IntegerField(null=True, blank=True)
    # What Corral last wrote to (or verified on) the node's resource provider
    # ({"inventories": ..., "disabled": bool}) and the provider generation
    # placement gave then: while both still hold, the provider is in sync.
    provider_state = models.JSONField(default=dict, blank=True)
    provider_generation = models.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["host", "hypervisor_hostname"], name="uniq_compute_node_host_node")
        ]

    def __str__(self):
        return self.hypervisor_hostname


# --- Flavors ---------------------------------------------------------------


class Flavor(models.Model):
    flavorid = models.CharField(max_length=255, unique=True)
    name = models.CharField(max_length=255, unique=True)
    memory_mb = models.IntegerField()
    vcpus = models.IntegerField()
    root_gb = models.IntegerField(default=0)
    ephemeral_gb = models.IntegerField(default=0)
    swap = models.IntegerField(default=0)
    rxtx_factor = models.FloatField(default=1.0)
    is_public = models.BooleanField(default=True)
    disabled = models.BooleanField(default=False)
    description = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.name


class FlavorExtraSpec(models.Model):
    flavor = models.ForeignKey(Flavor, on_delete=models.CASCADE, related_name="extra_spec_items")
    key = models.CharField(max_length=255)
    value = models.CharField(max_length=255)

    class Meta:
        ordering = ["key"]
        constraints = [models.UniqueConstraint(fields=["flavor", "key"], name="uniq_flavor_extra_spec_key")]

    def __str__(self):
        return f"{self.key}={self.value}"


class FlavorAccess(models.Model):
    flavor = models.ForeignKey(Flavor, on_delete=models.CASCADE, related_name="access_items")
    project_id = models.CharField(max_length=255)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["flavor", "project_id"], name="uniq_flavor_access")]

    def __str__(self):
        return f"{self.project_id} may use {self.flavor_id}"


# --- Audit -----------------------------------------------------------------


class Event(models.Model):
    """A notification-style record of an operation (``aggregate.add_host.end``,
    ``compute.exception``, ...), kept for the console's audit log."""

    INFO = "INFO"
    ERROR = "ERROR"

    event_type = models.CharField(max_length=255, db_index=True)
    priority = models.CharField(max_length=16, default=INFO)
    publisher_id = models.CharField(max_length=255, default="")
    object_type = models.CharField(max_length=64, blank=True, default="", db_index=True)
    object_id = models.CharField(max_length=255, blank=True, default="", db_index=True)
    object_uuid = models.CharField(max_length=64, blank=True, default="")
    payload = models.JSONField(default=dict)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    username = models.CharField(max_length=150, blank=True, default="")
    project_id = models.CharField(max_length=64, blank=True, default="")
    request_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"{self.event_type} {self.object_type} {self.object_id}"


# --- Mirroring aggregates into placement ----------------------------------


class OutboxRow(models.Model):
    """What every outbox row has: a status, attempts with backoff, and times.
    Rows are written in the transaction of the change they mirror and
    applied by a task, the drain or the reconciler."""

    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    STATUSES = [(PENDING, "pending"), (DONE, "done"), (FAILED, "failed")]

    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    attempts = models.IntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    next_attempt_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]


class PlacementMirrorRequest(OutboxRow):
    """Outbox row: placement must learn that ``host`` joined or left an
    aggregate (or that the aggregate was deleted). Written in the same
    transaction as the change; applied by a task, the drain or the
    reconciler. The aggregate is copied (id, name, uuid) because it may be
    deleted before the row is applied."""

    ADD = "add"
    REMOVE = "remove"
    DELETE = "delete"
    ACTIONS = [(ADD, "add host"), (REMOVE, "remove host"), (DELETE, "delete aggregate")]

    aggregate_uuid = models.UUIDField(db_index=True)
    aggregate_id = models.IntegerField(null=True, blank=True)
    aggregate_name = models.CharField(max_length=255)
    host = models.CharField(max_length=255, blank=True, default="")
    # The host's compute nodes when the change was made, [[uuid, hypervisor
    # hostname], ...]: a removal still finds their providers after the host
    # itself was deleted.
    nodes = models.JSONField(default=list, blank=True)
    action = models.CharField(max_length=16, choices=ACTIONS)

    def __str__(self):
        target = f"host {self.host} " if self.host else ""
        return f"{self.action} {target}aggregate {self.aggregate_name} ({self.status})"


class ReconciliationRun(models.Model):
    """One pass of making placement's aggregate associations match Corral's."""

    COMMAND = "command"
    SCHEDULE = "schedule"
    TRIGGERS = [(COMMAND, "command"), (SCHEDULE, "schedule")]

    trigger = models.CharField(max_length=16, choices=TRIGGERS)
    dry_run = models.BooleanField(default=False)
    prune = models.BooleanField(default=False)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    missing_found = models.IntegerField(default=0)
    stale_found = models.IntegerField(default=0)
    unknown_providers = models.IntegerField(default=0)
    hosts_without_provider = models.IntegerField(default=0)
    added = models.IntegerField(default=0)
    removed = models.IntegerField(default=0)
    failures = models.IntegerField(default=0)
    placement_requests = models.IntegerField(default=0)
    providers_created = models.IntegerField(default=0)
    inventories_updated = models.IntegerField(default=0)
    traits_updated = models.IntegerField(default=0)
    exit_code = models.IntegerField(null=True, blank=True)
    messages = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"reconciliation {self.started_at:%Y-%m-%d %H:%M:%S} ({self.trigger})"


class ProviderSyncRequest(OutboxRow):
    """Outbox row: placement must learn the current state of a compute
    node's resource provider (SYNC: exists, inventory, COMPUTE_STATUS_DISABLED
    trait), or that the node is gone (DELETE). Written in the same
    transaction as the registration, the service update or the service
    deletion; applied like PlacementMirrorRequest rows. The node is copied
    because it may be deleted before the row is applied."""

    SYNC = "sync"
    DELETE = "delete"
    ACTIONS = [(SYNC, "sync provider"), (DELETE, "delete provider")]

    node_uuid = models.UUIDField(db_index=True)
    hypervisor_hostname = models.CharField(max_length=255)
    host = models.CharField(max_length=255)
    action = models.CharField(max_length=16, choices=ACTIONS)

    def __str__(self):
        return f"{self.action} provider of {self.hypervisor_hostname} ({self.status})"
