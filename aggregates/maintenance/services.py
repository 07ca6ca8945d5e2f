"""Host maintenance as the API and the console ask for it: start (disable
the host's compute service, then a job moves every server off it,
aggregate peers first) and stop (enable it again and, when asked, a job
moves back the servers that left); the plan of either without changing
anything (a dry run, ``planning``); the jobs as they stand; and Nova's
legacy os-hosts update. The job itself runs in ``running``; capacity
headroom is ``headroom``.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from aggregates.errors import Conflict, Invalid, NotFound
from aggregates.hosts import services as host_services
from aggregates.hosts.models import Service
from aggregates.identity.caller import Caller

from . import planning, running
from .models import MaintenanceItem, MaintenanceJob
from .planning import Plan

DEFAULT_REASON = "Host maintenance"


# --- reading -------------------------------------------------------------------


def jobs() -> QuerySet[MaintenanceJob]:
    return MaintenanceJob.objects.all()


def jobs_with_items() -> QuerySet[MaintenanceJob]:
    return MaintenanceJob.objects.prefetch_related("items")


def get_job(job_uuid: str) -> MaintenanceJob:
    try:
        parsed = uuid.UUID(str(job_uuid))
    except ValueError:
        parsed = None
    job = jobs_with_items().filter(uuid=parsed).first() if parsed else None
    if job is None:
        raise NotFound(f"Maintenance job {job_uuid} could not be found.")
    return job


def compute_service(host: str) -> Service:
    """The host's compute service, else 404 (host names match exactly)."""
    service = Service.objects.compute_of(host)
    if service is None:
        raise NotFound(f"Compute host {host} could not be found.", field="host")
    return service


def last_job(host: str) -> MaintenanceJob | None:
    return MaintenanceJob.objects.filter(host=host).order_by("-created_at", "-id").first()


def in_maintenance(host: str) -> bool:
    """A host is in maintenance from a start until the next stop."""
    job = last_job(host)
    return job is not None and job.action == MaintenanceJob.START


# --- start and stop --------------------------------------------------------------


def _check_options(strategy: str) -> None:
    if strategy not in running.KINDS:
        raise Invalid(f"Invalid strategy {strategy!r}: choose live or cold.", field="strategy")


def start_maintenance(
    caller: Caller,
    host: str,
    *,
    reason: str | None = None,
    strategy: str = MaintenanceJob.LIVE,
    prefer_aggregate_peers: bool = True,
    rebalance: bool = False,
    dry_run: bool = False,
) -> MaintenanceJob | Plan:
    """Disable the host's compute service with ``reason`` and create the job
    moving every server off it (started after commit); with ``dry_run``
    only the plan, and nothing changes. 404 for an unknown host, 409 when
    the host is in maintenance already."""
    compute_service(host)
    _check_options(strategy)
    if in_maintenance(host):
        raise Conflict(f"Host {host} is already in maintenance: stop its maintenance first.", field="host")
    if dry_run:
        return planning.drain_plan(host, strategy, prefer_aggregate_peers)
    reason = reason or DEFAULT_REASON
    with transaction.atomic():
        Service.objects.select_for_update().filter(host=host, binary=Service.COMPUTE).first()
        if in_maintenance(host):
            raise Conflict(f"Host {host} is already in maintenance: stop its maintenance first.", field="host")
        host_services.update_service_by_host(
            caller, host, Service.COMPUTE, {"disabled": True, "disabled_reason": reason[:255]}
        )
        job = MaintenanceJob.objects.create(
            host=host,
            action=MaintenanceJob.START,
            reason=reason[:255],
            strategy=strategy,
            prefer_aggregate_peers=prefer_aggregate_peers,
            rebalance=rebalance,
            requested_by=caller.username,
            request_id=caller.request_id,
        )
        servers = planning.servers_on(host)
        MaintenanceItem.objects.bulk_create(
            [MaintenanceItem(job=job, server_uuid=s.uuid, name=s.name, source=host) for s in servers]
        )
        job.total = len(servers)
        job.save(update_fields=["total"])
        running.record(job, "compute.maintenance.start", caller)
        running.dispatch(job.pk)
    return job


def stop_maintenance(
    caller: Caller,
    host: str,
    *,
    reason: str | None = None,
    strategy: str = MaintenanceJob.LIVE,
    prefer_aggregate_peers: bool = True,
    rebalance: bool = False,
    dry_run: bool = False,
) -> MaintenanceJob | Plan:
    """Enable the host's compute service; with ``rebalance`` create the job
    moving back the servers its last start moved away (those still where
    the drain put them). 404 for an unknown host, 409 when the host is not
    in maintenance or its drain is still running."""
    compute_service(host)
    _check_options(strategy)
    _check_stoppable(host)
    if dry_run:
        return planning.return_plan(host, strategy) if rebalance else Plan(host, MaintenanceJob.STOP, strategy, [])
    with transaction.atomic():
        Service.objects.select_for_update().filter(host=host, binary=Service.COMPUTE).first()
        _check_stoppable(host)
        host_services.update_service_by_host(
            caller, host, Service.COMPUTE, {"disabled": False, "disabled_reason": None}
        )
        job = MaintenanceJob.objects.create(
            host=host,
            action=MaintenanceJob.STOP,
            reason=(reason or "")[:255],
            strategy=strategy,
            prefer_aggregate_peers=prefer_aggregate_peers,
            rebalance=rebalance,
            requested_by=caller.username,
            request_id=caller.request_id,
        )
        items = []
        if rebalance:
            for item, server in planning.returning(host):
                if server is not None and server.host == item.target:
                    items.append(
                        MaintenanceItem(
                            job=job,
                            server_uuid=server.uuid,
                            name=server.name,
                            source=server.host or "",
                            requested_host=host,
                        )
                    )
        MaintenanceItem.objects.bulk_create(items)
        job.total = len(items)
        job.save(update_fields=["total"])
        running.record(job, "compute.maintenance.start", caller)
        running.dispatch(job.pk)
    return job


def _check_stoppable(host: str) -> None:
    job = last_job(host)
    if job is None or job.action != MaintenanceJob.START:
        raise Conflict(f"Host {host} is not in maintenance.", field="host")
    if not job.is_finished:
        raise Conflict(
            f"The maintenance of host {host} is still moving its servers (job {job.uuid}, {job.status}): "
            "wait for it to finish.",
            field="host",
        )


def maintain(caller: Caller, host: str, action: str, **options: Any) -> MaintenanceJob | Plan:
    """The one entry of the API: ``action`` start or stop."""
    if action == MaintenanceJob.START:
        return start_maintenance(caller, host, **options)
    if action == MaintenanceJob.STOP:
        return stop_maintenance(caller, host, **options)
    raise Invalid(f"Invalid action {action!r}: choose start or stop.", field="action")


# --- the legacy os-hosts update ------------------------------------------------------


def set_maintenance_mode(caller: Caller, host: str, enable: bool) -> MaintenanceJob | Plan:
    """Nova's PUT /os-hosts/{host} maintenance_mode: start or stop the
    maintenance with the defaults."""
    if enable:
        return start_maintenance(caller, host, reason="Maintenance mode enabled through os-hosts")
    return stop_maintenance(caller, host)


def set_host_enabled(caller: Caller, host: str, enable: bool) -> str:
    """Nova's PUT /os-hosts/{host} status: enable or disable the compute service."""
    compute_service(host)
    changes: host_services.ServiceChanges = {"disabled": not enable}
    if enable:
        changes["disabled_reason"] = None
    host_services.update_service_by_host(caller, host, Service.COMPUTE, changes)
    return "enabled" if enable else "disabled"
