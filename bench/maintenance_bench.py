"""Host maintenance benchmark: drain one host of --servers servers in a cloud
of --hosts hosts at --concurrency, and the capacity headroom of an aggregate
of --rack hosts, on PostgreSQL.

    .venv/bin/python bench/maintenance_bench.py --hosts 500 5000 [--servers 100] [--concurrency 8]

For each size, a database of its own (dropped and re-created: the name must
not be test/postgres) is migrated and filled in bulk: N compute hosts (64
vCPU at ratio 4, 256 GiB, 4 TB), each a placement provider; one aggregate
("rack") of the first --rack hosts, mirrored into placement, the drained
host cn00000 among them; --servers servers of 2 VCPU / 4 GiB / 20 GB on
cn00000 and --background servers on each other rack host, each with its
placement allocation.

Measured, in this process with Corral's own placement in process:
- drain: start_maintenance on cn00000, then the job's runner (what the
  Celery task runs) to its end with MAINTENANCE_CONCURRENCY=--concurrency,
  threads each on its own connection; checked: every server moved, onto a
  peer of the rack, cn00000's usage zero;
- headroom (before the drain, cn00000 the most loaded host): capacity_headroom
  of the rack losing 1 and 5 hosts (median of --headrooms runs each).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from databases import recreate, start_django  # bench/databases.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
FLAVOR = {"vcpus": 2, "ram": 4096, "disk": 20, "ephemeral": 0, "swap": 0, "original_name": "m1.medium"}


def run_one(args):
    start_django(args.database_url, MAINTENANCE_CONCURRENCY=str(args.concurrency))
    from django.core.management import call_command
    from django.db.models import F
    from django.utils import timezone

    from aggregates.host_aggregates.models import Aggregate, AggregateHost
    from aggregates.hosts.models import ComputeNode, Service
    from aggregates.identity.caller import Caller
    from aggregates.maintenance import headroom, running, services
    from aggregates.maintenance.models import MaintenanceItem
    from aggregates.placement_client import client
    from aggregates.servers.models import Server
    from placement import models as pm
    from placement.standards import sync_standard_names

    call_command("migrate", verbosity=0)
    sync_standard_names()
    n = args.hosts[0]
    started = time.monotonic()
    now = timezone.now()
    service_rows = Service.objects.bulk_create(
        [Service(host=f"cn{i:05d}", binary="nova-compute", last_seen_up=now) for i in range(n)], batch_size=5000
    )
    nodes = ComputeNode.objects.bulk_create(
        [
            ComputeNode(service=s, host=s.host, hypervisor_hostname=s.host, vcpus=64, memory_mb=262144, local_gb=4000)
            for s in service_rows
        ],
        batch_size=5000,
    )
    providers = pm.ResourceProvider.objects.bulk_create(
        [pm.ResourceProvider(uuid=str(node.uuid), name=node.hypervisor_hostname) for node in nodes], batch_size=5000
    )
    pm.ResourceProvider.objects.update(root_id=F("id"))
    classes = {rc.name: rc for rc in pm.ResourceClass.objects.filter(name__in=["VCPU", "MEMORY_MB", "DISK_GB"])}
    pm.Inventory.objects.bulk_create(
        [
            pm.Inventory(resource_provider=rp, resource_class=classes[name], total=total, allocation_ratio=ratio)
            for rp in providers
            for name, total, ratio in (("VCPU", 64, 4.0), ("MEMORY_MB", 262144, 1.0), ("DISK_GB", 4000, 1.0))
        ],
        batch_size=5000,
    )
    rack = Aggregate.objects.create(name="rack")
    placement_rack = pm.PlacementAggregate.objects.create(uuid=str(rack.uuid))
    members = nodes[: args.rack]
    AggregateHost.objects.bulk_create([AggregateHost(aggregate=rack, host=node.host) for node in members])
    pm.ResourceProviderAggregate.objects.bulk_create(
        [pm.ResourceProviderAggregate(resource_provider=rp, aggregate=placement_rack) for rp in providers[: args.rack]]
    )
    project = pm.Project.objects.create(external_id="bench")
    user = pm.User.objects.create(external_id="bench")
    instance_type, _ = pm.ConsumerType.objects.get_or_create(name="INSTANCE")
    placements = [(members[0], providers[0])] * args.servers
    for node, rp in zip(members[1:], providers[1 : args.rack], strict=True):
        placements += [(node, rp)] * args.background
    servers, consumers = [], []
    for index, (node, _) in enumerate(placements):
        server_uuid = uuid.uuid4()
        servers.append(
            Server(
                uuid=server_uuid,
                name=f"vm{index}",
                project_id="bench",
                user_id="bench",
                flavorid="m1.medium",
                flavor={**FLAVOR, "extra_specs": {}},
                host=node.host,
                node=node.hypervisor_hostname,
                node_uuid=str(node.uuid),
                vm_state=Server.ACTIVE,
                power_state=1,
                launched_at=now,
            )
        )
        consumers.append(pm.Consumer(uuid=str(server_uuid), project=project, user=user, consumer_type=instance_type))
    Server.objects.bulk_create(servers, batch_size=5000)
    consumers = pm.Consumer.objects.bulk_create(consumers, batch_size=5000)
    pm.Allocation.objects.bulk_create(
        [
            pm.Allocation(resource_provider=rp, consumer=consumer, resource_class=classes[name], used=amount)
            for consumer, (_, rp) in zip(consumers, placements, strict=True)
            for name, amount in (("VCPU", 2), ("MEMORY_MB", 4096), ("DISK_GB", 20))
        ],
        batch_size=5000,
    )
    # Rows written directly: the inventories' usage is counted from them.
    from placement.services.allocations import recount_usages

    recount_usages()
    built = time.monotonic() - started

    # Headroom first, while cn00000 carries its servers (the most loaded host).
    headrooms = {}
    for lose in (1, 5):
        runs = []
        for _ in range(args.headrooms):
            t1 = time.perf_counter()
            result = headroom.capacity_headroom(aggregate_id=rack.id, hosts=lose)
            runs.append(time.perf_counter() - t1)
        headrooms[f"lose_{lose}"] = {
            "median_s": round(statistics.median(runs), 3),
            "max_s": round(max(runs), 3),
            "servers_replaced": result.servers,
            "stranded": len(result.stranded),
        }
    # The drain: the request (disable, job, items), then the job's runner.
    system = Caller.system("bench")
    running.dispatch = lambda job_pk: None  # run below, timed, in this process
    t0 = time.perf_counter()
    job = services.start_maintenance(system, "cn00000", reason="bench")
    requested = time.perf_counter() - t0
    running.run_job(job.pk)
    drained = time.perf_counter() - t0
    job.refresh_from_db()
    items = MaintenanceItem.objects.filter(job=job)
    targets = set(items.exclude(target=None).values_list("target", flat=True))
    rack_hosts = {node.host for node in members}
    usage = client().provider_usages(providers[0].uuid)

    return {
        "hosts": n,
        "rack": args.rack,
        "servers_in_cloud": len(servers),
        "build_seconds": round(built, 1),
        "drain": {
            "servers": args.servers,
            "concurrency": args.concurrency,
            "request_s": round(requested, 3),
            "total_s": round(drained, 2),
            "servers_per_second": round(args.servers / drained, 1),
            "status": job.status,
            "moved": items.filter(status="moved").count(),
            "targets": len(targets),
            "all_targets_in_rack": targets <= rack_hosts,
            "source_usage": usage,
        },
        "headroom": headrooms,
        "load_average": os.getloadavg(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--rack", type=int, default=200, help="hosts of the aggregate (drain peers, headroom)")
    parser.add_argument("--servers", type=int, default=100, help="servers on the drained host")
    parser.add_argument("--background", type=int, default=20, help="servers on each other rack host")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--headrooms", type=int, default=3)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/corral_maint_bench")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args)))
        return
    for hosts in args.hosts:
        recreate(args.database_url)
        command = [sys.executable, __file__, "--one", "--hosts", str(hosts)]
        for option in ("rack", "servers", "background", "concurrency", "headrooms"):
            command += [f"--{option}", str(getattr(args, option))]
        command += ["--database-url", args.database_url]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode:
            raise SystemExit(f"the {hosts}-host run failed:\n{run.stderr[-3000:]}")
        print(run.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
