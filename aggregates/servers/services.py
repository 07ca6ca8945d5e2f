"""Servers as the API and the console ask for them: list, show, create
(rows in BUILD, then scheduled and claimed in placement after commit:
``build``), delete (the claim released after commit: ``deletion``).

Rules kept here:

* A member sees and acts on its project's servers only; an admin on all of
  them (lists need ``all_tenants``). A deleted server is 404 everywhere.
* A create writes its rows, min_count..max_count of them, and its audit
  event in one transaction; the build (``build.build_servers``) runs after
  commit, in a Celery worker, or in this process when there is no broker.
* Placement (the scheduler's claim, the release of a deleted server's
  allocations) is never called with a transaction open.
"""

import ipaddress
import logging
import operator
import random
import re
import string
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import reduce
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet
from django.utils import timezone

from aggregates import after_commit
from aggregates.addressing import services as addressing
from aggregates.audit import services as events
from aggregates.errors import Conflict, Forbidden, Invalid, NotFound
from aggregates.flavors import services as flavor_services
from aggregates.flavors.models import Flavor
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity import services as identity
from aggregates.identity.caller import Caller
from aggregates.quotas import services as quotas
from aggregates.scheduling import boot_request
from aggregates.server_groups import services as server_groups
from aggregates.servers import actions, build, deletion, notifications
from aggregates.servers.models import (
    InstanceAction,
    InstanceActionEvent,
    Server,
    ServerTag,
    sanitized_hostname,
    status_q,
)
from aggregates.value_schemas import MAX_INT, to_bool

log = logging.getLogger(__name__)

# The most servers one request may create (Corral's own bound on one
# request, whatever the project's instances quota allows: aggregates/quotas).
MAX_SERVERS_PER_REQUEST = 100
MULTI_INSTANCE_NAME = "{name}-{count}"
FORCED_HOST_POLICY = "os_compute_api:servers:create:forced_host"
REQUESTED_DESTINATION_POLICY = "compute:servers:create:requested_destination"
ALL_TENANTS_POLICY = "os_compute_api:servers:detail:get_all_tenants"
ALL_TENANTS_INDEX_POLICY = "os_compute_api:servers:index:get_all_tenants"


# --- reading ---------------------------------------------------------------


def sees_all_servers(caller: Caller) -> bool:
    """Admins act on every project's servers (Nova's admin-or-owner default)."""
    return caller.is_admin


def _visible(caller: Caller) -> QuerySet[Server]:
    servers = Server.objects.select_related("decision").prefetch_related("tag_rows", addressing.ADDRESS_PREFETCH)
    if not sees_all_servers(caller):
        servers = servers.filter(project_id=caller.project_id)
    return servers


def _not_found(server_uuid: object) -> NotFound:
    return NotFound(f"Instance {server_uuid} could not be found.")


def get_server(caller: Caller, server_uuid: str, include_deleted: bool = False) -> Server:
    """A server the caller may see and that is not deleted (unless
    ``include_deleted``), else 404."""
    parsed = boot_request.parse_uuid(server_uuid)
    server = _visible(caller).filter(uuid=parsed).first() if parsed else None
    deleted = server is not None and (server.deleted_at is not None or server.vm_state == Server.DELETED)
    if server is None or (deleted and not include_deleted):
        raise _not_found(server_uuid)
    return server


def locked_server(caller: Caller, server_uuid: str) -> Server:
    """``get_server``, the row locked for update (inside a transaction)."""
    server = get_server(caller, server_uuid)
    return Server.objects.select_for_update().get(pk=server.pk)


def invalid_state(action: str, server_ref: str, attr: str, state: object) -> Conflict:
    """Nova's conflict for an instance in the wrong state for ``action``."""
    if state is None:
        return Conflict(f"Instance {server_ref} is in an invalid state for '{action}'")
    return Conflict(f"Cannot '{action}' instance {server_ref} while it is in {attr} {state}")


def check_unlocked(caller: Caller, server: Server) -> None:
    """Nova's check_instance_lock: a locked server refuses a non-admin
    (its owner too) every state-changing action; an admin overrides."""
    if server.locked and not caller.is_admin:
        raise Conflict(f"Instance {server.uuid} is locked")


# Every status Nova knows: a filter on another is a 400; one no state of
# Corral's gives (models.status_q is None) selects nothing.
KNOWN_STATUSES = frozenset(
    {
        "ACTIVE",
        "BUILD",
        "REBOOT",
        "HARD_REBOOT",
        "PASSWORD",
        "REBUILD",
        "MIGRATING",
        "RESIZE",
        "VERIFY_RESIZE",
        "REVERT_RESIZE",
        "SHUTOFF",
        "PAUSED",
        "SUSPENDED",
        "RESCUE",
        "ERROR",
        "DELETED",
        "SOFT_DELETED",
        "SHELVED",
        "SHELVED_OFFLOADED",
    }
)


@dataclass
class ServerQuery:
    """The list filters, as Nova applies them after its policy stripped
    those the caller may not use."""

    all_tenants: bool = False
    project_id: str | None = None
    name: str | None = None
    statuses: list[str] = field(default_factory=list)
    host: str | None = None
    node: str | None = None
    availability_zone: str | None = None
    reservation_id: str | None = None
    image: str | None = None
    flavor: str | None = None
    uuid: str | None = None
    deleted: bool | None = None
    locked: bool | None = None
    changes_since: datetime | None = None
    changes_before: datetime | None = None
    limit: int | None = None
    marker: str | None = None
    # 2.26's tag filters: every one of tags, any of tags_any, not every one
    # of not_tags, none of not_tags_any.
    tags: list[str] = field(default_factory=list)
    tags_any: list[str] = field(default_factory=list)
    not_tags: list[str] = field(default_factory=list)
    not_tags_any: list[str] = field(default_factory=list)


def _tagged(tags: Sequence[str]) -> Exists:
    return Exists(ServerTag.objects.filter(server=OuterRef("pk"), tag__in=list(tags)))


def _tag_filters(servers: QuerySet[Server], query: ServerQuery) -> QuerySet[Server]:
    for tag in query.tags:
        servers = servers.filter(_tagged([tag]))
    if query.tags_any:
        servers = servers.filter(_tagged(query.tags_any))
    if query.not_tags:
        servers = servers.exclude(reduce(operator.and_, [Q(_tagged([tag])) for tag in query.not_tags]))
    if query.not_tags_any:
        servers = servers.exclude(_tagged(query.not_tags_any))
    return servers


def _regex(value: str, name: str) -> str:
    try:
        re.compile(value)
    except re.error:
        raise Invalid(f"Invalid input for query parameters {name}. Value: {value}. '{value}' is not a 'regex'")
    return value


def list_servers(caller: Caller, query: ServerQuery, max_limit: int = 1000, detail: bool = True) -> list[Server]:
    """One page of servers, newest first (Nova's created_at, id descending);
    every project's with ``all_tenants`` when the policy allows (Nova's
    rule of the list asked: ``detail`` or index)."""
    all_tenants_policy = ALL_TENANTS_POLICY if detail else ALL_TENANTS_INDEX_POLICY
    if query.all_tenants and not caller.may(all_tenants_policy):
        raise Forbidden.by_policy(all_tenants_policy)
    servers = Server.objects.select_related("decision").prefetch_related("tag_rows", addressing.ADDRESS_PREFETCH)
    if query.all_tenants:
        if query.project_id:
            servers = servers.filter(project_id=query.project_id)
    else:
        servers = servers.filter(project_id=caller.project_id)
    conditions = []
    for status in query.statuses:
        if status.upper() not in KNOWN_STATUSES:
            raise Invalid("Invalid status value", field="status")
        condition = status_q(status)
        if condition is not None:
            conditions.append(condition)
    if query.statuses and not conditions:
        return []
    want_deleted = "DELETED" in {status.upper() for status in query.statuses} or bool(query.deleted)
    if want_deleted and not sees_all_servers(caller):
        raise Forbidden("Only administrators may list deleted instances")
    if conditions:
        servers = servers.filter(reduce(operator.or_, conditions))
    if query.deleted:
        servers = servers.filter(vm_state=Server.DELETED)
    elif not want_deleted and query.changes_since is None and query.changes_before is None:
        servers = servers.exclude(vm_state=Server.DELETED)
    if query.name is not None:
        servers = servers.filter(name__regex=_regex(query.name, "name"))
    if query.host is not None:
        servers = servers.filter(host=query.host)
    if query.node is not None:
        servers = servers.filter(node__regex=_regex(query.node, "node"))
    if query.availability_zone is not None:
        servers = servers.filter(availability_zone__regex=_regex(query.availability_zone, "availability_zone"))
    if query.reservation_id is not None:
        servers = servers.filter(reservation_id=query.reservation_id)
    if query.locked is not None:
        servers = servers.filter(locked=query.locked)
    if query.image is not None:
        servers = servers.filter(image_id=query.image.rstrip("/").rsplit("/", 1)[-1])
    if query.flavor is not None:
        servers = servers.filter(flavorid=query.flavor.rstrip("/").rsplit("/", 1)[-1])
    if query.uuid is not None:
        parsed = boot_request.parse_uuid(query.uuid)
        servers = servers.filter(uuid=parsed) if parsed else servers.none()
    servers = _tag_filters(servers, query)
    if query.changes_since is not None:
        servers = servers.filter(updated_at__gte=query.changes_since)
    if query.changes_before is not None:
        servers = servers.filter(updated_at__lte=query.changes_before)
    servers = servers.order_by("-created_at", "-id")
    if query.marker:
        parsed = boot_request.parse_uuid(query.marker)
        marker = servers.filter(uuid=parsed).first() if parsed else None
        if marker is None:
            raise Invalid(f"marker [{query.marker}] not found", field="marker")
        servers = servers.filter(
            Q(created_at__lt=marker.created_at) | Q(created_at=marker.created_at, id__lt=marker.id)
        )
    limit = min(query.limit if query.limit is not None else max_limit, max_limit)
    return list(servers[:limit])


def host_statuses(servers: Iterable[Server]) -> dict[str, str]:
    """host -> Nova's host_status (UP, DOWN, MAINTENANCE, UNKNOWN) of the
    hosts of ``servers``; a server without a host has status ""."""
    hosts = {server.host for server in servers if server.host}
    statuses = {}
    for service in Service.objects.filter(host__in=hosts, binary=Service.COMPUTE):
        if service.forced_down:
            statuses[service.host] = "DOWN"
        elif service.disabled:
            statuses[service.host] = "MAINTENANCE"
        else:
            statuses[service.host] = "UP" if service.is_up else "UNKNOWN"
    return statuses


def servers_on_hosts(hosts: Iterable[str]) -> dict[str, list[Server]]:
    """host -> its servers that are not deleted, oldest first."""
    found: dict[str, list[Server]] = {}
    rows = Server.objects.filter(host__in=list(hosts)).exclude(vm_state=Server.DELETED).order_by("created_at", "id")
    for server in rows:
        found.setdefault(server.host or "", []).append(server)
    return found


# --- instance actions ----------------------------------------------------------


@dataclass
class ActionQuery:
    """GET /servers/{id}/os-instance-actions: deleted servers from 2.21;
    paging and the time filters (on updated_at) from 2.58."""

    include_deleted: bool = False
    limit: int | None = None
    marker: str | None = None
    changes_since: datetime | None = None
    changes_before: datetime | None = None


def list_actions(caller: Caller, server_uuid: str, query: ActionQuery, max_limit: int = 1000) -> list[InstanceAction]:
    """A server's actions, newest first (Nova's created_at, id descending)."""
    server = get_server(caller, server_uuid, include_deleted=query.include_deleted)
    rows = InstanceAction.objects.filter(server=server).select_related("server").order_by("-created_at", "-id")
    if query.changes_since is not None:
        rows = rows.filter(updated_at__gte=query.changes_since)
    if query.changes_before is not None:
        rows = rows.filter(updated_at__lte=query.changes_before)
    if query.limit == 0:
        return []
    if query.marker is not None:
        marker = InstanceAction.objects.filter(server=server, request_id=query.marker).order_by("-created_at", "-id")
        found = marker.first()
        if found is None:
            raise Invalid(f"Marker {query.marker} could not be found.", field="marker")
        rows = rows.filter(Q(created_at__lt=found.created_at) | Q(created_at=found.created_at, id__lt=found.id))
    limit = min(query.limit if query.limit is not None else max_limit, max_limit)
    return list(rows[:limit])


def get_action(caller: Caller, server_uuid: str, request_id: str, include_deleted: bool = False) -> InstanceAction:
    """The server's (newest) action of request ``request_id``, its events prefetched (newest first)."""
    server = get_server(caller, server_uuid, include_deleted=include_deleted)
    found = (
        InstanceAction.objects.filter(server=server, request_id=request_id)
        .select_related("server")
        .prefetch_related(Prefetch("events", queryset=InstanceActionEvent.objects.order_by("-created_at", "-id")))
        .order_by("-created_at", "-id")
        .first()
    )
    if found is None:
        raise NotFound(f"Action {request_id} not found", field="request_id")
    return found


# --- create ----------------------------------------------------------------


def _check_block_devices(image_ref: str, block_devices: Sequence[Mapping[str, Any]]) -> None:
    """Corral boots from images only: the one block device mapping it takes
    is the image-to-local-disk entry the CLI sends with every image boot."""
    volume_boot = Invalid(
        "Block Device Mapping is Invalid: Corral boots servers from images only: booting from a volume, "
        "a snapshot or a blank device (block_device_mapping_v2 with source_type volume, snapshot or blank, "
        "or destination_type volume) is not supported. Give imageRef and leave block_device_mapping_v2 out, "
        "or give one entry with source_type image, destination_type local and boot_index 0.",
        field="block_device_mapping_v2",
    )
    for item in block_devices:
        if item.get("source_type", "image") != "image" or item.get("destination_type", "local") != "local":
            raise volume_boot
        if "volume_id" in item or "snapshot_id" in item:
            raise volume_boot
        item_image = item.get("uuid") or item.get("image_id")
        if (
            item_image
            and image_ref
            and str(boot_request.parse_uuid(item_image)) != str(boot_request.parse_uuid(image_ref))
        ):
            raise Invalid(
                "Block Device Mapping is Invalid: the image of block_device_mapping_v2 differs from imageRef.",
                field="block_device_mapping_v2",
            )
    if not image_ref:
        if block_devices:
            raise volume_boot
        raise Invalid("Missing imageRef attribute", field="imageRef")


def _count(value: int | str | None, default: int, field_name: str) -> int:
    if value is None:
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise Invalid(f"Invalid input for field/attribute {field_name}. Value: {value}.", field=field_name)
    if number < 1:
        raise Invalid(
            f"Invalid input for field/attribute {field_name}. Value: {value}. {number} is less than the minimum of 1",
            field=field_name,
        )
    if number > MAX_INT:
        raise Invalid(
            f"Invalid input for field/attribute {field_name}. Value: {value}. "
            f"{number} is greater than the maximum of {MAX_INT}",
            field=field_name,
        )
    return number


def _access_ip(value: str | None, version: int, field_name: str) -> str:
    """An access address as Nova stores it (its IP columns): the canonical
    text of an IPv4 or IPv6 address, "" when none was given."""
    if value is None:
        return ""
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        address = None
    if address is None or address.version != version:
        raise Invalid(
            f"Invalid input for field/attribute {field_name}. Value: {value}. '{value}' is not a 'ipv{version}'",
            field=field_name,
        )
    return str(address)


def _config_drive(value: bool | str | None) -> str:
    """Nova's config_drive column: "True" when a config drive was asked for, else ""."""
    if value is None or value == "":
        return ""
    return "True" if to_bool(value) else ""


def _reservation_id() -> str:
    return "r-" + "".join(random.choices(string.ascii_lowercase + string.digits, k=8))


def flavor_snapshot(flavor: Flavor) -> dict[str, Any]:
    return {
        "vcpus": flavor.vcpus,
        "ram": flavor.memory_mb,
        "disk": flavor.root_gb,
        "ephemeral": flavor.ephemeral_gb,
        "swap": flavor.swap,
        "original_name": flavor.name,
        "extra_specs": flavor_services.extra_specs_of(flavor),
    }


@dataclass
class CreatedServers:
    servers: list[Server]
    reservation_id: str


def create_servers(
    caller: Caller,
    *,
    name: str,
    flavor_ref: str | int,
    image_ref: str = "",
    availability_zone: str | None = None,
    min_count: int | str | None = None,
    max_count: int | str | None = None,
    metadata: Mapping[str, str] | None = None,
    description: str | None = None,
    block_devices: Sequence[Mapping[str, Any]] = (),
    networks: str | list[dict[str, Any]] | None = None,
    scheduler_hints: Mapping[str, Any] | None = None,
    requested_host: str | None = None,
    requested_node: str | None = None,
    trusted_image_certificates: list[str] | None = None,
    tags: Sequence[str] = (),
    key_name: str | None = None,
    access_ip_v4: str | None = None,
    access_ip_v6: str | None = None,
    config_drive: bool | str | None = None,
    hostname: str | None = None,
) -> CreatedServers:
    """Nova's POST /servers after its schema: checks in Nova's order, then
    min_count..max_count rows in BUILD and the audit event in one
    transaction; the build is dispatched after commit."""
    with events.failures_recorded(caller, "create_servers", "server"):
        minimum = _count(min_count, 1, "min_count")
        maximum = _count(max_count, minimum, "max_count")
        if minimum > maximum:
            raise Invalid("min_count must be <= max_count", field="min_count")
        destination = boot_request.parse_availability_zone(availability_zone)
        if (destination.forced_host or destination.forced_node) and not caller.may(FORCED_HOST_POLICY):
            raise Forbidden.by_policy(FORCED_HOST_POLICY)
        zone = boot_request.zone_for_forced_host(destination.availability_zone, destination.forced_host)
        forced_host, forced_node = destination.forced_host, destination.forced_node
        if requested_host or requested_node:
            if not caller.may(REQUESTED_DESTINATION_POLICY):
                raise Forbidden.by_policy(REQUESTED_DESTINATION_POLICY)
            if forced_host or forced_node:
                raise Invalid(
                    "One mechanism with host and/or hypervisor_hostname and another mechanism with "
                    "zone:host:node are mutually exclusive."
                )
            nodes = ComputeNode.objects.all()
            if requested_host:
                nodes = nodes.filter(host=requested_host)
            if requested_node:
                nodes = nodes.filter(hypervisor_hostname=requested_node)
            if not nodes.exists():
                raise Invalid(f"Compute host {requested_host or requested_node} could not be found.", field="host")
            forced_host, forced_node = requested_host, requested_node
        _check_block_devices(image_ref, block_devices)
        addressing.check_networks(networks)
        flavor = boot_request.flavor_for_boot(caller, str(flavor_ref))
        image = boot_request.image_for_boot(caller, image_ref, flavor)
        if flavor.root_gb == 0 and not caller.is_admin:
            raise Forbidden("Only volume-backed servers are allowed for flavors with zero disk.", field="flavorRef")
        boot_request.check_zone(zone, forced_host)
        if key_name is not None:
            raise Invalid("Invalid key_name provided.", field="key_name")  # Corral keeps no key pairs
        access_ips = _access_ip(access_ip_v4, 4, "accessIPv4"), _access_ip(access_ip_v6, 6, "accessIPv6")
        metadata = dict(metadata or {})
        quotas.check_metadata_items(caller.project_id, len(metadata))
        if minimum > MAX_SERVERS_PER_REQUEST:
            raise Forbidden(
                f"Quota exceeded for instances: Requested {minimum}, but at most {MAX_SERVERS_PER_REQUEST} "
                "servers can be created by one request."
            )
        maximum = min(maximum, MAX_SERVERS_PER_REQUEST)
        if hostname and maximum > 1:
            raise Invalid("Unable to allocate a single hostname to multiple instances", field="hostname")
        hints: dict[str, Any] = dict(scheduler_hints or {})
        group_id = server_groups.group_hint(hints.get("group"))
        reservation_id = _reservation_id()
        user_id = caller.user_id or (identity.user_id_of(caller.user) if caller.user is not None else caller.username)
        now = timezone.now()
        build_request = {
            "availability_zone": zone,
            "forced_host": forced_host,
            "forced_node": forced_node,
            "min_count": minimum,
            "max_count": maximum,
            "networks": networks,
            "trusted_image_certificates": trusted_image_certificates,
        }
        with transaction.atomic():
            group, members = server_groups.lock_for_boot(caller, group_id) if group_id is not None else (None, None)
            maximum = quotas.check_boot(
                caller.project_id, user_id, flavor.vcpus, flavor.memory_mb, minimum, maximum, members
            )
            servers = []
            for index in range(maximum):
                server_name = MULTI_INSTANCE_NAME.format(name=name, count=index + 1) if maximum > 1 else name
                server_uuid = uuid.uuid4()
                server = Server.objects.create(
                    uuid=server_uuid,
                    name=server_name,
                    description=description,
                    hostname=hostname or sanitized_hostname(server_name, server_uuid),
                    project_id=caller.project_id,
                    user_id=user_id,
                    flavorid=flavor.flavorid,
                    flavor=flavor_snapshot(flavor),
                    image_id=str(image.id),
                    pinned_availability_zone=zone,
                    vm_state=Server.BUILDING,
                    task_state=Server.SCHEDULING,
                    power_state=Server.POWER_NOSTATE,
                    metadata=metadata,
                    access_ip_v4=access_ips[0],
                    access_ip_v6=access_ips[1],
                    config_drive=_config_drive(config_drive),
                    scheduler_hints=hints,
                    build_request=build_request,
                    reservation_id=reservation_id,
                    launch_index=index,
                    created_at=now,
                    updated_at=now,
                )
                ServerTag.objects.bulk_create(ServerTag(server=server, tag=tag) for tag in sorted(set(tags)))
                actions.start(caller, server, actions.CREATE, now)
                notifications.record(caller, "instance.create.start", server, request_id=caller.request_id)
                servers.append(server)
            if group is not None:
                server_groups.add_members(group, [str(server.uuid) for server in servers])
            dispatch_build(reservation_id)
    log.info(
        "Accepted the boot of %s (reservation %s, flavor %s, image %s)",
        ", ".join(str(server.uuid) for server in servers),
        reservation_id,
        flavor.flavorid,
        image.id,
    )
    return CreatedServers(servers, reservation_id)


def description_of(server: Server) -> str | None:
    return server.description


def dispatch_build(reservation_id: str) -> None:
    """Build once the transaction commits: in this process when there is no
    broker, else in a worker. If the broker cannot be reached,
    resume_builds takes the build up a minute later."""
    after_commit.dispatch(
        lambda: _build_here(reservation_id),
        send=after_commit.task(build.BUILD_TASK, reservation_id),
        outbound=f"build of reservation {reservation_id}",
        failure=f"could not build reservation {reservation_id}; corral.servers.resume_builds will",
    )


def _build_here(reservation_id: str) -> None:
    build.build_servers(reservation_id)
    CATCH_UP.run_if_due()


def _catch_up() -> None:
    build.resume_builds()
    deletion.finish_deletes()
    deletion.reclaim_deleted()


# Without a broker there is no beat: builds and deletes done in the request
# also catch up with those left behind (and reclaim soft-deleted servers),
# at most once a minute.
CATCH_UP = after_commit.CatchUp(
    "catching up with stale builds and deletes", _catch_up, every=build.BUILD_STALE_AFTER.total_seconds()
)


# --- update --------------------------------------------------------------------

# What PUT /servers/{id} may change (Server's fields), and the pinned zone.
UPDATABLE = ("name", "description", "hostname", "access_ip_v4", "access_ip_v6", "pinned_availability_zone")
UNPIN_FIRST = (
    "Cannot change pinned availability zone directly. Unpin first by setting pinned_availability_zone to null."
)


def _pinned_zone(server: Server, requested: str | None) -> str | None:
    """Nova's 2.104 rules: null unpins; a pinned server keeps its zone; an
    unpinned one is pinned to the zone it is in, and no other."""
    if requested is None:
        return None
    current = server.pinned_availability_zone
    if current is not None:
        if requested != current:
            raise Conflict(UNPIN_FIRST, field="pinned_availability_zone")
        return current
    if requested != server.availability_zone:
        raise Conflict(
            f"Server can only be pinned to its current availability zone '{server.availability_zone}', "
            f"but '{requested}' was requested.",
            field="pinned_availability_zone",
        )
    return requested


def update_server(caller: Caller, server_uuid: str, changes: Mapping[str, Any]) -> Server:
    """PUT /servers/{id}: ``changes`` keyed by UPDATABLE (only those given
    change; a null description removes it). Nova checks no state here."""
    unknown = set(changes) - set(UPDATABLE)
    if unknown:
        raise Invalid(f"Cannot update {', '.join(sorted(unknown))}.")
    with events.failures_recorded(caller, "update_server", "server", server_uuid):
        with transaction.atomic():
            server = locked_server(caller, server_uuid)
            values = dict(changes)
            if "access_ip_v4" in values:
                values["access_ip_v4"] = _access_ip(values["access_ip_v4"], 4, "accessIPv4")
            if "access_ip_v6" in values:
                values["access_ip_v6"] = _access_ip(values["access_ip_v6"], 6, "accessIPv6")
            if "pinned_availability_zone" in values:
                values["pinned_availability_zone"] = _pinned_zone(server, values["pinned_availability_zone"])
            for field_name, value in values.items():
                setattr(server, field_name, value)
            server.updated_at = timezone.now()
            server.save(update_fields=[*values, "updated_at"])
            notifications.record(caller, "instance.update", server, request_id=caller.request_id)
    return get_server(caller, server_uuid)


# --- admin actions -----------------------------------------------------------------

RESET_STATE_POLICY = "os_compute_api:os-admin-actions:reset_state"
RESETTABLE_STATES = (Server.ACTIVE, Server.ERROR)


def reset_state(caller: Caller, server_uuid: str, state: str) -> Server:
    """os-resetState (admins): the vm_state becomes ``state`` and the task
    clears; recorded as a resetState action."""
    with events.failures_recorded(caller, "reset_server_state", "server", server_uuid):
        with transaction.atomic():
            server = locked_server(caller, server_uuid)
            if not caller.may(RESET_STATE_POLICY):
                raise Forbidden.by_policy(RESET_STATE_POLICY)
            if state not in RESETTABLE_STATES:
                raise Invalid(f"Invalid state {state}: one of {', '.join(RESETTABLE_STATES)}.", field="state")
            action = actions.start(caller, server, actions.RESET_STATE)
            server.vm_state, server.task_state = state, None
            server.updated_at = timezone.now()
            server.save(update_fields=["vm_state", "task_state", "updated_at"])
            actions.finish(action)
            notifications.record(caller, "instance.update", server, request_id=caller.request_id)
    return server


def restore_server(caller: Caller, server_uuid: str) -> None:
    """restore: a SOFT_DELETED server (RECLAIM_INSTANCE_INTERVAL > 0) is
    ACTIVE again; its allocation was kept. Any other state is Nova's 409."""
    with events.failures_recorded(caller, "restore_server", "server", server_uuid):
        with transaction.atomic():
            server = locked_server(caller, server_uuid)
            check_unlocked(caller, server)
            if server.vm_state != Server.SOFT_DELETED:
                raise invalid_state("restore", server_uuid, "vm_state", server.vm_state)
            now = timezone.now()
            action = actions.start(caller, server, actions.RESTORE, now)
            actions.event_start(action, actions.RESTORE_EVENT, host=server.host)
            server.vm_state, server.task_state, server.power_state = Server.ACTIVE, None, Server.POWER_RUNNING
            server.terminated_at, server.updated_at = None, now
            server.save(update_fields=["vm_state", "task_state", "power_state", "terminated_at", "updated_at"])
            actions.event_finish(action, actions.RESTORE_EVENT, host=server.host)
            notifications.record(caller, "instance.restore.end", server, request_id=caller.request_id)


# --- locks (Nova's os-lock-server) ---------------------------------------------------------

LOCK_POLICY = "os_compute_api:os-lock-server:lock"
UNLOCK_POLICY = "os_compute_api:os-lock-server:unlock"
UNLOCK_OVERRIDE_POLICY = "os_compute_api:os-lock-server:unlock:unlock_override"
LOCK_EVENT = "api_lock"
UNLOCK_EVENT = "api_unlock"


def _authorize(caller: Caller, rule: str, server: Server) -> None:
    if not caller.may(rule, {"project_id": server.project_id, "user_id": server.user_id}):
        raise Forbidden.by_policy(rule)


def lock_server(caller: Caller, server_uuid: str, reason: str | None = None) -> Server:
    """lock: locked by "owner" (the server's project) or "admin" (another
    project's admin), with the 2.73 reason; a lock the owner asks for again
    changes nothing (Nova records no action then). Any state."""
    with events.failures_recorded(caller, "lock_server", "server", server_uuid):
        with transaction.atomic():
            server = locked_server(caller, server_uuid)
            _authorize(caller, LOCK_POLICY, server)
            is_owner = server.project_id == caller.project_id
            if server.locked and is_owner:
                return server
            action = actions.start(caller, server, actions.LOCK)
            actions.event_start(action, LOCK_EVENT)
            server.locked = True
            server.locked_by = Server.LOCKED_BY_OWNER if is_owner else Server.LOCKED_BY_ADMIN
            if reason:
                server.locked_reason = reason
            server.updated_at = timezone.now()
            server.save(update_fields=["locked", "locked_by", "locked_reason", "updated_at"])
            actions.event_finish(action, LOCK_EVENT)
            actions.finish(action)
            notifications.record(caller, "instance.lock", server, request_id=caller.request_id)
    return server


def unlock_server(caller: Caller, server_uuid: str) -> Server:
    """unlock: a lock taken by the other side (an admin's, for the owner;
    the owner's, for another project's admin) needs unlock_override."""
    with events.failures_recorded(caller, "unlock_server", "server", server_uuid):
        with transaction.atomic():
            server = locked_server(caller, server_uuid)
            _authorize(caller, UNLOCK_POLICY, server)
            expected = Server.LOCKED_BY_OWNER if server.project_id == caller.project_id else Server.LOCKED_BY_ADMIN
            if server.locked_by and server.locked_by != expected:
                _authorize(caller, UNLOCK_OVERRIDE_POLICY, server)
            action = actions.start(caller, server, actions.UNLOCK)
            actions.event_start(action, UNLOCK_EVENT)
            server.locked, server.locked_by, server.locked_reason = False, None, None
            server.updated_at = timezone.now()
            server.save(update_fields=["locked", "locked_by", "locked_reason", "updated_at"])
            actions.event_finish(action, UNLOCK_EVENT)
            actions.finish(action)
            notifications.record(caller, "instance.unlock", server, request_id=caller.request_id)
    return server


def force_delete_server(caller: Caller, server_uuid: str) -> None:
    """forceDelete: deleted at once, soft-deleted or not (its allocation released)."""
    _delete(caller, server_uuid, soft=False)


# --- the server password (Nova's os-server-password) -----------------------------


def server_password(caller: Caller, server_uuid: str) -> str:
    """The encrypted password a server posted to Nova's metadata service,
    "" when none. Corral has no metadata service, so no server has one."""
    get_server(caller, server_uuid)
    return ""


def clear_server_password(caller: Caller, server_uuid: str) -> None:
    """Nova's clear of that password (the server's own password is not
    changed). There is none to clear: only the server is checked."""
    get_server(caller, server_uuid)


# --- delete --------------------------------------------------------------------


def delete_server(caller: Caller, server_uuid: str) -> None:
    """DELETE /servers/{id}: with RECLAIM_INSTANCE_INTERVAL > 0, a server that
    was launched and has no task in progress is SOFT_DELETED (its allocation
    kept, restorable until corral.servers.reclaim_deleted deletes it), as
    Nova's soft delete; otherwise (and for one soft-deleted already) it is
    deleted at once."""
    _delete(caller, server_uuid, soft=settings.RECLAIM_INSTANCE_INTERVAL > 0)


def _soft_deletable(server: Server) -> bool:
    return (
        server.launched_at is not None
        and server.task_state is None
        and server.vm_state in (Server.ACTIVE, Server.STOPPED, Server.ERROR)
    )


def _delete(caller: Caller, server_uuid: str, soft: bool) -> None:
    """Soft-delete, or mark the server deleting and, after commit, release its
    allocations and mark it deleted (a failed release is retried by finish_deletes)."""
    with events.failures_recorded(caller, "delete_server", "server"):
        with transaction.atomic():
            server = get_server(caller, server_uuid)
            server = Server.objects.select_for_update().get(pk=server.pk)
            if server.vm_state == Server.DELETED:
                raise _not_found(server_uuid)
            check_unlocked(caller, server)
            now = timezone.now()
            action = actions.start(caller, server, actions.DELETE, now)
            if soft and _soft_deletable(server):
                actions.event_start(action, actions.SOFT_DELETE_EVENT, host=server.host)
                server.vm_state, server.power_state = Server.SOFT_DELETED, Server.POWER_SHUTDOWN
                server.terminated_at = server.updated_at = now
                server.save(update_fields=["vm_state", "power_state", "terminated_at", "updated_at"])
                actions.event_finish(action, actions.SOFT_DELETE_EVENT, host=server.host)
                notifications.record(caller, "instance.soft_delete.end", server, request_id=caller.request_id)
                return
            server.task_state = Server.DELETING
            server.updated_at = now
            server.save(update_fields=["task_state", "updated_at"])
            actions.event_start(action, actions.TERMINATE, host=server.host)
            notifications.record(caller, "instance.delete.start", server, request_id=caller.request_id)
            server_pk = server.pk
            after_commit.dispatch(
                lambda: _finish_delete_here(server_pk),
                outbound=f"delete of server {server_pk}",
                failure=f"finishing the delete of server {server_pk} failed; corral.servers.finish_deletes will",
            )


def _finish_delete_here(server_pk: int) -> None:
    deletion.finish_delete(server_pk)
    CATCH_UP.run_if_due()
