"""``manage.py register_host``: register (or re-register) a compute host by hand,
as its host agent does through POST /compute/v2.1/os-host-registrations."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aggregates import schema_check
from aggregates.errors import ServiceError
from aggregates.hosts.schemas import REGISTRATION
from aggregates.hosts.services import PROVIDER_OVERRIDES, register_host
from aggregates.identity.caller import Caller


class Command(BaseCommand):
    help = (
        "Register a compute host: its nova-compute service and a compute node with its resources. "
        "Running it again updates the node and counts as a heartbeat."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("host", help="host name of the compute service (letters, digits, '-', '.', '_')")
        parser.add_argument("--node", help="hypervisor hostname of the compute node (default: the host name)")
        parser.add_argument("--vcpus", type=int, required=True, help="number of CPUs")
        parser.add_argument("--memory-mb", type=int, required=True, help="memory in MiB")
        parser.add_argument("--disk-gb", type=int, required=True, help="local disk in GiB")
        parser.add_argument("--hypervisor-type", help="hypervisor type (new nodes default to QEMU)")
        parser.add_argument("--host-ip", help="IPv4 or IPv6 address of the host")
        for name in ("cpu", "ram", "disk"):
            parser.add_argument(
                f"--{name}-allocation-ratio",
                type=float,
                help=f"{name.upper()} allocation ratio of this host's placement inventory "
                f"(default: setting {name.upper()}_ALLOCATION_RATIO)",
            )
        for name, unit in (("cpus", "CPUs"), ("memory_mb", "MiB of memory"), ("disk_mb", "MiB of disk")):
            parser.add_argument(
                f"--reserved-host-{name.replace('_', '-')}",
                type=int,
                help=f"{unit} reserved for the host itself (default: setting RESERVED_HOST_{name.upper()})",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        registration = {
            "host": options["host"],
            "hypervisor_hostname": options["node"],
            "vcpus": options["vcpus"],
            "memory_mb": options["memory_mb"],
            "local_gb": options["disk_gb"],
            "hypervisor_type": options["hypervisor_type"],
            "host_ip": options["host_ip"],
            **{name: options[name] for name in PROVIDER_OVERRIDES},
        }
        registration = {key: value for key, value in registration.items() if value is not None}
        try:
            schema_check.check({"registration": registration}, REGISTRATION)
            node, created = register_host(
                Caller.system("manage.py register_host"),
                registration.pop("host"),
                registration.pop("hypervisor_hostname", None),
                **registration,
            )
        except ServiceError as exc:
            raise CommandError(exc.message)
        verb = "Registered new" if created else "Updated"
        self.stdout.write(
            f"{verb} compute node {node.hypervisor_hostname} of host {node.host}: uuid {node.uuid}, "
            f"{node.vcpus} vCPUs, {node.memory_mb} MiB RAM, {node.local_gb} GiB disk, "
            f"hypervisor {node.hypervisor_type}, IP {node.host_ip or '-'}."
        )
