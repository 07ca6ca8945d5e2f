"""Compute hosts: registration (service + compute node) and heartbeats, the
compute services (os-services) and the hypervisors (os-hypervisors)."""

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet, Sum
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Conflict, Invalid, NotFound, ServiceError
from aggregates.host_aggregates import services as aggregate_services
from aggregates.host_aggregates.models import AggregateHost
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.caller import Caller
from aggregates.mirroring import outbox
from aggregates.servers.models import Server, instances_by_host
from aggregates.zones.services import API_BINARIES, with_zones

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from aggregates.zones.services import ZonedService

# Fields of a compute service an update sets (disabled, disabled_reason, forced_down).
ServiceChanges = dict[str, bool | str | None]


class NotSupported(ServiceError):
    """The host cannot answer this request (Nova: the virt driver does not implement it)."""

    status = 501


# --- registration ----------------------------------------------------------


PROVIDER_OVERRIDES = (
    "cpu_allocation_ratio",
    "ram_allocation_ratio",
    "disk_allocation_ratio",
    "reserved_host_cpus",
    "reserved_host_memory_mb",
    "reserved_host_disk_mb",
)


def register_host(
    caller: Caller,
    host: str,
    node: str | None = None,
    *,
    vcpus: int,
    memory_mb: int,
    local_gb: int,
    hypervisor_type: str | None = None,
    host_ip: str | None = None,
    hypervisor_version: int | None = None,
    running_vms: int | None = None,
    cpu_info: dict[str, Any] | None = None,
    uptime: str | None = None,
    agent_url: str | None = None,
    cpu_allocation_ratio: float | None = None,
    ram_allocation_ratio: float | None = None,
    disk_allocation_ratio: float | None = None,
    reserved_host_cpus: int | None = None,
    reserved_host_memory_mb: int | None = None,
    reserved_host_disk_mb: int | None = None,
) -> tuple[ComputeNode, bool]:
    """Create or update the ``nova-compute`` service of ``host`` and its compute
    node ``node`` (default: the host name). Re-registering updates the
    resources and counts as a heartbeat; it never duplicates. Another node
    name on a known host adds a node (ironic-style). Optional values left
    as None keep what the node has (new nodes: QEMU, version 0, no IP).
    ``agent_url`` is where the host's agent answers Corral (pre-caching).
    The allocation ratios and reservations (PROVIDER_OVERRIDES) replace the
    settings of the same names for this node's placement inventories. The
    node's resource provider follows through the outbox once the
    registration commits.

    Returns (compute node, created) where created tells whether the node is new.
    """
    node = node or host
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _register(
                    caller,
                    host,
                    node,
                    {
                        "vcpus": vcpus,
                        "memory_mb": memory_mb,
                        "local_gb": local_gb,
                        "hypervisor_type": hypervisor_type,
                        "hypervisor_version": hypervisor_version,
                        "host_ip": host_ip,
                        "running_vms": running_vms,
                        "cpu_info": cpu_info,
                        "uptime": uptime,
                        "agent_url": agent_url,
                        "cpu_allocation_ratio": cpu_allocation_ratio,
                        "ram_allocation_ratio": ram_allocation_ratio,
                        "disk_allocation_ratio": disk_allocation_ratio,
                        "reserved_host_cpus": reserved_host_cpus,
                        "reserved_host_memory_mb": reserved_host_memory_mb,
                        "reserved_host_disk_mb": reserved_host_disk_mb,
                    },
                )
        except IntegrityError:
            # Two registrations of a new host raced; the second one now updates.
            if attempt:
                raise
    raise AssertionError("unreachable")


REGISTRATION_PAYLOAD_FIELDS = (
    "vcpus",
    "memory_mb",
    "local_gb",
    "hypervisor_type",
    "hypervisor_version",
    "host_ip",
    "running_vms",
)


def _register(caller: Caller, host: str, node: str, reported: dict[str, Any]) -> tuple[ComputeNode, bool]:
    now = timezone.now()
    owner = ComputeNode.objects.filter(hypervisor_hostname=node).exclude(host=host).first()
    if owner is not None:
        raise Conflict(
            f"Compute node {node} is already registered by host {owner.host}. A node belongs to one host: "
            f"delete the compute service of {owner.host} first, or register under another node name.",
            field="node",
        )
    defaults: dict[str, Any] = {"topic": "compute", "created_at": now}
    if not settings.ENABLE_NEW_SERVICES:  # Nova's enable_new_services
        defaults.update(disabled=True, disabled_reason=aggregate_services.NEW_SERVICE_DISABLED_REASON)
    service, service_created = Service.objects.select_for_update().get_or_create(
        host=host,
        binary=Service.COMPUTE,
        defaults=defaults,
    )
    service.last_seen_up = now
    service.report_count += 1
    service.updated_at = now
    service.save(update_fields=["last_seen_up", "report_count", "updated_at"])
    if service_created:
        _record_service(caller, "service.create", service)

    fields = {name: value for name, value in reported.items() if value is not None}
    compute_node, created = ComputeNode.objects.update_or_create(
        host=host,
        hypervisor_hostname=node,
        defaults={**fields, "service": service, "updated_at": now},
    )
    if compute_node.disk_available_least is None:
        compute_node.disk_available_least = compute_node.local_gb
        compute_node.save(update_fields=["disk_available_least"])
    events.record(
        caller,
        "compute_node.register" if created else "compute_node.update",
        object_type="compute_node",
        object_id=compute_node.hypervisor_hostname,
        object_uuid=compute_node.uuid,
        payload={
            "host": host,
            "hypervisor_hostname": node,
            "service_uuid": str(service.uuid),
            **{name: getattr(compute_node, name) for name in REGISTRATION_PAYLOAD_FIELDS},
        },
    )
    outbox.record_provider_sync(compute_node)
    log.info(
        "%s compute node %s (%s) of host %s",
        "Registered" if created else "Updated the registration of",
        node,
        compute_node.uuid,
        host,
    )
    return compute_node, created


def heartbeat(hosts: Iterable[str]) -> int:
    """The agents of ``hosts`` report in: their compute services are seen up
    now. No event is recorded (it happens every few seconds per host).
    Returns how many services were updated."""
    now = timezone.now()
    return Service.objects.filter(host__in=list(hosts), binary=Service.COMPUTE).update(
        last_seen_up=now, updated_at=now, report_count=F("report_count") + 1
    )


# --- compute services -------------------------------------------------------


def list_services(host: str | None = None, binary: str | None = None) -> "list[ZonedService]":
    """Services with their zone, API services left out; ``host`` and
    ``binary`` match exactly."""
    services = Service.objects.exclude(binary__in=API_BINARIES).order_by("id")
    if host:
        services = services.filter(host=host)
    if binary:
        services = services.filter(binary=binary)
    # The equality checks guard databases whose collation ignores case.
    return with_zones(s for s in services if (not host or s.host == host) and (not binary or s.binary == binary))


def _snapshot(service: Service) -> dict[str, Any]:
    """The ServiceStatusPayload of a ``service.*`` notification."""
    return {
        "uuid": str(service.uuid),
        "host": service.host,
        "binary": service.binary,
        "topic": service.topic,
        "report_count": service.report_count,
        "disabled": service.disabled,
        "disabled_reason": service.disabled_reason,
        "availability_zone": with_zones([service])[0].availability_zone,
        "last_seen_up": service.last_seen_up.isoformat() if service.last_seen_up else None,
        "forced_down": service.forced_down,
        "version": service.version,
    }


def _record_service(caller: Caller, event_type: str, service: Service, payload: dict[str, Any] | None = None) -> None:
    events.record(
        caller,
        event_type,
        object_type="service",
        object_id=service.id,
        object_uuid=service.uuid,
        payload=payload or _snapshot(service),
    )


def _only_compute(binary: str) -> None:
    if binary != Service.COMPUTE:
        raise Invalid(
            f"Updating a {binary} service is not supported. Only nova-compute services can be updated.", field="binary"
        )


def _by_id_or_uuid(ref: int | uuid.UUID) -> dict[str, int | uuid.UUID]:
    """Filter arguments for a row named by its id (int) or its uuid (UUID)."""
    return {"uuid": ref} if isinstance(ref, uuid.UUID) else {"id": ref}


def _locked_service(service_ref: int | uuid.UUID, not_found_message: str) -> Service:
    """The service with id (int) or uuid (UUID) ``service_ref``, row-locked."""
    try:
        return Service.objects.select_for_update().get(**_by_id_or_uuid(service_ref))
    except Service.DoesNotExist:
        raise NotFound(not_found_message)


def _save_status(caller: Caller, service: Service, changes: ServiceChanges) -> "ZonedService":
    """Save the changes; enabling or disabling the service has its compute
    nodes' providers gain or lose the COMPUTE_STATUS_DISABLED trait."""
    status_changed = "disabled" in changes and changes["disabled"] != service.disabled
    for name, value in changes.items():
        setattr(service, name, value)
    service.updated_at = timezone.now()
    service.save(update_fields=[*changes, "updated_at"])
    _record_service(caller, "service.update", service)
    if status_changed:
        for compute_node in service.compute_nodes.order_by("id"):
            outbox.record_provider_sync(compute_node)
    return with_zones([service])[0]


def update_service_by_host(caller: Caller, host: str, binary: str, changes: ServiceChanges) -> "ZonedService":
    """The pre-2.53 update: the compute service named by host and binary
    takes ``changes`` (disabled, disabled_reason, forced_down)."""
    _only_compute(binary)
    with transaction.atomic():
        service = Service.objects.select_for_update().filter(host=host, binary=binary).first()
        if service is None or service.host != host:
            raise NotFound(
                f"Could not find binary {binary} on host {host}. GET /os-services lists the registered hosts."
            )
        return _save_status(caller, service, changes)


def update_service(
    caller: Caller,
    service_uuid: uuid.UUID,
    status: str | None = None,
    disabled_reason: str | None = None,
    forced_down: bool | None = None,
) -> "ZonedService":
    """The 2.53 update of a compute service: ``status`` "enabled" or
    "disabled" (disabling keeps ``disabled_reason``, enabling clears it),
    and/or ``forced_down``."""
    with transaction.atomic():
        service = _locked_service(service_uuid, f"Service {service_uuid} could not be found.")
        _only_compute(service.binary)
        changes: ServiceChanges = {}
        if status == "enabled":
            if disabled_reason:
                raise Invalid("Specifying 'disabled_reason' with status 'enabled' is invalid.", field="disabled_reason")
            changes = {"disabled": False, "disabled_reason": None}
        elif status == "disabled":
            changes = {"disabled": True, "disabled_reason": disabled_reason}
        if forced_down is not None:
            changes["forced_down"] = forced_down
        if not changes:
            raise Invalid("No updates were requested. Fields 'status' or 'forced_down' should be specified.")
        return _save_status(caller, service, changes)


def update_services(
    caller: Caller, hosts: Iterable[str], status: str, disabled_reason: str | None = None
) -> list["ZonedService"]:
    """Enable or disable the compute services of several ``hosts`` at once,
    each through ``update_service`` (its rules, its ``service.update`` event):
    all of them or none. The first host refused refuses the whole request,
    and the refusal names it."""
    hosts = list(dict.fromkeys(hosts))
    with events.failures_recorded(caller, "update_services", "service"):
        with transaction.atomic():
            updated = []
            for host in hosts:
                service = Service.objects.compute_of(host)
                if service is None:
                    raise NotFound(f"Host {host}: no compute service of that name is registered. Nothing was changed.")
                try:
                    updated.append(update_service(caller, service.uuid, status=status, disabled_reason=disabled_reason))
                except ServiceError as exc:
                    raise type(exc)(f"Host {host}: {exc.message} Nothing was changed.", field=exc.field)
    return updated


def delete_service(caller: Caller, service_ref: int | uuid.UUID) -> None:
    """Delete the service with id (int) or uuid (UUID) ``service_ref``. A
    compute service must host no instance; its host then leaves every
    aggregate (with the usual aggregate events) and its compute nodes go
    with it, all in one transaction; their resource providers are deleted
    in placement once it commits (failures are logged, as Nova does)."""
    with transaction.atomic():
        service = _locked_service(service_ref, f"Service {service_ref} not found.")
        if service.binary == Service.COMPUTE:
            instances = instances_by_host([service.host]).get(service.host, 0)
            if instances:
                raise Conflict(
                    "Unable to delete compute service that is hosting instances. Migrate or delete the "
                    f"instances first ({instances} instance(s) on host {service.host})."
                )
            memberships = AggregateHost.objects.filter(host=service.host).order_by("aggregate_id")
            for aggregate_id in memberships.values_list("aggregate_id", flat=True):
                aggregate_services.remove_host(caller, aggregate_id, service.host)
            for compute_node in service.compute_nodes.order_by("id"):
                outbox.record_provider_deletion(compute_node)
            service.compute_nodes.all().delete()
        _record_service(caller, "service.delete", service)
        service.delete()


# --- hypervisors (compute nodes) -------------------------------------------


def _nodes() -> QuerySet[ComputeNode]:
    return ComputeNode.objects.select_related("service").order_by("id")


def list_compute_nodes(limit: int | None = None, marker: str | None = None) -> list[ComputeNode]:
    """Compute nodes in id order, after the node ``marker`` (its id or uuid,
    as a string) and at most ``limit`` of them."""
    nodes = _nodes()
    if marker is not None:
        nodes = nodes.filter(id__gt=_marker_node(marker).id)
    return list(nodes[:limit] if limit is not None else nodes)


def _marker_node(marker: str) -> ComputeNode:
    ref: uuid.UUID | int | None
    try:
        ref = uuid.UUID(marker)
    except ValueError:
        ref = int(marker) if marker.isdigit() else None
    node = ComputeNode.objects.filter(**_by_id_or_uuid(ref)).first() if ref is not None else None
    if node is None:
        raise Invalid(f"marker [{marker}] not found", field="marker")
    return node


def search_compute_nodes(pattern: str) -> list[ComputeNode]:
    """Nodes whose hypervisor hostname contains ``pattern`` (any case), or 404."""
    nodes = list(_nodes().filter(hypervisor_hostname__icontains=pattern))
    if not nodes:
        raise NotFound(f"No hypervisor matching '{pattern}' could be found.")
    return nodes


def get_compute_node(node_ref: int | uuid.UUID) -> ComputeNode:
    """The node with id (int) or uuid (UUID) ``node_ref``."""
    node = _nodes().filter(**_by_id_or_uuid(node_ref)).first()
    if node is None:
        raise NotFound(f"Hypervisor with ID '{node_ref}' could not be found.")
    return node


def uptime_of(node: ComputeNode) -> str | None:
    """What the host last reported as its uptime, or None when it is down."""
    return node.uptime if node.service.is_up else None


def compute_node_uptime(node_ref: int | uuid.UUID) -> tuple[ComputeNode, str]:
    """(node, uptime) for the uptime route: 400 when the host is down, 501
    when it never reported an uptime."""
    node = get_compute_node(node_ref)
    if not node.service.is_up:
        raise Invalid(f"Compute service of {node.host} is unavailable at this time.")
    if node.uptime is None:
        raise NotSupported(
            "The requested functionality is not supported: host "
            f"{node.host} has not reported its uptime. Its agent reports it when it registers."
        )
    return node, node.uptime


STATISTICS_FIELDS = (
    "vcpus",
    "memory_mb",
    "local_gb",
    "vcpus_used",
    "memory_mb_used",
    "local_gb_used",
    "current_workload",
    "running_vms",
    "disk_available_least",
)


def compute_node_statistics() -> dict[str, int]:
    """Sums over the nodes of enabled compute services."""
    nodes = ComputeNode.objects.filter(service__binary=Service.COMPUTE, service__disabled=False)
    sums = nodes.aggregate(**{name: Sum(name) for name in STATISTICS_FIELDS})
    totals = {name: sums[name] or 0 for name in STATISTICS_FIELDS}
    return {
        "count": nodes.count(),
        **totals,
        "free_ram_mb": totals["memory_mb"] - totals["memory_mb_used"],
        "free_disk_gb": totals["local_gb"] - totals["local_gb_used"],
    }


# --- Nova's legacy os-hosts list and show (to 2.42) ---------------------------------


def list_legacy_hosts(zone: str | None = None) -> "list[ZonedService]":
    """Nova's os-hosts list: the enabled services with their zone, API
    services left out; ``zone`` (when given) keeps those of that zone."""
    services = [s for s in list_services() if not s.disabled]
    if zone:
        services = [s for s in services if s.availability_zone == zone]
    return services


def service_topic(service: Service) -> str:
    """A service's topic; Nova derives it from the binary when none is stored."""
    return service.topic or service.binary.rpartition("nova-")[2]


@dataclass
class HostUsage:
    """One row of Nova's os-hosts show: a project's (or a summary's) usage."""

    project: str
    cpu: int
    memory_mb: int
    disk_gb: int


@dataclass
class HostResources:
    node: ComputeNode  # the host's first node, as Nova's old-compat lookup takes it
    used_max: HostUsage  # the sums of the flavors of the host's servers
    by_project: list[HostUsage]  # the same per project, in the order the servers come


def host_resources(host: str) -> HostResources:
    """The resources of compute host ``host`` for Nova's os-hosts show (404
    for a host with no compute node): its first node, and the flavors of its
    servers summed, in all and per project."""
    node = ComputeNode.objects.filter(host=host).order_by("id").first()
    if node is None or node.host != host:
        raise NotFound(f"Compute host {host} could not be found.", field="host")
    used_max = HostUsage("(used_max)", 0, 0, 0)
    projects: dict[str, HostUsage] = {}
    servers = Server.objects.filter(host=host, deleted_at__isnull=True).order_by("id")
    for project_id, flavor in servers.values_list("project_id", "flavor"):
        row = projects.setdefault(project_id, HostUsage(project_id, 0, 0, 0))
        cpu, ram = int(flavor.get("vcpus") or 0), int(flavor.get("ram") or 0)
        disk = int(flavor.get("disk") or 0) + int(flavor.get("ephemeral") or 0)
        for usage in (used_max, row):
            usage.cpu += cpu
            usage.memory_mb += ram
            usage.disk_gb += disk
    return HostResources(node, used_max, list(projects.values()))
