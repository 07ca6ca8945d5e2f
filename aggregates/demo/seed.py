"""The demo cloud that ``manage.py seed_demo`` loads: three zones, nine
aggregates, 46 compute hosts, a dozen flavors, two images, three address
pools, and users to log in with.

Everything goes through the service functions, as an operator's clicks
would, so the audit log of a fresh demo shows how the cloud was built.
Seeding is idempotent: what exists already is left as it is.
"""

import time
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from aggregates.addressing import services as addressing
from aggregates.addressing.models import AddressPool
from aggregates.flavors import services as flavor_services
from aggregates.flavors.models import Flavor
from aggregates.host_aggregates import services
from aggregates.host_aggregates.models import Aggregate
from aggregates.hosts import services as host_services
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity import services as identity
from aggregates.identity.caller import ADMIN, MEMBER, READER, Caller
from aggregates.images import services as image_services
from aggregates.images.models import Image
from aggregates.server_groups import services as server_groups
from aggregates.server_groups.models import ServerGroup
from aggregates.servers import services as servers

DEMO_PASSWORD = "corral-demo"

# Fixed ids so that tenant-isolation metadata points at real projects.
PROJECTS = [
    ("admin", "f0c1a6e2a4d94d7c9c1b6a3c2e5d7f01", "Cloud administrators"),
    ("demo", "3b9e1f5c7a2d4e6f8a0b1c2d3e4f5a6b", "The demo project"),
    ("acme", "a1c3e5f7092b4d6f8e0a2c4e6a8b0d1f", "Tenant with its own isolated hosts"),
    ("globex", "9d8c7b6a5f4e4d3c2b1a0f9e8d7c6b5a", "Another tenant"),
]

USERS = [
    # username, role, project, superuser (console admin)
    ("admin", ADMIN, "admin", True),
    ("reader", READER, "admin", False),
    ("demo", MEMBER, "demo", False),
]

ZONES = ["az1", "az2", "az3"]


def _hosts() -> list[dict[str, Any]]:
    """46 hosts: 14 per zone (in each zone some are SSD, the last four of az3
    have GPUs) and four new hosts, node1 to node4, in no zone aggregate yet:
    they fall in the default zone until an operator places them."""
    hosts: list[dict[str, Any]] = []
    for zone_index, zone in enumerate(ZONES):
        for n in range(1, 15):
            name = f"cmp-{zone}-{n:02d}"
            gpu = zone == "az3" and n > 10
            big = n in (13, 14) and not gpu
            hosts.append(
                {
                    "host": name,
                    "zone": zone,
                    "ssd": n % 3 == 0 or gpu,
                    "gpu": gpu,
                    "highmem": big,
                    "vcpus": 64 if (gpu or big) else 32,
                    "memory_mb": 524288 if big else (262144 if gpu else 131072),
                    "local_gb": 3800 if n % 3 == 0 else 1800,
                    "host_ip": f"10.{zone_index + 1}.0.{n + 10}",
                    "running_vms": (n * 7 + zone_index * 3) % 11,
                }
            )
    for n in range(1, 5):
        hosts.append(
            {
                "host": f"node{n}",
                "zone": None,
                "ssd": False,
                "gpu": False,
                "highmem": False,
                "vcpus": 32,
                "memory_mb": 131072,
                "local_gb": 1800,
                "host_ip": f"10.9.0.{n + 10}",
                "running_vms": 0,
            }
        )
    return hosts


HOSTS = _hosts()
ACME_HOSTS = ["cmp-az2-11", "cmp-az2-12"]
DISABLED_HOSTS = {"cmp-az1-07": "Replacing a failed DIMM", "cmp-az2-05": "Firmware upgrade"}
DOWN_HOSTS = {"cmp-az3-02"}  # its agent stops reporting: the console shows it down

AGGREGATES = [
    # name, zone, metadata, host predicate
    ("az1-general", "az1", {}, lambda h: h["zone"] == "az1"),
    ("az2-general", "az2", {}, lambda h: h["zone"] == "az2" and h["host"] not in ACME_HOSTS),
    ("az3-general", "az3", {}, lambda h: h["zone"] == "az3" and not h["gpu"]),
    ("ssd-tier", None, {"ssd": "true"}, lambda h: h["ssd"]),
    ("gpu-nodes", "az3", {"gpu": "true", "trait:CUSTOM_GPU": "required"}, lambda h: h["gpu"]),
    ("highmem", None, {"highmem": "true", "ram_weight_multiplier": "2.0"}, lambda h: h["highmem"]),
    ("acme-dedicated", "az2", {"filter_tenant_id": PROJECTS[2][1]}, lambda h: h["host"] in ACME_HOSTS),
    (
        "io-limited",
        None,
        {"max_io_ops_per_host": "4", "max_instances_per_host": "20"},
        lambda h: h["zone"] == "az1" and int(h["host"][-2:]) <= 4,
    ),
    (
        "windows-licensed",
        None,
        {"os_distro": "windows", "instance_type": "m1.large,m1.xlarge,win.large"},
        lambda h: h["zone"] == "az2" and int(h["host"][-2:]) in (1, 2, 3),
    ),
]

ADDRESS_POOLS = [
    # name, CIDR, gateway, kind, scope, zone, aggregate. Every host is served
    # by "private"; the GPU hosts take their fixed addresses from their own
    # aggregate's pool first; "public" gives floating addresses (the demo
    # turns AUTO_ASSIGN_FLOATING_IP on: openstacksdk's and Ansible's defaults
    # want an external address).
    ("gpu-net", "10.50.0.0/24", "10.50.0.1", AddressPool.INTERNAL, AddressPool.AGGREGATE, None, "gpu-nodes"),
    ("private", "10.0.0.0/20", "10.0.0.1", AddressPool.INTERNAL, AddressPool.GLOBAL, None, None),
    ("public", "203.0.113.0/24", "203.0.113.1", AddressPool.EXTERNAL, AddressPool.GLOBAL, None, None),
]

FLAVORS = [
    # name, flavorid, ram, vcpus, disk, extra specs, public
    ("m1.tiny", "1", 512, 1, 1, {}, True),
    ("m1.small", "2", 2048, 1, 20, {}, True),
    ("m1.medium", "3", 4096, 2, 40, {}, True),
    ("m1.large", "4", 8192, 4, 80, {}, True),
    ("m1.xlarge", "5", 16384, 8, 160, {}, True),
    ("ssd.medium", "ssd.medium", 4096, 2, 40, {"aggregate_instance_extra_specs:ssd": "true"}, True),
    (
        "ssd.xlarge",
        "ssd.xlarge",
        16384,
        8,
        160,
        {"aggregate_instance_extra_specs:ssd": "true", "hw:cpu_policy": "dedicated"},
        True,
    ),
    (
        "gpu.large",
        "gpu.large",
        32768,
        8,
        200,
        {"aggregate_instance_extra_specs:gpu": "true", "trait:CUSTOM_GPU": "required"},
        True,
    ),
    ("mem.2xlarge", "mem.2xlarge", 131072, 16, 200, {"aggregate_instance_extra_specs:highmem": "true"}, True),
    (
        "hpc.dedicated",
        "hpc.dedicated",
        65536,
        32,
        100,
        {"hw:cpu_policy": "dedicated", "hw:mem_page_size": "large", "hw:numa_nodes": "2"},
        True,
    ),
    ("win.large", "win.large", 8192, 4, 80, {"aggregate_instance_extra_specs:os_distro": "windows"}, True),
    ("acme.private", "acme.private", 8192, 4, 80, {}, False),
]


def seed(out: Callable[[str], object] = print, servers: bool = True) -> list[tuple[str, str]]:
    """Load the demo cloud; returns a list of (what, name) created this time.
    ``servers=False`` leaves out the servers (``seed_servers``), which need
    the hosts' placement providers: for a caller that applies the placement
    requests of the seeding afterwards."""
    caller = Caller.system("seed_demo")
    created: list[tuple[str, str]] = []
    with transaction.atomic():
        created += _seed_identity()
    for host in HOSTS:
        if not Service.objects.filter(host=host["host"], binary=Service.COMPUTE).exists():
            host_services.register_host(
                caller,
                host["host"],
                vcpus=host["vcpus"],
                memory_mb=host["memory_mb"],
                local_gb=host["local_gb"],
                host_ip=host["host_ip"],
                hypervisor_type="QEMU",
                hypervisor_version=8002000,
                running_vms=0,
                uptime=demo_uptime(),
            )
            created.append(("host", host["host"]))
    created += _seed_control_plane()
    for host_name, reason in DISABLED_HOSTS.items():
        service = Service.objects.get(host=host_name, binary=Service.COMPUTE)
        if not service.disabled and ("host", host_name) in created:
            host_services.update_service(caller, service.uuid, status="disabled", disabled_reason=reason)
    for name, zone, metadata, member in AGGREGATES:
        if Aggregate.objects.filter(name=name).exists():
            continue
        aggregate = services.create_aggregate(caller, name, zone)
        if metadata:
            services.set_metadata(caller, aggregate.id, metadata)
        for host in HOSTS:
            if member(host):
                services.add_host(caller, aggregate.id, host["host"])
        created.append(("aggregate", name))
    created += _seed_flavors(caller)
    created += _seed_images(caller)
    created += _seed_address_pools(caller)
    # Instances arrive once the hosts are in their zones (a host with
    # instances cannot change zone), as the agents report them.
    for host in HOSTS:
        if ("host", host["host"]) in created:
            host_services.register_host(
                caller,
                host["host"],
                vcpus=host["vcpus"],
                memory_mb=host["memory_mb"],
                local_gb=host["local_gb"],
                running_vms=host["running_vms"],
            )
    if servers:
        created += _seed_server_group()
    for what, name in created:
        out(f"created {what} {name}")
    return created


def seed_servers(out: Callable[[str], object] = print) -> list[tuple[str, str]]:
    """The demo's servers (its server group's members), once the hosts'
    placement providers exist; nothing when they were seeded before."""
    created = _seed_server_group()
    for what, name in created:
        out(f"created {what} {name}")
    return created


def _seed_identity() -> list[tuple[str, str]]:
    created: list[tuple[str, str]] = []
    projects = {}
    for name, project_id, description in PROJECTS:
        projects[name] = identity.ensure_project(name, description, project_id)
    users = get_user_model().objects
    for username, role, project, superuser in USERS:
        if users.filter(username=username).exists():
            continue
        # Only admins and readers are staff: the member ``demo`` is not let into /admin/.
        user = users.create_user(
            username=username, password=DEMO_PASSWORD, is_staff=role in (ADMIN, READER), is_superuser=superuser
        )
        identity.grant(user, projects[project], role)
        if role == ADMIN:
            identity.grant(user, projects["demo"], ADMIN)
        created.append(("user", username))
    return created


CONTROLLER = "controller-1"
CONTROL_PLANE_BINARIES = ("nova-scheduler", "nova-conductor")


def _seed_control_plane() -> list[tuple[str, str]]:
    """Non-compute services: they fall in the internal zone."""
    created: list[tuple[str, str]] = []
    for binary in CONTROL_PLANE_BINARIES:
        _, new = Service.objects.get_or_create(
            host=CONTROLLER, binary=binary, defaults={"topic": binary.split("-", 1)[1], "last_seen_up": timezone.now()}
        )
        if new:
            created.append(("service", f"{binary} on controller-1"))
    return created


def _seed_address_pools(caller: Caller) -> list[tuple[str, str]]:
    created: list[tuple[str, str]] = []
    for name, cidr, gateway, kind, scope, zone, aggregate in ADDRESS_POOLS:
        if AddressPool.objects.filter(name=name).exists():
            continue
        addressing.create_pool(
            caller, name=name, cidr=cidr, gateway=gateway, kind=kind, scope=scope, zone=zone, aggregate=aggregate
        )
        created.append(("address pool", name))
    return created


# An anti-affinity group of the demo project with its members booted into
# it (so the console's server-group pages show a group, its members and
# their hosts on a fresh demo): name, policy, the members' names.
SERVER_GROUP = ("web", "anti-affinity", ("web-1", "web-2", "web-3"))
SERVER_GROUP_FLAVOR = "m1.tiny"
SERVER_GROUP_IMAGE = "demo-linux"


def _seed_server_group() -> list[tuple[str, str]]:
    """The demo user's group and its members, booted as that user would
    (``networks: auto``, the ``group`` hint): each lands on a host of its
    own, with an address. Seeded once: not again when the group exists."""
    name, policy, members = SERVER_GROUP
    project_id = PROJECTS[1][1]
    if ServerGroup.objects.filter(project_id=project_id, name=name).exists():
        return []
    user = get_user_model().objects.get(username="demo")
    caller = Caller(user=user, username=user.username, project_id=project_id, roles=frozenset({MEMBER}))
    group = server_groups.create_group(caller, name, policy).group
    flavor = Flavor.objects.get(name=SERVER_GROUP_FLAVOR)
    image = Image.objects.get(name=SERVER_GROUP_IMAGE)
    created = [("server group", name)]
    for member in members:
        servers.create_servers(
            caller,
            name=member,
            flavor_ref=flavor.flavorid,
            image_ref=str(image.id),
            networks="auto",
            scheduler_hints={"group": str(group.uuid)},
        )
        created.append(("server", member))
    return created


def _seed_flavors(caller: Caller) -> list[tuple[str, str]]:
    created: list[tuple[str, str]] = []
    for name, flavorid, ram, vcpus, disk, extra_specs, public in FLAVORS:
        if Flavor.objects.filter(name=name).exists():
            continue
        flavor = flavor_services.create_flavor(
            caller, name=name, flavorid=flavorid, ram=ram, vcpus=vcpus, disk=disk, is_public=public
        )
        if extra_specs:
            flavor_services.set_extra_specs(caller, flavor.flavorid, extra_specs)
        if not public:
            flavor_services.add_tenant_access(caller, flavor.flavorid, PROJECTS[2][1])
        created.append(("flavor", name))
    return created


# Public images to boot and pre-cache: placeholder data (not a bootable
# disk: no hypervisor runs here), and properties that meet the
# windows-licensed aggregate's os_distro isolation.
IMAGES = [
    # name, disk format, properties
    ("demo-linux", "raw", {"os_distro": "ubuntu", "os_type": "linux", "hw_architecture": "x86_64"}),
    ("demo-windows", "raw", {"os_distro": "windows", "os_type": "windows", "hw_architecture": "x86_64"}),
]
IMAGE_BYTES = 256 * 1024


def _seed_images(caller: Caller) -> list[tuple[str, str]]:
    created: list[tuple[str, str]] = []
    for name, disk_format, properties in IMAGES:
        if Image.objects.filter(name=name).exists():
            continue
        image = image_services.create_image(
            caller,
            {
                "name": name,
                "disk_format": disk_format,
                "container_format": "bare",
                "visibility": "public",
                **properties,
            },
        )
        pattern = f"{name} placeholder image data\n".encode()
        data = (pattern * (IMAGE_BYTES // len(pattern) + 1))[:IMAGE_BYTES]
        image_services.upload_image_data(caller, str(image.id), [data], expected_size=len(data))
        created.append(("image", name))
    return created


# The demo hosts "booted" when the process started; their agents report an
# uptime in the format of `uptime(1)`, as a libvirt compute agent does.
_BOOTED = time.time() - 3 * 86400


def demo_uptime(now: float | None = None) -> str:
    """What a demo host's agent reports as its uptime (the output of ``uptime``)."""
    now = time.time() if now is None else now
    up = int(now - _BOOTED)
    days, rest = divmod(up, 86400)
    clock = time.strftime("%H:%M:%S", time.gmtime(now))
    return (
        f" {clock} up {days} days, {rest // 3600:2d}:{rest % 3600 // 60:02d},  0 users,  load average: 0.10, 0.08, 0.05"
    )


def heartbeat() -> int:
    """What the demo agents would do every few seconds: report in. The
    compute hosts report their uptime too; the control-plane services (the
    internal zone) report like them. The hosts in DOWN_HOSTS stay silent, so
    the console shows them down."""
    up_hosts = [h["host"] for h in HOSTS if h["host"] not in DOWN_HOSTS]
    count = host_services.heartbeat(up_hosts)
    # Demo stand-ins for agents the demo has no process for: the same writes
    # a real agent's report would make (see docs/operations.md, "Host agents").
    ComputeNode.objects.filter(host__in=up_hosts).update(uptime=demo_uptime())
    now = timezone.now()
    count += Service.objects.filter(host=CONTROLLER, binary__in=CONTROL_PLANE_BINARIES).update(
        last_seen_up=now, updated_at=now, report_count=F("report_count") + 1
    )
    return count
