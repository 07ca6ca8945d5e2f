"""The flavor extra specs Nova knows, and the rules their values follow.

From compute API microversion 2.86 a flavor's extra specs are checked
against this registry, as Nova does: a key is looked up by its exact name,
then against the parameterised names (``hw:numa_cpus.{id}``,
``resources{group}:{resource_class}``, ...). A known key must carry a value
its rule accepts. An unknown key is refused when its namespace (the part
before the first ``:``) is one the registry covers, and accepted otherwise
(``foo``, ``foo:bar``).

The names and rules follow nova/api/validation/extra_specs/ (nova 34); the
standard resource classes and traits come from os-resource-classes and
os-traits, as they do in Nova.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import os_resource_classes
import os_traits

from aggregates.errors import Invalid

# A key of the os-extra_specs API (and of aggregate metadata), as Nova's
# schema writes it. Note ``9-_`` is a range: it admits ``:;<=>?@[\]^`` too.
KEY_PATTERN = r"^[a-zA-Z0-9-_:. ]{1,255}$"
VALUE_MAX_LENGTH = 255

TRUE_WORDS = ("1", "t", "true", "on", "y", "yes")
FALSE_WORDS = ("0", "f", "false", "off", "n", "no")


# --- value rules -----------------------------------------------------------


class Rule(Protocol):
    """What a known spec's value must follow."""

    def problem(self, value: str) -> str | None:
        """Why ``value`` is refused, or None when it is accepted."""
        ...


class AnyText:
    """Any string: the value is read by a filter or a driver, not here."""

    def problem(self, value: str) -> str | None:
        return None


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]

    def problem(self, value: str) -> str | None:
        if value not in self.options:
            return f"'{value}' is not one of: {', '.join(self.options)}."
        return None


@dataclass(frozen=True)
class Pattern:
    regex: str

    def problem(self, value: str) -> str | None:
        if not re.fullmatch(self.regex, value):
            return f"'{value}' is not of the format '{self.regex}'."
        return None


@dataclass(frozen=True)
class Integer:
    minimum: int | None = None
    maximum: int | None = None

    def problem(self, value: str) -> str | None:
        try:
            number = int(value)
        except ValueError:
            return f"'{value}' is not a valid integer value."
        if self.maximum is not None and number > self.maximum:
            return f"'{value}' is greater than the max value of '{self.maximum}'."
        if self.minimum is not None and number < self.minimum:
            return f"'{value}' is less than the min value of '{self.minimum}'."
        return None


def strict_boolean(text: str) -> bool | None:
    """True or False for the words oslo's strict bool_from_string accepts, else None."""
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


class BooleanLike:
    def problem(self, value: str) -> str | None:
        if strict_boolean(value) is None:
            return f"'{value}' is not a valid boolean-like value."
        return None


ANY = AnyText()
BOOLEAN = BooleanLike()
POSITIVE = Integer(minimum=1)
NON_NEGATIVE = Integer(minimum=0)
INTEGER = Integer()


def choice(*options: str) -> Choice:
    return Choice(tuple(options))


# --- the registry ------------------------------------------------------------

# What each {parameter} of a name stands for.
PARAMETERS = {
    "id": r"\d+",
    "group": r"([a-zA-Z0-9_-]{1,64})?",
    "resource_class": "(" + "|".join(map(re.escape, os_resource_classes.STANDARDS)) + r"|CUSTOM_[A-Z0-9_]+)",
    "trait": "(" + "|".join(map(re.escape, os_traits.get_traits())) + r"|CUSTOM_[A-Z0-9_]+)",
    "filter": r"(:\w+)*",
    "key": r".+",
}

CPU_SET = r"\^?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*"
REALTIME_MASK = r"(\^)?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*"

HOST_CAPABILITIES = (
    "id",
    "uuid",
    "service_id",
    "host",
    "vcpus",
    "memory_mb",
    "local_gb",
    "vcpus_used",
    "memory_mb_used",
    "local_gb_used",
    "hypervisor_type",
    "hypervisor_version",
    "hypervisor_hostname",
    "free_ram_mb",
    "free_disk_gb",
    "current_workload",
    "running_vms",
    "disk_available_least",
    "host_ip",
    "mapped",
    "cpu_allocation_ratio",
    "ram_allocation_ratio",
    "disk_allocation_ratio",
    "total_usable_ram_mb",
    "total_usable_disk_gb",
    "disk_mb_used",
    "free_disk_mb",
    "vcpus_total",
    "num_instances",
    "num_io_ops",
    "failed_builds",
    "aggregates",
    "cell_uuid",
    "updated",
)
NESTED_HOST_CAPABILITIES = (
    "cpu_info",
    "metrics",
    "stats",
    "numa_topology",
    "supported_hv_specs",
    "pci_device_pools",
    "nodename",
    "pci_stats",
    "supported_instances",
    "limits",
    "instances",
)

# (name, rule), one row per known extra spec or family of them.
KNOWN_SPECS: list[tuple[str, Rule]] = [
    # hw: CPU policy, pinning and realtime
    ("hw:cpu_policy", choice("dedicated", "shared", "mixed")),
    ("hw:cpu_thread_policy", choice("prefer", "isolate", "require")),
    ("hw:emulator_threads_policy", choice("isolate", "share")),
    ("hw:cpu_dedicated_mask", Pattern(CPU_SET)),
    ("hw:cpu_realtime", BOOLEAN),
    ("hw:cpu_realtime_mask", Pattern(REALTIME_MASK)),
    ("hw:hide_hypervisor_id", BOOLEAN),
    # hw: CPU topology
    ("hw:cpu_sockets", POSITIVE),
    ("hw:cpu_cores", POSITIVE),
    ("hw:cpu_threads", POSITIVE),
    ("hw:max_cpu_sockets", POSITIVE),
    ("hw:max_cpu_cores", POSITIVE),
    ("hw:max_cpu_threads", POSITIVE),
    # hw: memory and NUMA
    ("hw:mem_page_size", Pattern(r"(large|small|any|\d+([kKMGT]i?)?(b|bit|B)?)")),
    ("hw:numa_nodes", POSITIVE),
    ("hw:numa_cpus.{id}", Pattern(CPU_SET)),
    ("hw:numa_mem.{id}", POSITIVE),
    ("hw:pci_numa_affinity_policy", choice("required", "preferred", "legacy", "socket")),
    ("hw:locked_memory", BOOLEAN),
    ("hw:mem_encryption", BOOLEAN),
    ("hw:mem_encryption_model", choice("amd-sev", "amd-sev-es")),
    ("hw:pmem", Pattern(r"([a-zA-Z0-9_]+(,)?)+")),
    ("hw:maxphysaddr_mode", choice("passthrough", "emulate")),
    ("hw:maxphysaddr_bits", POSITIVE),
    # hw: devices and features
    ("hw:boot_menu", BOOLEAN),
    ("hw:vif_multiqueue_enabled", BOOLEAN),
    ("hw:virtio_packed_ring", BOOLEAN),
    ("hw:pmu", BOOLEAN),
    ("hw:serial_port_count", NON_NEGATIVE),
    ("hw:tpm_model", choice("tpm-tis", "tpm-crb")),
    ("hw:tpm_version", choice("1.2", "2.0")),
    ("hw:tpm_secret_security", choice("user", "host", "deployment")),
    ("hw:watchdog_action", choice("none", "pause", "poweroff", "reset", "disabled")),
    ("hw:viommu_model", choice("intel", "smmuv3", "virtio", "auto")),
    ("hw:sound_model", ANY),
    ("hw:usb_model", ANY),
    ("hw:redirected_usb_ports", Integer(minimum=0, maximum=15)),
    ("hw:ephemeral_encryption", BOOLEAN),
    ("hw:ephemeral_encryption_format", choice("plain", "luks", "luksv2")),
    # hw_rng:, hw_video:, os:
    ("hw_rng:allowed", BOOLEAN),
    ("hw_rng:rate_bytes", NON_NEGATIVE),
    ("hw_rng:rate_period", NON_NEGATIVE),
    ("hw_video:ram_max_mb", NON_NEGATIVE),
    ("os:secure_boot", choice("disabled", "required")),
    # quota: VMware limits, reservations and shares
    *[
        (f"quota:{resource}_{setting}", rule)
        for resource in ("cpu", "memory", "disk_io", "vif")
        for setting, rule in (
            ("limit", INTEGER),
            ("reservation", INTEGER),
            ("shares_level", ANY),
            ("shares_share", INTEGER),
        )
    ],
    # quota: libvirt CPU, disk and VIF tuning
    *[(f"quota:cpu_{setting}", NON_NEGATIVE) for setting in ("shares", "period", "quota")],
    *[
        (f"quota:disk_{stat}_{metric}_sec", NON_NEGATIVE)
        for stat in ("read", "write", "total")
        for metric in ("bytes", "iops")
    ],
    *[
        (f"quota:vif_{direction}_{metric}", NON_NEGATIVE)
        for direction in ("inbound", "outbound")
        for metric in ("average", "peak", "burst")
    ],
    # accel:, pci_passthrough:, vmware:
    ("accel:device_profile", ANY),
    ("pci_passthrough:alias", Pattern(r"[^:]+:\d+(?:\s*,\s*[^:]+:\d+)*")),
    ("vmware:hw_version", ANY),
    ("vmware:storage_policy", ANY),
    # scheduler filters: ComputeCapabilitiesFilter and AggregateInstanceExtraSpecsFilter
    *[(f"capabilities:{capability}", ANY) for capability in HOST_CAPABILITIES],
    *[(f"capabilities:{capability}{{filter}}", ANY) for capability in NESTED_HOST_CAPABILITIES],
    ("aggregate_instance_extra_specs:{key}", ANY),
    # placement: granular resources and traits
    ("resources{group}:{resource_class}", INTEGER),
    ("trait{group}:{trait}", choice("required", "forbidden")),
    # no namespace
    ("hide_hypervisor_id", BOOLEAN),
    ("group_policy", choice("isolate", "none")),
]


def _name_regex(name: str) -> str:
    """``hw:numa_cpus.{id}`` -> ``hw:numa_cpus\\.\\d+`` (literal parts escaped)."""
    parts = re.split(r"\{(\w+)\}", name)
    return "".join(re.escape(part) if index % 2 == 0 else PARAMETERS[part] for index, part in enumerate(parts))


@dataclass(frozen=True)
class KnownSpec:
    name: str
    rule: Rule
    regex: re.Pattern[str]


REGISTRY = [KnownSpec(name, rule, re.compile(_name_regex(name))) for name, rule in KNOWN_SPECS]
EXACT = {spec.name: spec for spec in REGISTRY if "{" not in spec.name}
PATTERNED = [spec for spec in REGISTRY if "{" in spec.name]
NAMESPACES = [
    re.compile(regex)
    for regex in dict.fromkeys(_name_regex(spec.name.split(":", 1)[0]) for spec in REGISTRY if ":" in spec.name)
]


def known_spec(key: str) -> KnownSpec | None:
    """The registry entry for ``key``, or None."""
    if key in EXACT:
        return EXACT[key]
    return next((spec for spec in PATTERNED if spec.regex.fullmatch(key)), None)


def in_known_namespace(key: str) -> bool:
    if ":" not in key:
        return False
    namespace = key.split(":", 1)[0]
    return any(regex.fullmatch(namespace) for regex in NAMESPACES)


def validate_extra_spec(key: str, value: str) -> None:
    """Raise Invalid unless ``value`` (a string) suits the known spec ``key``,
    or ``key`` is outside every namespace Nova knows."""
    spec = known_spec(key)
    if spec is not None:
        problem = spec.rule.problem(value)
        if problem:
            raise Invalid(f"Validation failed; {problem} Fix the value of extra spec '{key}'.")
        return
    if in_known_namespace(key):
        raise Invalid(
            f"Validation failed; extra spec '{key}' does not appear to be a valid extra spec. "
            f"Check the name for typos; names outside Nova's namespaces are not checked."
        )


def spec_value(value: object) -> str:
    """The stored (string) form of an extra spec value: numbers are written
    out, and the result must fit the 255-character column."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > VALUE_MAX_LENGTH:
        raise Invalid(f"Invalid input received: extra_specs value has more than {VALUE_MAX_LENGTH} characters.")
    return text


def validate_extra_specs(specs: Mapping[str, object]) -> None:
    """Check every key and value of ``specs`` (strings or numbers) against
    the registry, raising Invalid at the first bad one."""
    for key, value in specs.items():
        validate_extra_spec(key, spec_value(value))
