"""What the scheduler knows of one compute node when it decides: its
aggregates (with metadata), its service's state, and its resources as
placement reports them. Built for every compute node by ``engine``; the
filters and weighers read it and never touch the database or placement."""

from dataclasses import dataclass, field
from functools import cached_property

# The HostState counters of servers, read when a filter or weigher needs them.
COUNTERS = ("num_instances", "num_io_ops")


@dataclass(frozen=True)
class AggregateInfo:
    uuid: str
    name: str
    metadata: dict[str, str] = field(default_factory=dict)

    @cached_property
    def split_metadata(self) -> dict[str, frozenset[str]]:
        """Each key's value split on ',' and stripped ("a, b" gives {"a", "b"}),
        worked out once per aggregate, not once per host that is in it."""
        return {key: frozenset(part.strip() for part in value.split(",")) for key, value in self.metadata.items()}


@dataclass
class HostState:
    host: str
    node: str
    node_uuid: str
    aggregates: list[AggregateInfo] = field(default_factory=list)
    availability_zone: str = ""
    service_disabled: bool = False
    disabled_reason: str = ""
    service_up: bool = True
    hypervisor_type: str = "QEMU"
    hypervisor_version: int = 0
    cpu_arch: str = "x86_64"
    # Disk formats the hypervisor boots (lower case: qcow2, raw...), reported
    # to placement as COMPUTE_IMAGE_TYPE_* traits.
    image_types: frozenset[str] = frozenset({"aki", "ami", "ari", "iso", "qcow2", "raw"})
    # Resources as placement reports them (capacity = (total - reserved) * ratio).
    vcpus_total: int = 0
    vcpus_capacity: float = 0.0
    vcpus_used: int = 0
    memory_mb_total: int = 0
    memory_mb_capacity: float = 0.0
    memory_mb_used: int = 0
    disk_gb_total: int = 0
    disk_gb_capacity: float = 0.0
    disk_gb_used: int = 0
    # Servers on the node, and those in a task (build, migration) that counts as I/O.
    num_instances: int = 0
    num_io_ops: int = 0
    # Those of the two counters above not read from the database yet (a
    # decision counts them only for the hosts a filter or weigher reading
    # them gets to); what ``consume`` added is kept when they are read.
    uncounted: frozenset[str] = frozenset()
    instance_uuids: set[str] = field(default_factory=set)
    # metadata.metadata_by_host's answer, kept for the decision's filters.
    metadata_cache: dict[str, set[str]] | None = field(default=None, repr=False, compare=False)
    # Weight multipliers resolved over the host's aggregates, by (key, default).
    multiplier_cache: dict[tuple[str, float], float] = field(default_factory=dict, repr=False, compare=False)

    def forget_derived(self) -> None:
        """Drop what was worked out from the aggregates (they changed)."""
        self.metadata_cache = None
        self.multiplier_cache = {}

    @property
    def free_ram_mb(self) -> float:
        return self.memory_mb_capacity - self.memory_mb_used

    @property
    def free_disk_mb(self) -> float:
        return (self.disk_gb_capacity - self.disk_gb_used) * 1024

    @property
    def free_vcpus(self) -> float:
        return self.vcpus_capacity - self.vcpus_used

    def room(self) -> dict[str, float]:
        """What is free of each class the scheduler follows (DISK_GB in GB)."""
        return {"VCPU": self.free_vcpus, "MEMORY_MB": self.free_ram_mb, "DISK_GB": self.free_disk_mb / 1024}

    def fits(self, resources: dict[str, int]) -> bool:
        """Whether ``resources`` fit in what is free here (classes not followed count as fitting)."""
        room = self.room()
        return all(room[rc] >= amount for rc, amount in resources.items() if rc in room)

    def consume(self, resources: dict[str, int], instance_uuid: str = "") -> None:
        """Account for a server just placed here (several instances in one request)."""
        self.vcpus_used += resources.get("VCPU", 0)
        self.memory_mb_used += resources.get("MEMORY_MB", 0)
        self.disk_gb_used += resources.get("DISK_GB", 0)
        self.num_instances += 1
        if instance_uuid:
            self.instance_uuids.add(instance_uuid)
