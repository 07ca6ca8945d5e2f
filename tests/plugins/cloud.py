"""The one ``cloud`` fixture: a small cloud for scheduling, server, move and
maintenance tests (and the console pages over them): Corral's own placement
in process, hosts registered as agents do (their providers follow through
the outbox after commit: these tests commit), aggregates mirrored into
placement, flavors with extra specs, active images. And ``cli_body``, the
body the stock CLI sends to boot a server."""

import pytest

from aggregates import placement_client
from aggregates.flavors import services as flavors
from aggregates.host_aggregates import services as aggregates
from aggregates.hosts import services as hosts
from aggregates.hosts.models import Service
from aggregates.identity import service_token
from aggregates.images.models import Image
from placement.standards import sync_standard_names

# Registration fields that make a host's capacity exactly its size (no
# overcommit, nothing reserved), for hand-computed headroom cases.
EXACT = {
    "cpu_allocation_ratio": 1.0,
    "ram_allocation_ratio": 1.0,
    "disk_allocation_ratio": 1.0,
    "reserved_host_cpus": 0,
    "reserved_host_memory_mb": 0,
    "reserved_host_disk_mb": 0,
}


def own_placement(settings, monkeypatch):
    """Corral's own placement in process, read with a freshly issued service token."""
    settings.PLACEMENT_URL, settings.AUTH_STRATEGY, settings.PLACEMENT_AUTH_TOKEN = "", "keystone", ""
    settings.DEFAULT_SCHEDULE_ZONE = ""
    service_token.forget_service_token()
    sync_standard_names()  # a transactional test starts from empty tables


class Cloud:
    def __init__(self, system, make_host):
        self.system = system
        self.make_host = make_host

    def host(self, name, **resources):
        return self.make_host(name, **resources)

    def hosts(self, *names, **resources):
        return [self.make_host(name, **resources) for name in names]

    def aggregate(self, name, hosts=(), zone=None, **metadata):
        aggregate = aggregates.create_aggregate(self.system, name, zone)
        for host in hosts:
            aggregates.add_host(self.system, aggregate.id, host)
        if metadata:
            aggregates.set_metadata(self.system, aggregate.id, metadata)
        return aggregate

    def zone(self, name, *hosts):
        return self.aggregate(f"agg-{name}", hosts, zone=name)

    def flavor(self, name="m1.small", vcpus=1, ram=512, disk=1, extra_specs=None, **kw):
        flavor = flavors.create_flavor(self.system, name=name, ram=ram, vcpus=vcpus, disk=disk, **kw)
        if extra_specs:
            flavors.set_extra_specs(self.system, flavor.flavorid, extra_specs, validate=False)
        return flavor

    def image(self, name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, owner=None, **fields):
        fields = {"disk_format": "qcow2", "container_format": "bare", "size": 1024, **fields}
        return Image.objects.create(name=name, status=status, visibility=visibility, owner=owner, **fields)

    def disable(self, host, reason="maintenance"):
        service = Service.objects.get(host=host, binary="nova-compute")
        hosts.update_service(self.system, service.uuid, status="disabled", disabled_reason=reason)

    @staticmethod
    def allocations(server_uuid):
        return placement_client.client().consumer_allocations(server_uuid)["allocations"]

    @staticmethod
    def usages(node_uuid):
        return placement_client.client().provider_usages(node_uuid)


@pytest.fixture
def cloud(transactional_db, settings, monkeypatch, system, make_host):
    own_placement(settings, monkeypatch)
    return Cloud(system, make_host)


def cli_body(flavor, image, name="vm1", zone=None, **extra):
    """The body `openstack server create --flavor F --image I [--availability-zone AZ] --nic none` sends."""
    server = {
        "name": name,
        "imageRef": str(image.id),
        "flavorRef": flavor.flavorid,
        "min_count": 1,
        "max_count": 1,
        "networks": "none",
        "block_device_mapping_v2": [
            {
                "uuid": str(image.id),
                "boot_index": 0,
                "source_type": "image",
                "destination_type": "local",
                "delete_on_termination": True,
            }
        ],
    }
    if zone is not None:
        server["availability_zone"] = zone
    server.update(extra)
    return {"server": server}
