"""Compute hosts: registration (service + compute node) and heartbeats."""
from django.db import IntegrityError, transaction
from django.utils import timezone

from aggregates.models import ComputeNode, Service

from . import events


def register_host(caller, host, node=None, *, vcpus, memory_mb, local_gb, hypervisor_type="QEMU",
                  host_ip=None, hypervisor_version=0, running_vms=None, cpu_info=None):
    """Create or update the ``nova-compute`` service of ``host`` and its compute
    node ``node`` (default: the host name). Re-registering updates the
    resources and counts as a heartbeat; it never duplicates.

    Returns (compute node, created) where created tells whether the node is new.
    """
    node = node or host
    now = timezone.now()
    for attempt in range(2):
        try:
            with transaction.atomic():
                service, _ = Service.objects.select_for_update().get_or_create(
                    host=host, binary=Service.COMPUTE,
                    defaults={"topic": "compute", "created_at": now, "last_seen_up": now},
                )
                service.last_seen_up = now
                service.report_count += 1
                service.updated_at = now
                service.save(update_fields=["last_seen_up", "report_count", "updated_at"])
                fields = {
                    "service": service,
                    "vcpus": vcpus,
                    "memory_mb": memory_mb,
                    "local_gb": local_gb,
                    "hypervisor_type": hypervisor_type,
                    "hypervisor_version": hypervisor_version,
                    "host_ip": host_ip,
                    "updated_at": now,
                }
                if running_vms is not None:
                    fields["running_vms"] = running_vms
                if cpu_info is not None:
                    fields["cpu_info"] = cpu_info
                compute_node, created = ComputeNode.objects.update_or_create(
                    host=host, hypervisor_hostname=node, defaults=fields
                )
                if compute_node.disk_available_least is None:
                    ComputeNode.objects.filter(pk=compute_node.pk).update(disk_available_least=local_gb)
                    compute_node.disk_available_least = local_gb
                events.record(
                    caller,
                    "compute_node.register" if created else "compute_node.update",
                    object_type="compute_node",
                    object_id=compute_node.hypervisor_hostname,
                    object_uuid=compute_node.uuid,
                    payload={"host": host, "hypervisor_hostname": node, "vcpus": vcpus, "memory_mb": memory_mb,
                             "local_gb": local_gb, "hypervisor_type": hypervisor_type, "host_ip": host_ip},
                )
            return compute_node, created
        except IntegrityError:
            # Two registrations of a new host raced; the second one now updates.
            if attempt:
                raise
    raise AssertionError("unreachable")
