"""What is being scheduled: a request spec built from the flavor, the image,
the project and the requested zone, in plain values (no ORM objects), so that
filters and weighers are pure functions of a request and a host."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FlavorSpec:
    name: str
    flavorid: str
    vcpus: int
    memory_mb: int
    root_gb: int
    ephemeral_gb: int = 0
    swap: int = 0
    extra_specs: dict[str, str] = field(default_factory=dict)

    @property
    def disk_gb(self) -> int:
        """DISK_GB placement is asked for: root + ephemeral + swap (MiB, rounded up to GiB)."""
        return self.root_gb + self.ephemeral_gb + (self.swap + 1023) // 1024

    def resources(self) -> dict[str, int]:
        """Placement resource classes and amounts one server of this flavor claims."""
        wanted = {"VCPU": self.vcpus, "MEMORY_MB": self.memory_mb, "DISK_GB": self.disk_gb}
        return {rc: amount for rc, amount in wanted.items() if amount > 0}


@dataclass(frozen=True)
class ImageSpec:
    id: str
    name: str
    disk_format: str = ""
    container_format: str = ""
    # Glance's extra properties (hw_architecture, img_hv_type, os_type, ...), as strings.
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PoolView:
    """An address pool as the scheduler sees it: whom it serves and how many
    of its addresses were free when the request was read (not part of the
    request's identity: a kept decision is reused whatever the count)."""

    uuid: str
    name: str
    kind: str  # internal | external
    scope: str  # global | zone | aggregate
    zone: str = ""
    aggregate_uuid: str = ""
    free: int = field(default=0, repr=False, compare=False)
    version: int = 4  # of its addresses

    def serves(self, availability_zone: str, aggregate_uuids: frozenset[str]) -> bool:
        if self.scope == "global":
            return True
        if self.scope == "zone":
            return self.zone == availability_zone
        return bool(self.aggregate_uuid) and self.aggregate_uuid in aggregate_uuids


@dataclass(frozen=True)
class AddressNeed:
    """The addresses a server needs on its host: one from a pool of each
    group (fixed addresses, then a floating one); a pool of ``keep`` (a
    moved server's own) serves without a free address."""

    groups: tuple[tuple[str, tuple[PoolView, ...]], ...] = ()  # (what, the pools that may give it)
    keep: frozenset[str] = frozenset()


@dataclass(frozen=True)
class GroupSpec:
    """The server group a request's servers belong to (Nova's
    instance_group): its policy and where its members are. The members on
    each host grow as a request places its servers (``place``)."""

    uuid: str
    name: str
    policy: str  # affinity | anti-affinity | soft-affinity | soft-anti-affinity
    max_server_per_host: int = 1
    # Host name -> uuids of the members there (or admitted there), the server
    # being scheduled left out.
    members_by_host: dict[str, set[str]] = field(default_factory=dict, compare=False)

    def members_on(self, host: str) -> set[str]:
        return self.members_by_host.get(host, set())

    def hosts(self) -> set[str]:
        return {host for host, members in self.members_by_host.items() if members}

    def place(self, host: str, member_uuid: str) -> None:
        """Count a member placed on ``host`` (the next server of the request sees it)."""
        self.members_by_host.setdefault(host, set()).add(member_uuid)


@dataclass(frozen=True)
class RequestSpec:
    flavor: FlavorSpec
    project_id: str
    image: ImageSpec | None = None
    user_id: str = ""
    # The zone asked for (or DEFAULT_SCHEDULE_ZONE), None when any zone will do.
    availability_zone: str | None = None
    # Admin forms az:host, az::node, az:host:node: the scheduler's filters are skipped.
    forced_host: str | None = None
    forced_node: str | None = None
    num_instances: int = 1
    # Scheduler hints same_host / different_host, resolved to host names.
    same_host: frozenset[str] = frozenset()
    different_host: frozenset[str] = frozenset()
    # Moves: hosts never to choose (the source: Nova's ignore_hosts), a host
    # asked for that still goes through the filters (Nova's requested
    # destination), and aggregates (uuids) whose hosts are tried first.
    ignore_hosts: frozenset[str] = frozenset()
    requested_host: str | None = None
    preferred_aggregates: frozenset[str] = frozenset()
    # The addresses the server needs (aggregates/addressing), None when none.
    addressing: AddressNeed | None = None
    # The server group of the servers (the ``group`` hint, or a moved member's).
    group: GroupSpec | None = None
