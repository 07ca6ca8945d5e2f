"""Address pools and the addresses servers hold: the pools' rules (a valid
CIDR and gateway, no two pools overlapping, whom a pool serves), what a
boot asks for (``networks``), giving a server its addresses on the host it
was claimed on, freeing them on delete, keeping or replacing them on a
move, and each pool's usage.

Addressing is on once the operator has defined a pool: until then a boot
with ``networks: auto`` gets no address, as before pools existed."""

import dataclasses
import ipaddress
import random
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from aggregates.addressing.models import AddressAllocation, AddressPool
from aggregates.audit import services as events
from aggregates.errors import Conflict, Invalid, NotFound
from aggregates.host_aggregates.models import Aggregate, AggregateHost
from aggregates.hosts.models import ComputeNode
from aggregates.identity.caller import Caller
from aggregates.scheduling.request import AddressNeed, PoolView, RequestSpec
from aggregates.scheduling.services import MoveSideClaim, SideClaim
from aggregates.servers.models import Server
from aggregates.zones import services as zones

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

FIXED_NEED = "a fixed address from an internal pool"
FLOATING_NEED = "a floating address from an external IPv4 pool"


# --- a pool's addresses -------------------------------------------------------------


def network_of(pool: AddressPool) -> Network:
    return ipaddress.ip_network(pool.cidr)


def _usable(network: Network, gateway: str) -> Iterator[Address]:
    """The addresses a pool gives, lowest first: its hosts (not the network
    or broadcast address), the gateway left out."""
    gateway_address = ipaddress.ip_address(gateway) if gateway else None
    for address in network.hosts():
        if address != gateway_address:
            yield address


def capacity(network: Network, gateway: str) -> int:
    """How many addresses the pool gives (``_usable`` counted, in constant time)."""
    total = network.num_addresses
    if network.version == 4 and network.prefixlen <= 30:
        total -= 2
    elif network.version == 6 and network.prefixlen <= 126:
        total -= 1
    if gateway and ipaddress.ip_address(gateway) in network:
        total -= 1
    return max(total, 0)


@dataclass(frozen=True)
class PoolUsage:
    pool: AddressPool
    capacity: int
    used: int

    @property
    def free(self) -> int:
        return max(self.capacity - self.used, 0)


def used_by_pool() -> dict[int, int]:
    rows = AddressAllocation.objects.order_by().values_list("pool_id").annotate(n=Count("id"))
    return {pool_id: n for pool_id, n in rows}


def usage(pools: Sequence[AddressPool] | None = None) -> list[PoolUsage]:
    """Each pool (every one by default) with its capacity and the addresses in use (two queries)."""
    pools = list(pools) if pools is not None else list(AddressPool.objects.select_related("aggregate"))
    used = used_by_pool()
    return [PoolUsage(pool, capacity(network_of(pool), pool.gateway), used.get(pool.pk, 0)) for pool in pools]


def addressing_on() -> bool:
    return AddressPool.objects.exists()


def view_of(pool: AddressPool, free: int = 0) -> PoolView:
    aggregate_uuid = str(pool.aggregate.uuid) if pool.aggregate else ""
    version = network_of(pool).version
    return PoolView(str(pool.uuid), pool.name, pool.kind, pool.scope, pool.zone, aggregate_uuid, free, version)


def pool_views() -> list[PoolView]:
    """Every pool as the scheduler sees it, with its free addresses now."""
    return [view_of(item.pool, item.free) for item in usage()]


# --- pools: the operator's API and console ---------------------------------------------


def _parse_cidr(cidr: str) -> Network:
    try:
        network = ipaddress.ip_network(cidr.strip(), strict=True)
    except ValueError as exc:
        raise Invalid(f"Invalid CIDR {cidr!r}: {exc}.", field="cidr") from None
    if network.num_addresses < 2 and network.version == 4 and network.prefixlen > 32:
        raise Invalid(f"CIDR {cidr} holds no address to give.", field="cidr")
    return network


def _check_gateway(network: Network, gateway: str) -> str:
    if not gateway:
        return ""
    try:
        address = ipaddress.ip_address(gateway.strip())
    except ValueError:
        raise Invalid(f"Invalid gateway {gateway!r}: not an IP address.", field="gateway") from None
    if address not in network:
        raise Invalid(f"Gateway {address} is not inside {network}.", field="gateway")
    if network.num_addresses > 2 and network.version == 4:
        if address in (network.network_address, network.broadcast_address):
            raise Invalid(f"Gateway {address} is the network or broadcast address of {network}.", field="gateway")
    elif network.num_addresses > 2 and address == network.network_address:
        # IPv6 has no broadcast address; the subnet-router anycast address is never a host's.
        raise Invalid(f"Gateway {address} is the subnet-router anycast address of {network}.", field="gateway")
    return str(address)


def _check_overlap(network: Network, other_than: int | None = None) -> None:
    pools = AddressPool.objects.all() if other_than is None else AddressPool.objects.exclude(pk=other_than)
    for pool in pools:
        other = network_of(pool)
        if other.version == network.version and other.overlaps(network):
            raise Conflict(f"CIDR {network} overlaps address pool {pool.name} ({pool.cidr}).", field="cidr")


def _scope(scope: str, zone: str | None, aggregate: str | None) -> tuple[str, Aggregate | None]:
    """The zone and aggregate a scope names (the aggregate must exist; a
    zone need not have hosts yet)."""
    if scope == AddressPool.ZONE:
        if not zone:
            raise Invalid("A pool scoped to a zone names the zone.", field="zone")
        return zone, None
    if scope == AddressPool.AGGREGATE:
        if not aggregate:
            raise Invalid("A pool scoped to an aggregate names the aggregate.", field="aggregate")
        found = Aggregate.objects.filter(name=aggregate).first()
        if found is None and str(aggregate).isdigit() and len(str(aggregate)) < 19:
            found = Aggregate.objects.filter(pk=int(aggregate)).first()
        if found is None:
            try:
                found = Aggregate.objects.filter(uuid=uuid.UUID(str(aggregate))).first()
            except ValueError:
                found = None
        if found is None:
            raise Invalid(f"Aggregate {aggregate} could not be found.", field="aggregate")
        return "", found
    return "", None


def get_pool(pool_ref: str) -> AddressPool:
    """A pool by its uuid or its name."""
    pools = AddressPool.objects.select_related("aggregate")
    try:
        found = pools.filter(uuid=uuid.UUID(str(pool_ref))).first()
    except ValueError:
        found = None
    found = found or pools.filter(name=pool_ref).first()
    if found is None:
        raise NotFound(f"Address pool {pool_ref} could not be found.")
    return found


def list_pools() -> QuerySet[AddressPool]:
    return AddressPool.objects.select_related("aggregate").order_by("name")


def create_pool(
    caller: Caller,
    *,
    name: str,
    cidr: str,
    gateway: str = "",
    kind: str = AddressPool.INTERNAL,
    scope: str = AddressPool.GLOBAL,
    zone: str | None = None,
    aggregate: str | None = None,
) -> AddressPool:
    with events.failures_recorded(caller, "create_address_pool", "address_pool"):
        network = _parse_cidr(cidr)
        gateway = _check_gateway(network, gateway)
        if capacity(network, gateway) < 1:
            raise Invalid(f"CIDR {network} leaves no address to give.", field="cidr")
        zone_name, aggregate_row = _scope(scope, zone, aggregate)
        with transaction.atomic():
            if AddressPool.objects.filter(name=name).exists():
                raise Conflict(f"An address pool named {name} already exists.", field="name")
            _check_overlap(network)
            pool = AddressPool.objects.create(
                name=name,
                cidr=str(network),
                gateway=gateway,
                kind=kind,
                scope=scope,
                zone=zone_name,
                aggregate=aggregate_row,
            )
            events.record(caller, "address_pool.create", "address_pool", pool.pk, pool.uuid, _payload(pool))
    return pool


def update_pool(caller: Caller, pool_ref: str, changes: Mapping[str, Any]) -> AddressPool:
    """Rename a pool, change its gateway, kind or scope; its CIDR and kind
    only while no server holds one of its addresses."""
    with events.failures_recorded(caller, "update_address_pool", "address_pool"):
        with transaction.atomic():
            pool = AddressPool.objects.select_for_update().get(pk=get_pool(pool_ref).pk)
            held = AddressAllocation.objects.filter(pool=pool)
            name = changes.get("name", pool.name)
            if name != pool.name and AddressPool.objects.filter(name=name).exclude(pk=pool.pk).exists():
                raise Conflict(f"An address pool named {name} already exists.", field="name")
            network = network_of(pool)
            if "cidr" in changes and str(_parse_cidr(changes["cidr"])) != pool.cidr:
                if held.exists():
                    raise Conflict(
                        f"Address pool {pool.name} has addresses in use; its CIDR cannot change.", field="cidr"
                    )
                network = _parse_cidr(changes["cidr"])
                _check_overlap(network, other_than=pool.pk)
            gateway = _check_gateway(network, changes.get("gateway", pool.gateway) or "")
            if gateway and held.filter(address=gateway).exists():
                raise Conflict(f"Address {gateway} is held by a server; it cannot be the gateway.", field="gateway")
            if capacity(network, gateway) < 1:
                raise Invalid(f"CIDR {network} leaves no address to give.", field="cidr")
            kind = changes.get("kind", pool.kind)
            if kind != pool.kind and held.exists():
                raise Conflict(f"Address pool {pool.name} has addresses in use; its kind cannot change.", field="kind")
            scope = changes.get("scope", pool.scope)
            zone = changes.get("zone", pool.zone if scope == AddressPool.ZONE else None)
            aggregate = changes.get(
                "aggregate", pool.aggregate.name if pool.aggregate and scope == AddressPool.AGGREGATE else None
            )
            pool.zone, pool.aggregate = _scope(scope, zone, aggregate)
            pool.name, pool.cidr, pool.gateway, pool.kind, pool.scope = name, str(network), gateway, kind, scope
            pool.updated_at = timezone.now()
            pool.save()
            events.record(caller, "address_pool.update", "address_pool", pool.pk, pool.uuid, _payload(pool))
    return pool


def delete_pool(caller: Caller, pool_ref: str) -> None:
    with events.failures_recorded(caller, "delete_address_pool", "address_pool"):
        with transaction.atomic():
            pool = AddressPool.objects.select_for_update().get(pk=get_pool(pool_ref).pk)
            in_use = AddressAllocation.objects.filter(pool=pool).count()
            if in_use:
                raise Conflict(
                    f"Address pool {pool.name} has {in_use} address(es) in use; delete or move their servers first."
                )
            events.record(caller, "address_pool.delete", "address_pool", pool.pk, pool.uuid, _payload(pool))
            pool.delete()


def _payload(pool: AddressPool) -> dict[str, Any]:
    return {
        "name": pool.name,
        "cidr": pool.cidr,
        "gateway": pool.gateway,
        "kind": pool.kind,
        "scope": pool.scope,
        "zone": pool.zone,
        "aggregate": pool.aggregate.name if pool.aggregate else None,
    }


# --- what a boot asks for ---------------------------------------------------------------


def check_networks(networks: str | list[dict[str, Any]] | None) -> None:
    """A boot's ``networks``, as Nova refuses them: "auto", "none", no
    networks, or a list naming pools by uuid (Nova's network uuid); no ports."""
    if not isinstance(networks, list):
        return
    for item in networks:
        if item.get("port"):
            raise Invalid(f"Port id {item['port']} could not be found.", field="networks")
        if item.get("fixed_ip"):
            raise Invalid(
                f"Fixed IP address {item['fixed_ip']} cannot be asked for: Corral gives a pool's addresses itself; "
                "name the pool by its uuid alone.",
                field="networks",
            )
        if item.get("uuid"):
            try:
                found = AddressPool.objects.filter(uuid=uuid.UUID(str(item["uuid"]))).exists()
            except ValueError:
                found = False
            if not found:
                raise Invalid(f"Network {item['uuid']} could not be found.", field="networks")


def floating_pools(views: Sequence[PoolView]) -> tuple[PoolView, ...]:
    """The pools a floating address comes from: the external IPv4 pools
    (floating IPs are IPv4 in nova-network and in Neutron alike; an
    external IPv6 pool gives its addresses to the boots that name it)."""
    return tuple(v for v in views if v.kind == AddressPool.EXTERNAL and v.version == 4)


def need_for(networks: str | list[dict[str, Any]] | None) -> AddressNeed | None:
    """What a boot with ``networks`` needs on its host: None for "none" (or
    when no pool is defined); for "auto", a fixed address from an internal
    pool and, with AUTO_ASSIGN_FLOATING_IP, a floating one from an external
    pool; for a list, an address from each pool named."""
    if networks == "none":
        return None
    views = pool_views()
    if not views:
        return None
    groups: list[tuple[str, tuple[PoolView, ...]]] = []
    if isinstance(networks, list) and networks:
        by_uuid = {view.uuid: view for view in views}
        for item in networks:
            view = by_uuid.get(str(uuid.UUID(str(item["uuid"]))))
            if view is not None:
                groups.append((f"an address from pool {view.name}", (view,)))
        internal = any(view.kind == AddressPool.INTERNAL for _, (view,) in groups)
    else:
        groups.append((FIXED_NEED, tuple(v for v in views if v.kind == AddressPool.INTERNAL)))
        internal = True
    if internal and settings.AUTO_ASSIGN_FLOATING_IP:
        groups.append((FLOATING_NEED, floating_pools(views)))
    return AddressNeed(groups=tuple(groups)) if groups else None


def need_of_server(server: Server) -> AddressNeed | None:
    """What a moved server needs on its destination: an address of each kind
    it holds, from its own pool (kept, wherever that pool serves) or another
    pool of that kind and IP version with a free address."""
    return needs_of_servers([server]).get(str(server.uuid))


def needs_of_servers(servers: Sequence[Server]) -> dict[str, AddressNeed]:
    """``need_of_server`` of each server that holds an address (by uuid), in
    three queries whatever their number (a plan's servers)."""
    uuids = {server.pk: str(server.uuid) for server in servers}
    held: dict[str, list[AddressAllocation]] = {}
    rows = AddressAllocation.objects.filter(server__in=list(uuids), reserved_for="").select_related("pool")
    for row in rows.order_by("id"):
        held.setdefault(uuids[row.server_id], []).append(row)
    if not held:
        return {}
    views = pool_views()
    needs = {}
    for server_uuid, allocations in held.items():
        groups = []
        for row in allocations:
            # an address of the same kind and IP version: its own pool, or another like it
            same = tuple(v for v in views if v.kind == row.pool.kind and v.version == row.version)
            if row.kind == AddressAllocation.FLOATING:
                groups.append((FLOATING_NEED, same))
            else:
                groups.append((f"a fixed address from a pool like {row.pool.name}", same))
        keep = frozenset(str(row.pool.uuid) for row in allocations)
        needs[server_uuid] = AddressNeed(groups=tuple(groups), keep=keep)
    return needs


# --- a server's addresses -------------------------------------------------------------


def _host_place(host: str) -> tuple[str, frozenset[str]]:
    """The zone of ``host`` and the uuids of its aggregates."""
    aggregate_uuids = AggregateHost.objects.filter(host=host).values_list("aggregate__uuid", flat=True)
    return zones.zone_of_host(host), frozenset(str(value) for value in aggregate_uuids)


def _mac() -> str:
    return "fa:16:3e:" + ":".join(f"{random.randint(0, 255):02x}" for _ in range(3))


def _take(
    server: Server,
    pools: Sequence[AddressPool],
    kind: str,
    mac: str,
    place: tuple[str, frozenset[str]],
    reserved_for: str = "",
) -> AddressAllocation | None:
    """The lowest free address of the first pool (by name) serving the host
    that has one (held by the server, or taken for its move to
    ``reserved_for``). The pools' rows are locked (PostgreSQL); the unique
    constraint settles any race left (that address is skipped)."""
    locked = AddressPool.objects.select_for_update().filter(pk__in=[p.pk for p in pools]).order_by("name")
    for pool in locked:
        if not view_of(pool).serves(*place):
            continue
        taken = set(AddressAllocation.objects.filter(pool=pool).values_list("address", flat=True))
        for address in _usable(network_of(pool), pool.gateway):
            text = str(address)
            if text in taken:
                continue
            try:
                with transaction.atomic():
                    return AddressAllocation.objects.create(
                        pool=pool,
                        server=server,
                        address=text,
                        version=address.version,
                        kind=kind,
                        mac_addr=mac,
                        reserved_for=reserved_for,
                    )
            except IntegrityError:
                continue
    return None


def allocate(server_uuid: str, host: str, need: AddressNeed | None) -> bool:
    """Give the server the addresses ``need`` asks for, from pools serving
    ``host``, in one transaction (a server's earlier addresses, from a build
    taken up again, are replaced). False, with nothing kept, when a pool
    serving the host has none left: the caller tries another host."""
    if need is None:
        return True
    place = _host_place(host)
    with transaction.atomic():
        server = Server.objects.select_for_update().filter(uuid=server_uuid).first()
        if server is None or server.deleted_at is not None or server.task_state == Server.DELETING:
            return False  # deleted meanwhile: its delete frees what it holds, so it takes nothing
        AddressAllocation.objects.filter(server=server).delete()
        mac = _mac()
        for what, views in need.groups:
            pools = list(AddressPool.objects.filter(uuid__in=[v.uuid for v in views]))
            kind = AddressAllocation.FLOATING if what == FLOATING_NEED else AddressAllocation.FIXED
            if _take(server, pools, kind, mac, place) is None:
                transaction.set_rollback(True)
                return False
    return True


def free(server: Server) -> int:
    """Free every address the server holds (call inside the delete's transaction)."""
    deleted, _ = AddressAllocation.objects.filter(server=server).delete()
    return deleted


def _not_serving(server: Server, place: tuple[str, frozenset[str]]) -> list[AddressAllocation]:
    """The server's held addresses whose pool does not serve the host at ``place``."""
    rows = AddressAllocation.objects.filter(server=server, reserved_for="").select_related("pool", "pool__aggregate")
    return [row for row in rows if not view_of(row.pool).serves(*place)]


def _like(row: AddressAllocation) -> list[AddressPool]:
    """The other pools that can replace ``row``: same kind, same IP version."""
    same_kind = AddressPool.objects.filter(kind=row.pool.kind).exclude(pk=row.pool.pk)
    return [other for other in same_kind if network_of(other).version == row.version]


def reserve_for_move(server_uuid: str, node_uuid: str) -> bool:
    """A move's side of its claim on compute node ``node_uuid``: take now,
    reserved for the server, a replacement for each address whose pool does
    not serve that host, so that no other boot or move can take it before
    the move ends (``readdress`` hands them over). Replaces the server's
    earlier reservations. False, with nothing taken, when a pool that
    could serve the host has none left (the next host is tried) or the
    server is being deleted."""
    host = ComputeNode.objects.filter(uuid=node_uuid).values_list("host", flat=True).first()
    if host is None:
        return False
    with transaction.atomic():
        server = Server.objects.select_for_update().filter(uuid=server_uuid).first()
        if server is None or server.deleted_at is not None or server.task_state == Server.DELETING:
            return False
        drop_reservations(server)
        place = _host_place(host)
        for row in _not_serving(server, place):
            if _take(server, _like(row), row.kind, row.mac_addr, place, reserved_for=host) is None:
                transaction.set_rollback(True)
                return False
    return True


def drop_reservations(server: Server) -> int:
    """Give back what a move that did not happen took for its destination."""
    return _drop_reserved(server=server)


def drop_reservations_of(server_uuid: str) -> int:
    """``drop_reservations`` of the server ``server_uuid``."""
    return _drop_reserved(server__uuid=server_uuid)


def _drop_reserved(**server: Any) -> int:
    dropped, _ = AddressAllocation.objects.filter(**server).exclude(reserved_for="").delete()
    return dropped


def readdress(server: Server, host: str) -> list[str]:
    """After a move to ``host`` (inside the move's transaction): keep each
    address whose pool still serves the host, replace the others by what the
    move reserved there (``reserve_for_move``) or else from a pool of the
    same kind and IP version that serves it; other reservations are given
    back. Returns what changed, one sentence each (empty when every address
    was kept); an address no pool can replace is freed and said so."""
    place = _host_place(host)
    changes = []
    reserved = list(AddressAllocation.objects.filter(server=server, reserved_for=host).select_related("pool"))
    for row in _not_serving(server, place):
        pool = row.pool
        old = f"{row.address} ({row.kind}, pool {pool.name})"
        row.delete()
        taken = next((r for r in reserved if r.kind == row.kind and r.version == row.version), None)
        if taken is not None:
            reserved.remove(taken)
            taken.reserved_for = ""
            taken.save(update_fields=["reserved_for"])
        else:
            taken = _take(server, _like(row), row.kind, row.mac_addr, place)
        if taken is None:
            changes.append(f"{old} freed: no {pool.kind} pool serving host {host} has a free address")
        else:
            changes.append(
                f"{old} replaced by {taken.address} (pool {taken.pool.name}): "
                f"pool {pool.name} does not serve host {host}"
            )
    drop_reservations(server)
    return changes


def addresses_of(server: Server) -> dict[str, list[dict[str, Any]]]:
    """Nova's ``addresses``: by pool, each entry with version, addr, type and
    MAC; a floating address is listed under the pool of the fixed address it
    is given on top of, as Nova lists it under the port's network. Reads the
    prefetched rows when there are."""
    held = [row for row in server.address_rows.all() if not row.reserved_for]
    rows = sorted(held, key=lambda row: (row.kind != AddressAllocation.FIXED, row.id))
    shown: dict[str, list[dict[str, Any]]] = {}
    home = ""
    for row in rows:
        name = row.pool.name
        if row.kind == AddressAllocation.FIXED:
            home = home or name
        else:
            name = home or name
        shown.setdefault(name, []).append(
            {
                "version": row.version,
                "addr": row.address,
                "OS-EXT-IPS:type": row.kind,
                "OS-EXT-IPS-MAC:mac_addr": row.mac_addr,
            }
        )
    return shown


ADDRESS_PREFETCH = "address_rows__pool"


# --- the boot's side of the claim ------------------------------------------------------


def allocate_on_node(server_uuid: str, node_uuid: str, need: AddressNeed | None) -> bool:
    """``allocate`` on the host of compute node ``node_uuid``."""
    host = ComputeNode.objects.filter(uuid=node_uuid).values_list("host", flat=True).first()
    return host is not None and allocate(server_uuid, host, need)


def for_boot(spec: RequestSpec, networks: str | list[dict[str, Any]] | None) -> tuple[RequestSpec, SideClaim | None]:
    """A boot's spec with the addresses it needs, and the claim of those
    addresses beside placement's (None when it needs none)."""
    need = need_for(networks)
    if need is None:
        return spec, None
    side = SideClaim(
        claim=lambda consumer, node_uuid: allocate_on_node(consumer, node_uuid, need),
        respec=lambda stale: dataclasses.replace(stale, addressing=need_for(networks)),
    )
    return dataclasses.replace(spec, addressing=need), side


def for_move(spec: RequestSpec, server: Server) -> tuple[RequestSpec, MoveSideClaim | None]:
    """A move's spec with the addresses the server must find at its
    destination, and the claim of those it must take anew there, made with
    placement's (None when it holds no address)."""
    need = need_of_server(server)
    if need is None:
        return spec, None
    side = MoveSideClaim(
        take=reserve_for_move,
        give_back=drop_reservations_of,
        respec=lambda stale: dataclasses.replace(stale, addressing=need_of_server(server)),
    )
    return dataclasses.replace(spec, addressing=need), side


# --- capacity headroom ---------------------------------------------------------------


@dataclass(frozen=True)
class AddressHeadroom:
    resource_class: str  # IPV4_ADDRESS | IPV6_ADDRESS
    capacity: int  # of the pools serving a host that remains
    used: int  # in those pools, plus the addresses the moved servers must take anew
    lost_capacity: int  # of the pools serving only lost hosts
    moved: int  # the moved servers' addresses in pools no remaining host is served by


def headroom(remaining: Sequence[str], lost: Sequence[str], moving: Sequence[Server]) -> list[AddressHeadroom]:
    """Free addresses counted as any other resource when hosts are lost:
    per IP version, the pools that go on serving a remaining host, what is
    used in them, and what the moved servers would need from them."""
    items = usage()
    if not items:
        return []
    places = {host: _host_place(host) for host in [*remaining, *lost]}
    held = AddressAllocation.objects.filter(server__in=list(moving), reserved_for="").values_list("pool_id", flat=True)
    figures = []
    for version, resource_class in ((4, "IPV4_ADDRESS"), (6, "IPV6_ADDRESS")):
        mine = [item for item in items if network_of(item.pool).version == version]
        if not mine:
            continue
        serving = {item.pool.pk for item in mine if any(view_of(item.pool).serves(*places[host]) for host in remaining)}
        moved = sum(1 for pool_id in held if pool_id not in serving and any(i.pool.pk == pool_id for i in mine))
        figures.append(
            AddressHeadroom(
                resource_class=resource_class,
                capacity=sum(item.capacity for item in mine if item.pool.pk in serving),
                used=sum(item.used for item in mine if item.pool.pk in serving) + moved,
                lost_capacity=sum(item.capacity for item in mine if item.pool.pk not in serving),
                moved=moved,
            )
        )
    return figures
