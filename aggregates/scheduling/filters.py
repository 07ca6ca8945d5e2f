"""Nova's host filters, as pure functions of a host and a request.

Each filter answers ``host_passes(host, spec)`` with None when the host may
take the server, or with one sentence saying why not: which host, which
aggregate(s), which key and value, and which flavor, image or project made
the difference, so that an operator can act on it. Filters are named by
Nova's class names, and :func:`enabled_filters` builds the configured list
(``ENABLED_FILTERS``)."""

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from aggregates.scheduling import metadata, operators
from aggregates.scheduling.host_state import HostState
from aggregates.scheduling.request import AddressNeed, GroupSpec, ImageSpec, RequestSpec

LOG = logging.getLogger("aggregates.scheduling")


def _listing(items: Iterable[str]) -> str:
    """Items as "a, b, c" (sets sorted, sequences kept in order)."""
    return ", ".join(sorted(items) if isinstance(items, set | frozenset) else items)


def _image_name(image: ImageSpec) -> str:
    return f"image {image.name or image.id}"


class HostFilter:
    """One rule a host must satisfy to take the server."""

    name: ClassVar[str]
    # The answer is the same for every instance of one request (Nova's flag).
    run_filter_once_per_request: ClassVar[bool] = False
    # Nova's RUN_ON_REBUILD: the filter also judges the host of a rebuild.
    run_on_rebuild: ClassVar[bool] = False
    # Placing an instance on one host may change the verdict on others (all
    # are judged again before the request's next instance).
    judges_every_host_again: ClassVar[bool] = False
    # The verdict depends on the request's flavor (False: the same for every
    # flavor of one request otherwise alike; capacity by flavor judges such a
    # filter once per host, not once per flavor and host).
    reads_flavor: ClassVar[bool] = True
    # The HostState counter of servers it reads (host_state.COUNTERS), if any:
    # counted for the hosts it judges just before it judges them.
    counter: ClassVar[str] = ""

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        """None when the host passes, else the reason it does not."""
        raise NotImplementedError


# --- The image properties Nova knows ---------------------------------------
# Field names of Nova's ImageMetaProps: the only image properties filters
# see. Anything else an image carries is invisible to them.
STANDARD_IMAGE_PROPERTIES: frozenset[str] = frozenset(
    {
        "hw_architecture", "hw_emulation_architecture", "hw_auto_disk_config", "hw_boot_menu", "hw_cdrom_bus",
        "hw_cpu_cores", "hw_cpu_sockets", "hw_cpu_max_cores", "hw_cpu_max_sockets", "hw_cpu_max_threads",
        "hw_cpu_policy", "hw_cpu_thread_policy", "hw_cpu_realtime_mask", "hw_cpu_threads", "hw_device_id",
        "hw_disk_bus", "hw_disk_type", "hw_floppy_bus", "hw_firmware_type", "hw_firmware_stateless",
        "hw_input_bus", "hw_ipxe_boot", "hw_locked_memory", "hw_machine_type", "hw_mem_encryption",
        "hw_mem_encryption_model", "hw_mem_page_size", "hw_numa_nodes", "hw_numa_cpus", "hw_numa_mem",
        "hw_pci_numa_affinity_policy", "hw_pointer_model", "hw_pmu", "hw_qemu_guest_agent", "hw_rescue_bus",
        "hw_rescue_device", "hw_rng_model", "hw_time_hpet", "hw_serial_port_count", "hw_scsi_model",
        "hw_video_model", "hw_video_ram", "hw_vif_model", "hw_viommu_model", "hw_vm_mode", "hw_watchdog_action",
        "hw_vif_multiqueue_enabled", "hw_tpm_model", "hw_tpm_version", "hw_ephemeral_encryption",
        "hw_ephemeral_encryption_format", "hw_ephemeral_encryption_secret_uuid", "hw_virtio_packed_ring",
        "hw_maxphysaddr_mode", "hw_maxphysaddr_bits", "hw_sound_model", "hw_usb_model", "hw_redirected_usb_ports",
        "img_bittorrent", "img_bdm_v2", "img_block_device_mapping", "img_cache_in_nova", "img_compression_level",
        "img_hv_requested_version", "img_hv_type", "img_config_drive", "img_linked_clone", "img_mappings",
        "img_owner_id", "img_root_device_name", "img_use_agent", "img_version", "img_signature",
        "img_signature_hash_method", "img_signature_certificate_uuid", "img_signature_key_type",
        "img_hide_hypervisor_id", "os_admin_user", "os_command_line", "os_distro", "os_require_quiesce",
        "os_secure_boot", "os_skip_agent_inject_files_at_boot", "os_skip_agent_inject_ssh", "os_type",
        "traits_required",
    }
)  # fmt: skip

# Older property names Nova still reads, as the standard name they stand for.
LEGACY_IMAGE_PROPERTIES: Mapping[str, str] = {
    "architecture": "hw_architecture",
    "owner_id": "img_owner_id",
    "vmware_disktype": "hw_disk_type",
    "vmware_image_version": "img_version",
    "vmware_ostype": "os_distro",
    "auto_disk_config": "hw_auto_disk_config",
    "ipxe_boot": "hw_ipxe_boot",
    "xenapi_device_id": "hw_device_id",
    "xenapi_image_compression_level": "img_compression_level",
    "vmware_linked_clone": "img_linked_clone",
    "xenapi_use_agent": "img_use_agent",
    "xenapi_skip_agent_inject_ssh": "os_skip_agent_inject_ssh",
    "xenapi_skip_agent_inject_files_at_boot": "os_skip_agent_inject_files_at_boot",
    "cache_in_nova": "img_cache_in_nova",
    "vm_mode": "hw_vm_mode",
    "bittorrent": "img_bittorrent",
    "mappings": "img_mappings",
    "block_device_mapping": "img_block_device_mapping",
    "bdm_v2": "img_bdm_v2",
    "root_device_name": "img_root_device_name",
    "hypervisor_version_requires": "img_hv_requested_version",
    "hypervisor_type": "img_hv_type",
}


def canonical_architecture(name: str) -> str:
    """Nova's spelling of a CPU architecture: lower case, i386/i486/i586/x86_32 -> i686, amd64 -> x86_64."""
    name = name.lower()
    if name in ("i386", "i486", "i586", "x86_32", "x86_32p"):
        return "i686"
    return "x86_64" if name == "amd64" else name


def canonical_hv_type(name: str) -> str:
    """Nova's spelling of a virtualization type: lower case, xapi -> xen."""
    name = name.lower()
    return "xen" if name == "xapi" else name


def canonical_vm_mode(name: str) -> str:
    """Nova's spelling of a VM mode: lower case, pv -> xen, hv -> hvm, baremetal -> hvm."""
    name = name.lower()
    return {"pv": "xen", "hv": "hvm", "baremetal": "hvm"}.get(name, name)


_CANONICAL = {
    "hw_architecture": canonical_architecture,
    "img_hv_type": canonical_hv_type,
    "hw_vm_mode": canonical_vm_mode,
}


def image_properties(image: ImageSpec | None) -> dict[str, str]:
    """The image's standard properties as Nova's ImageMetaProps holds them:
    legacy names read as their standard name (the standard name wins when
    both are set), other properties dropped, and architecture, hypervisor
    type and VM mode in their canonical spelling."""
    if image is None:
        return {}
    props = {LEGACY_IMAGE_PROPERTIES[k]: v for k, v in image.properties.items() if k in LEGACY_IMAGE_PROPERTIES}
    props.update((k, v) for k, v in image.properties.items() if k in STANDARD_IMAGE_PROPERTIES)
    return {k: _CANONICAL[k](v) if k in _CANONICAL else v for k, v in props.items()}


# --- Filters -----------------------------------------------------------------


class ComputeFilter(HostFilter):
    """The host's compute service must be enabled and up."""

    reads_flavor = False

    name = "ComputeFilter"
    run_filter_once_per_request = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if host.service_disabled:
            why = host.disabled_reason or "no reason given"
            return f"host {host.host}'s compute service is disabled ({why}); enable it to schedule servers there"
        if not host.service_up:
            return f"host {host.host}'s compute service is down (not heard from recently); check nova-compute there"
        return None


_EXTRA_SPECS_SCOPE = "aggregate_instance_extra_specs"


class AggregateInstanceExtraSpecsFilter(HostFilter):
    """Each flavor extra spec scoped ``aggregate_instance_extra_specs:<key>``,
    or unscoped, must be matched by at least one of the host's aggregate
    values for ``<key>`` (comma-split), with the operator grammar. Extra
    specs of other scopes (``hw:``, ``resources:``, ...) are not its business."""

    name = "AggregateInstanceExtraSpecsFilter"
    run_filter_once_per_request = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        flavor = spec.flavor
        if not flavor.extra_specs:
            return None
        values_by_key = metadata.metadata_by_host(host)
        for spec_key, requirement in flavor.extra_specs.items():
            scope, scoped, key = spec_key.partition(":")
            if not scoped:
                key = spec_key
            elif scope != _EXTRA_SPECS_SCOPE:
                continue
            values = values_by_key.get(key, set())
            problem = self._mismatch(values, requirement) if values else None
            if values and problem is None:
                continue
            wanted = f"{key} {requirement}" if operators.operator_of(requirement) else f"{key}={requirement}"
            lead = f"flavor {flavor.name} requires {wanted} ({spec_key}); host {host.host}"
            if not values:
                return f"{lead} is in no aggregate with key {key}"
            aggregates = _listing(metadata.aggregates_with_key(host, key))
            return f"{lead}'s aggregates {aggregates} give {key}={_listing(values)}{problem}"
        return None

    @staticmethod
    def _mismatch(values: set[str], requirement: str) -> str | None:
        """None when some value matches; else "" or the comparison error, as
        a tail for the reason. A value the grammar cannot compare does not
        stop another value from matching."""
        errors = []
        for value in sorted(values):
            try:
                if operators.match(value, requirement):
                    return None
            except operators.SchedulingInputError as error:
                errors.append(str(error))
        return f", which cannot be compared: {errors[0]}" if errors else ""


_TENANT_KEY_PREFIX = "filter_tenant_id"


class AggregateMultiTenancyIsolation(HostFilter):
    """A host in aggregates whose keys start with ``filter_tenant_id`` takes
    only the projects listed there (comma lists allowed). Hosts outside such
    aggregates take every project."""

    reads_flavor = False

    name = "AggregateMultiTenancyIsolation"
    run_filter_once_per_request = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        allowed: set[str] = set()
        for key, values in metadata.metadata_by_host(host).items():
            if key.startswith(_TENANT_KEY_PREFIX):
                allowed |= values
        if not allowed or spec.project_id in allowed:
            return None
        isolating = [a.name for a in host.aggregates if any(k.startswith(_TENANT_KEY_PREFIX) for k in a.metadata)]
        return (
            f"project {spec.project_id} may not use host {host.host}: its aggregates {_listing(isolating)} "
            f"admit only projects {_listing(allowed)} ({_TENANT_KEY_PREFIX}*)"
        )


class AggregateImagePropertiesIsolation(HostFilter):
    """For each aggregate key that is a standard image property set on the
    image, the image's value must be among the host's (comma-split) values.
    Keys that are not standard properties, or that the image lacks, are
    ignored: an image without the property passes (a gap Nova has too).

    With AGGREGATE_IMAGE_PROPERTIES_ISOLATION_NAMESPACE set, only keys that
    start with namespace + separator count (the key is still compared whole,
    so the namespace restricts, it is not stripped); the option is deprecated
    and using it logs a warning."""

    reads_flavor = False

    name = "AggregateImagePropertiesIsolation"
    run_filter_once_per_request = True
    run_on_rebuild = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        namespace = settings.AGGREGATE_IMAGE_PROPERTIES_ISOLATION_NAMESPACE
        prefix = namespace + settings.AGGREGATE_IMAGE_PROPERTIES_ISOLATION_SEPARATOR if namespace else ""
        if namespace:
            LOG.warning(
                "AGGREGATE_IMAGE_PROPERTIES_ISOLATION_NAMESPACE is deprecated: filtering on arbitrary image "
                "properties is no longer possible; consider ENABLE_ISOLATED_AGGREGATE_FILTERING instead"
            )
        image = spec.image
        if image is None:
            return None
        # Only standard properties count: most hosts' keys are none of them.
        values_by_key = metadata.metadata_by_host(host)
        keys = [k for k in values_by_key if k in STANDARD_IMAGE_PROPERTIES and k.startswith(prefix)]
        if not keys:
            return None
        props = image_properties(image)
        for key in sorted(keys):
            allowed = values_by_key[key]
            if not props.get(key):
                continue
            if str(props[key]) not in allowed:
                return (
                    f"{_image_name(image)} has {key}={props[key]} but host {host.host}'s aggregates "
                    f"{_listing(metadata.aggregates_with_key(host, key))} allow only {key}={_listing(allowed)}"
                )
        return None


class _CountLimitFilter(HostFilter):
    """A host passes while one of its counters is below a limit: a setting,
    or (per-aggregate variant) the smallest aggregate value of the setting's
    key, falling back to the setting."""

    reads_flavor = False

    key: ClassVar[str]  # Nova's option name, also the aggregate metadata key
    counted: ClassVar[str]  # what the counter counts, for the reason
    per_aggregate: ClassVar[bool] = False

    def limit(self, host: HostState) -> tuple[int, list[str]]:
        """The host's limit, and the aggregates it comes from (none: the setting)."""
        default = int(getattr(settings, self.key.upper()))
        aggregates = metadata.aggregates_with_key(host, self.key) if self.per_aggregate else []
        return (int(metadata.numeric_value(host, self.key, default, cast=int)) if aggregates else default), aggregates

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        limit, aggregates = self.limit(host)
        count = getattr(host, self.counter)
        if count < limit:
            return None
        source = f"{self.key} of aggregates {_listing(aggregates)}" if aggregates else f"setting {self.key.upper()}"
        return f"host {host.host} has {count} {self.counted}, at or over its limit of {limit} ({source})"


class IoOpsFilter(_CountLimitFilter):
    name = "IoOpsFilter"
    key = "max_io_ops_per_host"
    counter = "num_io_ops"
    counted = "I/O-heavy operations in progress"


class AggregateIoOpsFilter(IoOpsFilter):
    name = "AggregateIoOpsFilter"
    per_aggregate = True


class NumInstancesFilter(_CountLimitFilter):
    name = "NumInstancesFilter"
    key = "max_instances_per_host"
    counter = "num_instances"
    counted = "servers"


class AggregateNumInstancesFilter(NumInstancesFilter):
    name = "AggregateNumInstancesFilter"
    per_aggregate = True


class AggregateTypeAffinityFilter(HostFilter):
    """Aggregates with ``instance_type`` (a comma list of flavor names) take
    only those flavors. A host none of whose aggregates has the key takes any
    flavor; otherwise the flavor must be listed by at least one of them."""

    name = "AggregateTypeAffinityFilter"
    run_filter_once_per_request = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        # The comma-split values of every aggregate's instance_type, worked out once per host.
        listed = metadata.metadata_by_host(host).get("instance_type")
        if listed is None or spec.flavor.name in listed:
            return None
        return (
            f"flavor {spec.flavor.name} is not in the instance_type list of host {host.host}'s aggregates "
            f"{_listing(metadata.aggregates_with_key(host, 'instance_type'))} ({_listing(listed)})"
        )


_VERSION_PREDICATE = re.compile(r"^\s*(<=|>=|<|>|!=|==)\s*(\d+(?:\.\d+)*)\s*$")


def _version_parts(version: int) -> tuple[int, int, int]:
    return (version // 1_000_000, version // 1000 % 1000, version % 1000)


def _version_satisfies(version: int, predicates: str) -> bool:
    """Whether a hypervisor version (Nova's integer, 6002000 = 6.2.0)
    satisfies comma-separated predicates such as ">= 6.0, < 8". Raises
    ValueError for a predicate it cannot read."""
    have = _version_parts(version)
    compare = {"<=": tuple.__le__, ">=": tuple.__ge__, "<": tuple.__lt__, ">": tuple.__gt__}
    compare |= {"!=": tuple.__ne__, "==": tuple.__eq__}
    for predicate in predicates.split(","):
        found = _VERSION_PREDICATE.match(predicate)
        if not found:
            raise ValueError(predicate)
        want = tuple(int(part) for part in found.group(2).split("."))
        want = (want + (0, 0, 0))[:3]
        if not compare[found.group(1)](have, want):
            return False
    return True


# Virtualization types a hypervisor (as the host reports it) can run guests as.
_HOST_HV_TYPES: Mapping[str, frozenset[str]] = {
    "qemu": frozenset({"qemu", "kvm"}),
    "kvm": frozenset({"qemu", "kvm"}),
    "ironic": frozenset({"baremetal"}),
    "vmware vcenter server": frozenset({"vmware"}),
}
# VM modes of a hypervisor's guests; everything else runs full virtualization.
_HOST_VM_MODES: Mapping[str, frozenset[str]] = {"lxc": frozenset({"exe"}), "uml": frozenset({"uml"})}


# The image properties ImagePropertiesFilter reads, under their standard and older names.
_HOST_SUPPORT = frozenset({"hw_architecture", "img_hv_type", "hw_vm_mode", "img_hv_requested_version"})
_HOST_SUPPORT_PROPERTIES = _HOST_SUPPORT | {old for old, new in LEGACY_IMAGE_PROPERTIES.items() if new in _HOST_SUPPORT}


class ImagePropertiesFilter(HostFilter):
    """The image's architecture (``hw_architecture``), virtualization type
    (``img_hv_type``), VM mode (``hw_vm_mode``) and requested hypervisor
    version (``img_hv_requested_version``) must be ones the host supports.
    An image setting none of them fits every host."""

    reads_flavor = False

    name = "ImagePropertiesFilter"
    run_filter_once_per_request = True
    run_on_rebuild = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if spec.image is None or _HOST_SUPPORT_PROPERTIES.isdisjoint(spec.image.properties):
            return None  # an image setting none of them fits every host
        props = image_properties(spec.image)
        hypervisor = host.hypervisor_type.lower()
        offered = {
            "hw_architecture": frozenset({canonical_architecture(host.cpu_arch)}),
            "img_hv_type": _HOST_HV_TYPES.get(hypervisor, frozenset({canonical_hv_type(hypervisor)})),
            "hw_vm_mode": _HOST_VM_MODES.get(hypervisor, frozenset({"hvm"})),
        }
        for key, supported in offered.items():
            if props.get(key) and props[key] not in supported:
                return (
                    f"{_image_name(spec.image)} has {key}={props[key]} but host {host.host} "
                    f"({host.hypervisor_type} on {host.cpu_arch}) supports only {_listing(supported)}"
                )
        return self._version_mismatch(host, spec.image, props.get("img_hv_requested_version", ""))

    @staticmethod
    def _version_mismatch(host: HostState, image: ImageSpec, wanted: str) -> str | None:
        if not (wanted and host.hypervisor_version):
            return None
        lead = f"{_image_name(image)} has img_hv_requested_version={wanted!r}"
        try:
            if _version_satisfies(host.hypervisor_version, wanted):
                return None
        except ValueError:
            return f"{lead}, which is not a version predicate such as '>= 6.0' (host {host.host})"
        version = ".".join(str(part) for part in _version_parts(host.hypervisor_version))
        return f"{lead} but host {host.host} runs {host.hypervisor_type} {version}"


class SameHostFilter(HostFilter):
    """With a ``same_host`` hint, only the hosts named there qualify."""

    reads_flavor = False

    name = "SameHostFilter"
    run_filter_once_per_request = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if not spec.same_host or host.host in spec.same_host:
            return None
        return f"host {host.host} is not one of the hosts the same_host hint names ({_listing(spec.same_host)})"


class DifferentHostFilter(HostFilter):
    """With a ``different_host`` hint, the hosts named there are excluded."""

    reads_flavor = False

    name = "DifferentHostFilter"
    run_filter_once_per_request = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if host.host not in spec.different_host:
            return None
        return f"host {host.host} is among the hosts the different_host hint excludes ({_listing(spec.different_host)})"


@dataclass(frozen=True)
class AddressChoice:
    """Whether a host can give a server the addresses it needs: why not
    (None: it can), and the pool (uuid) each new address would come from,
    in need order (an address kept in the server's own pool takes none)."""

    refusal: str | None
    pools: tuple[str, ...] = ()


def address_choice(need: AddressNeed, host: HostState, spent: Mapping[str, int] | None = None) -> AddressChoice:
    """The one address rule of the scheduler and of plans: for each address
    ``need`` asks for, a pool serving ``host`` (its own pool for a moved
    server, kept without a free address), else the first pool by name with
    a free address (as ``addressing`` takes them), its free count less what
    ``spent`` (pool uuid -> addresses) already gave others of a plan."""
    spent = spent or {}
    aggregate_uuids = frozenset(a.uuid for a in host.aggregates)
    taking: list[str] = []
    for what, pools in need.groups:
        serving = sorted((p for p in pools if p.serves(host.availability_zone, aggregate_uuids)), key=lambda p: p.name)
        if any(p.uuid in need.keep for p in serving):
            continue
        free = [p for p in serving if p.free - spent.get(p.uuid, 0) - taking.count(p.uuid) > 0]
        if free:
            taking.append(free[0].uuid)
            continue
        names = _listing([p.name for p in pools]) or "none defined"
        if serving:
            full = _listing([p.name for p in serving])
            return AddressChoice(
                f"host {host.host} needs {what}, but the pools serving it ({full}) have no free address"
            )
        return AddressChoice(
            f"host {host.host} (zone {host.availability_zone}) needs {what}, but no pool that could give it "
            f"serves this host (pools: {names})"
        )
    return AddressChoice(None, tuple(taking))


class AddressPoolFilter(HostFilter):
    """Corral's own, always run: the host must be served by an address pool
    with a free address for each address the server needs (its own pools
    serve a moved server without one): ``address_choice``."""

    reads_flavor = False

    name = "AddressPoolFilter"

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if spec.addressing is None:
            return None
        return address_choice(spec.addressing, host).refusal


def group_refusal(group: GroupSpec, host: str) -> str | None:
    """Why ``host`` may not take a member of ``group`` under its hard policy
    (None: it may; soft policies only weigh). The one rule of the filters
    and of the admission a boot or move takes under the group's lock."""
    if group.policy == "anti-affinity":
        on_host = sorted(group.members_on(host))
        if len(on_host) < group.max_server_per_host:
            return None
        if group.max_server_per_host == 1:
            return f"host {host} already runs member {on_host[0]} of anti-affinity group {group.name}"
        return (
            f"host {host} already runs {len(on_host)} members of anti-affinity group {group.name} "
            f"({', '.join(on_host)}), its max_server_per_host is {group.max_server_per_host}"
        )
    if group.policy == "affinity":
        hosts = group.hosts()
        if not hosts or host in hosts:
            return None
        return f"host {host} runs no member of affinity group {group.name}, whose members are on {_listing(hosts)}"
    return None


class ServerGroupAntiAffinityFilter(HostFilter):
    """A member of an anti-affinity group goes to a host running fewer than
    max_server_per_host (default 1) of its members."""

    reads_flavor = False

    name = "ServerGroupAntiAffinityFilter"
    policy = "anti-affinity"

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if spec.group is None or spec.group.policy != self.policy:
            return None
        return group_refusal(spec.group, host.host)


class ServerGroupAffinityFilter(HostFilter):
    """A member of an affinity group goes to a host running its members
    (any host while none is placed)."""

    reads_flavor = False

    name = "ServerGroupAffinityFilter"
    policy = "affinity"
    judges_every_host_again = True

    def host_passes(self, host: HostState, spec: RequestSpec) -> str | None:
        if spec.group is None or spec.group.policy != self.policy:
            return None
        return group_refusal(spec.group, host.host)


# Run after the configured filters, whatever ENABLED_FILTERS says.
ALWAYS_RUN: tuple[type[HostFilter], ...] = (AddressPoolFilter,)


FILTERS: dict[str, type[HostFilter]] = {
    cls.name: cls
    for cls in (
        ComputeFilter,
        AggregateInstanceExtraSpecsFilter,
        AggregateMultiTenancyIsolation,
        AggregateImagePropertiesIsolation,
        AggregateIoOpsFilter,
        AggregateNumInstancesFilter,
        AggregateTypeAffinityFilter,
        ImagePropertiesFilter,
        SameHostFilter,
        DifferentHostFilter,
        ServerGroupAntiAffinityFilter,
        ServerGroupAffinityFilter,
        IoOpsFilter,
        NumInstancesFilter,
    )
}


def enabled_filters(names: list[str]) -> list[HostFilter]:
    """The filters named (Nova's class names), in that order."""
    unknown = [name for name in names if name not in FILTERS]
    if unknown:
        raise ImproperlyConfigured(
            f"Unknown host filter {unknown[0]!r} in ENABLED_FILTERS; known filters: {_listing(set(FILTERS))}"
        )
    return [FILTERS[name]() for name in names]


def always_run() -> list[HostFilter]:
    """The filters run whatever ENABLED_FILTERS says (``ALWAYS_RUN``)."""
    return [cls() for cls in ALWAYS_RUN]


def filters_to_run(names: list[str]) -> list[HostFilter]:
    """The filters named, then those always run (``ALWAYS_RUN``)."""
    return enabled_filters(names) + always_run()
