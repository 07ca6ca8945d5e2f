"""Compute hosts: their services (with heartbeats) and compute nodes."""

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


def up_window(now: datetime | None = None) -> tuple[datetime, datetime]:
    """The heartbeats that count as "up" at ``now``: those at most
    SERVICE_DOWN_TIME seconds away from it, either way. As Nova's servicegroup
    DB driver (``abs(now - last_seen) <= service_down_time``), a heartbeat
    slightly in the future (clock skew between hosts) is up; one further
    ahead than SERVICE_DOWN_TIME is not."""
    now = now or timezone.now()
    down_time = timedelta(seconds=settings.SERVICE_DOWN_TIME)
    return now - down_time, now + down_time


def up_q(now: datetime | None = None, via: str = "") -> Q:
    """The condition "the service is up", in SQL: not forced down, and its
    last heartbeat (its creation when it has none) within ``up_window``.
    ``via``: the path to the service from the rows filtered ("service__"
    for compute nodes). ``Service.is_up`` is the same rule for one row in
    memory."""
    window = up_window(now)
    return Q(**{f"{via}forced_down": False}) & (
        Q(**{f"{via}last_seen_up__range": window})
        | Q(**{f"{via}last_seen_up__isnull": True, f"{via}created_at__range": window})
    )


# Disk formats each hypervisor type boots (Nova's drivers report them as
# COMPUTE_IMAGE_TYPE_<FORMAT> traits); other types: raw and qcow2.
IMAGE_TYPES_BY_HYPERVISOR = {
    "QEMU": frozenset({"aki", "ami", "ari", "iso", "qcow2", "raw"}),
    "KVM": frozenset({"aki", "ami", "ari", "iso", "qcow2", "raw"}),
    "ironic": frozenset({"raw", "qcow2"}),
    "VMware vCenter Server": frozenset({"iso", "vmdk"}),
    "Virtuozzo": frozenset({"ploop", "qcow2", "raw"}),
}
DEFAULT_IMAGE_TYPES = frozenset({"raw", "qcow2"})


def image_types_of(hypervisor_type: str) -> frozenset[str]:
    """The disk formats a hypervisor of this type boots."""
    return IMAGE_TYPES_BY_HYPERVISOR.get(hypervisor_type, DEFAULT_IMAGE_TYPES)


class ServiceQuerySet(models.QuerySet["Service"]):
    def up(self, now: datetime | None = None) -> "ServiceQuerySet":
        return self.filter(up_q(now))

    def down(self, now: datetime | None = None) -> "ServiceQuerySet":
        return self.exclude(up_q(now))

    def compute_of(self, host: str) -> "Service | None":
        """The compute service of exactly ``host``, or None (the equality
        check guards databases whose collation ignores case)."""
        service = self.filter(host=host, binary=Service.COMPUTE).first()
        return service if service is not None and service.host == host else None


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

    objects = ServiceQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["host", "binary"], name="uniq_service_host_binary")]

    def __str__(self) -> str:
        return f"{self.binary} on {self.host}"

    @property
    def is_up(self) -> bool:
        """``up_q`` for this row: not forced down, last heartbeat within ``up_window``."""
        if self.forced_down:
            return False
        earliest, latest = up_window()
        return earliest <= (self.last_seen_up or self.created_at) <= latest


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
    # Where the host's agent answers Corral (image pre-caching); "" if it gave none.
    agent_url = models.CharField(max_length=255, blank=True, default="")
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

    def __str__(self) -> str:
        return self.hypervisor_hostname
