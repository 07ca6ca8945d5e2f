"""Scheduling benchmark: one decision (placement query included), one
explanation, and concurrent boots, at several cloud sizes, on PostgreSQL.

    .venv/bin/python bench/scheduler_bench.py --hosts 500 5000 [--aggregates 200]

For each size, a database of its own (dropped and re-created: the name must
not be test/postgres) is migrated and filled in bulk: N compute hosts (64
vCPU at ratio 4, 256 GiB, 4 TB), each a placement provider; ten zone
aggregates (every host in one); the other aggregates with metadata every
aggregate filter reads (ssd, filter_tenant_id, instance_type,
max_instances_per_host, weight multipliers), each host in two of them,
mirrored into placement. Every filter and pre-filter of the issue is on.
With --servers-per-host (17 by default, as a real cloud) every host carries
that many ACTIVE servers (m1.small-sized: 2 vCPU, 4 GiB, 20 GB), each with
its placement consumer and allocations; with --nested-every K every K-th
host has nested providers where Nova makes them: two NUMA-cell-like children
(no inventory of their own, as Nova's libvirt driver reports them when
PCPU/NUMA modelling is off: only the tree shape) and a physical GPU child
with 16 VGPU. Any nested provider switches placement's candidate search to
its tree path, which is what a real cloud pays for.

Measured, in this process with Corral's own placement in process (as the
embedded and all-in-one deployments run it):
- decision: what a boot decides (``engine.decide``, placement's candidates
  only) for a flavor with aggregate_instance_extra_specs:ssd in one zone
  (median, p95 of --decisions runs);
- explain: ``services.explain``, every host's fate, stored (median of --explains runs);
- boots: --concurrency clients booting --boots servers over HTTP (the stock
  CLI's POST /servers, any zone) against gunicorn with --workers processes,
  no broker (each build runs in the request after commit); ACTIVE servers/s,
  the CPU a boot cost the web workers, PostgreSQL's backends and the
  clients (ms, from /proc) with how busy the cores were, and a check that no
  provider is allocated beyond its capacity.
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid as uuid_mod
from pathlib import Path
from urllib.parse import urlsplit

from databases import recreate, start_django  # bench/databases.py, beside this script
from process_cpu import Usage, children, postgres_backends  # bench/process_cpu.py
from shipped_server import threaded_options  # bench/shipped_server.py

ROOT = Path(__file__).resolve().parent.parent
ALL_FILTERS = (
    "ComputeFilter,ImagePropertiesFilter,AggregateInstanceExtraSpecsFilter,AggregateMultiTenancyIsolation,"
    "AggregateImagePropertiesIsolation,AggregateIoOpsFilter,AggregateNumInstancesFilter,AggregateTypeAffinityFilter"
)


def run_one(args):
    start_django(
        args.database_url,
        ENABLED_FILTERS=ALL_FILTERS,
        LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE="true",
        ENABLE_ISOLATED_AGGREGATE_FILTERING="true",
    )
    from django.db import connection

    from aggregates.images.models import Image
    from aggregates.placement_client import client
    from aggregates.quotas.models import ProjectQuota
    from aggregates.scheduling import engine, services
    from aggregates.servers.models import Server

    started = time.monotonic()
    flavor = build_cloud(args.hosts[0], args.aggregates, args)
    built = time.monotonic() - started

    spec = services.request_spec_for(flavor, None, "tenant-x", "bench", availability_zone="az3")
    placement = client()
    engine.decide(spec, placement, full=False)  # warm up
    decisions = []
    for _ in range(args.decisions):
        t0 = time.perf_counter()
        decision = engine.decide(spec, placement, full=False)  # what a boot decides
        engine.pick_order(decision)
        decisions.append(time.perf_counter() - t0)
    explains = []
    for _ in range(args.explains):
        t0 = time.perf_counter()
        services.explain(spec)
        explains.append(time.perf_counter() - t0)

    image = Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    # The boots' project (noauth2's admin) gets limits its --boots never reach: quotas stay checked.
    ProjectQuota.objects.bulk_create(
        [ProjectQuota(project_id="admin", resource=name, hard_limit=10**9) for name in ("instances", "cores", "ram")]
    )
    boots = {}
    for reuse_seconds in sorted({0.0, args.reuse_seconds}) if args.boots > 0 else []:
        before = set(Server.objects.values_list("uuid", flat=True))
        seconds, statuses, cpu = http_boots(args, flavor, image, reuse_seconds)
        booted = Server.objects.exclude(uuid__in=before)
        active = booted.filter(vm_state=Server.ACTIVE).count()
        boots[f"reuse {reuse_seconds:g} s"] = {
            "servers": args.boots,
            "concurrency": args.concurrency,
            "workers": args.workers,
            "threads": args.threads,
            "answers": statuses,
            "active": active,
            "error": booted.filter(vm_state=Server.ERROR).count(),
            "servers_per_second": round(active / seconds, 1),
            "cpu": cpu,
        }
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*) FROM (
              SELECT a.resource_provider_id, a.resource_class_id, sum(a.used) AS used,
                     max((i.total - i.reserved) * i.allocation_ratio) AS capacity
              FROM placement_allocation a JOIN placement_inventory i
                ON i.resource_provider_id = a.resource_provider_id AND i.resource_class_id = a.resource_class_id
              GROUP BY a.resource_provider_id, a.resource_class_id) t
            WHERE used > capacity
            """
        )
        overcommitted = cursor.fetchone()[0]

    def ms(values):
        values = sorted(values)
        return {
            "median_ms": round(statistics.median(values) * 1000, 1),
            # Nearest rank: the smallest value at or above 95 % of them.
            "p95_ms": round(values[max(math.ceil(len(values) * 0.95) - 1, 0)] * 1000, 1),
        }

    return {
        "hosts": args.hosts[0],
        "aggregates": args.aggregates,
        "servers_per_host": args.servers_per_host,
        "nested_every": args.nested_every,
        "build_seconds": round(built, 1),
        "candidates": decision.candidates,
        "decision": ms(decisions),
        "explain": ms(explains),
        "boots": boots,
        "overcommitted_provider_classes": overcommitted,
        "load_average": os.getloadavg(),
    }


def build_cloud(n, aggregate_count, args=None):
    """Migrate this process's database (Django set up) and fill it in bulk:
    n compute hosts (64 vCPU at ratio 4, 256 GiB, 4 TB), each a placement
    provider; ten zone aggregates; the other aggregates with metadata every
    aggregate filter reads, each host in two of them, mirrored into
    placement; with ``args`` (this benchmark's), servers on the hosts and
    nested providers as --servers-per-host and --nested-every say; then
    VACUUM ANALYZE. Returns the ssd.large flavor (its extra spec asks for ssd)."""
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from aggregates.flavors.models import Flavor, FlavorExtraSpec
    from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
    from aggregates.hosts.models import ComputeNode, Service
    from placement import models as pm
    from placement.standards import sync_standard_names

    call_command("migrate", verbosity=0)
    sync_standard_names()
    rng = random.Random(7)
    now = timezone.now()
    services_rows = Service.objects.bulk_create(
        [Service(host=f"cn{i:05d}", binary="nova-compute", last_seen_up=now) for i in range(n)]
    )
    nodes = ComputeNode.objects.bulk_create(
        [
            ComputeNode(service=s, host=s.host, hypervisor_hostname=s.host, vcpus=64, memory_mb=262144, local_gb=4000)
            for s in services_rows
        ]
    )
    providers = pm.ResourceProvider.objects.bulk_create(
        [pm.ResourceProvider(uuid=str(node.uuid), name=node.hypervisor_hostname) for node in nodes]
    )
    pm.ResourceProvider.objects.update(root_id=models_f("id"))
    classes = {rc.name: rc for rc in pm.ResourceClass.objects.filter(name__in=["VCPU", "MEMORY_MB", "DISK_GB"])}
    pm.Inventory.objects.bulk_create(
        [
            pm.Inventory(resource_provider=rp, resource_class=classes[name], total=total, allocation_ratio=ratio)
            for rp in providers
            for name, total, ratio in (("VCPU", 64, 4.0), ("MEMORY_MB", 262144, 1.0), ("DISK_GB", 4000, 1.0))
        ],
        batch_size=5000,
    )
    aggregates = Aggregate.objects.bulk_create([Aggregate(name=f"agg{i:03d}") for i in range(aggregate_count)])
    zones, others = aggregates[:10], aggregates[10:]
    metadata = [AggregateMetadata(aggregate=a, key="availability_zone", value=f"az{i}") for i, a in enumerate(zones)]
    for i, aggregate in enumerate(others):
        metadata.append(AggregateMetadata(aggregate=aggregate, key="ssd", value="true" if i % 2 else "false"))
        if i % 10 == 0:
            metadata.append(AggregateMetadata(aggregate=aggregate, key="filter_tenant_id", value=f"tenant{i}"))
        if i % 7 == 0:
            metadata.append(AggregateMetadata(aggregate=aggregate, key="max_instances_per_host", value="40"))
        if i % 5 == 0:
            metadata.append(AggregateMetadata(aggregate=aggregate, key="ram_weight_multiplier", value="2.0"))
        if i % 13 == 0:
            metadata.append(AggregateMetadata(aggregate=aggregate, key="instance_type", value="m1.small,ssd.large"))
    AggregateMetadata.objects.bulk_create(metadata)
    placement_aggregates = {a.id: pm.PlacementAggregate.objects.create(uuid=str(a.uuid)) for a in aggregates}
    members = []
    for index, node in enumerate(nodes):
        members.append((zones[index % len(zones)], node))
        for aggregate in rng.sample(others, min(2, len(others))):
            members.append((aggregate, node))
    AggregateHost.objects.bulk_create([AggregateHost(aggregate=a, host=node.host) for a, node in members], 5000)
    by_uuid = {rp.uuid: rp for rp in providers}
    pm.ResourceProviderAggregate.objects.bulk_create(
        [
            pm.ResourceProviderAggregate(
                resource_provider=by_uuid[str(node.uuid)], aggregate=placement_aggregates[a.id]
            )
            for a, node in members
        ],
        batch_size=5000,
    )
    if args is not None:
        add_servers(args, nodes, providers, classes, rng)
        add_nested(args, providers)
    flavor = Flavor.objects.create(flavorid="ssd.large", name="ssd.large", vcpus=2, memory_mb=4096, root_gb=20)
    FlavorExtraSpec.objects.create(flavor=flavor, key="aggregate_instance_extra_specs:ssd", value="true")
    with connection.cursor() as cursor:
        # Statistics and the visibility map, as autovacuum keeps them in a
        # database that has lived: right after the bulk insert no page is
        # marked all-visible, so the count of the candidates' servers, which
        # the index answers alone, visited the table too (33 against 9 ms
        # for 1,000 of 5,000 hosts).
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    return flavor


def http_boots(args, flavor, image, reuse_seconds):
    """Boot --boots servers over HTTP, --concurrency at a time, against
    gunicorn with --workers processes on this database (the stock CLI's
    body, any zone), with SCHEDULER_DECISION_REUSE_SECONDS=reuse_seconds;
    returns (seconds, answers by status, the CPU a boot cost the web
    workers, PostgreSQL's backends and the clients, in ms, and the share of
    the machine's CPU time that was busy)."""
    import requests

    port = 28311
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings",
        CELERY_BROKER_URL="",
        SCHEDULER_DECISION_REUSE_SECONDS=str(reuse_seconds),
    )
    threaded = threaded_options(args.threads) if args.threads else []
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "config.wsgi",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(args.workers),
            "--timeout",
            "600",
            "--log-level",
            "warning",
            *threaded,
        ],
        cwd=ROOT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/compute/v2.1/servers"
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.100"}
    try:
        for _ in range(100):
            try:
                requests.get(f"http://127.0.0.1:{port}/compute/v2.1/", timeout=10)
                break
            except requests.RequestException:
                time.sleep(0.2)
        body = {
            "server": {
                "name": "bench",
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
        }
        statuses: dict[int, int] = {}
        lock = threading.Lock()
        remaining = [args.boots]

        def client_loop():
            session = requests.Session()
            while True:
                with lock:
                    if remaining[0] <= 0:
                        return
                    remaining[0] -= 1
                status = session.post(url, json=body, headers=headers, timeout=600).status_code
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1

        database = urlsplit(args.database_url).path.lstrip("/")
        usage = Usage(
            {
                "web": lambda: [server.pid, *children(server.pid)],
                "postgres": lambda: postgres_backends(database),
                "clients": lambda: [os.getpid()],  # this process: the client threads
            }
        )
        t0 = time.perf_counter()
        threads = [threading.Thread(target=client_loop) for _ in range(args.concurrency)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - t0
        used, busy = usage.stop()
        # CPU a boot cost each part, in ms, and how busy the machine's cores were.
        cpu = {f"{name}_ms_a_boot": round(1000 * value / args.boots, 1) for name, value in used.items()}
        return seconds, statuses, {**cpu, "machine_busy": round(busy, 2)}
    finally:
        server.terminate()
        server.wait()


def add_servers(args, nodes, providers, classes, rng):
    """--servers-per-host ACTIVE servers on every node, with their placement
    consumers and allocations (VCPU 2, MEMORY_MB 4096, DISK_GB 20 each)."""
    from aggregates.servers.models import Server
    from placement import models as pm

    per_host = args.servers_per_host
    if per_host <= 0:
        return
    project = pm.Project.objects.get_or_create(external_id="bench-tenant")[0]
    user = pm.User.objects.get_or_create(external_id="bench-user")[0]
    instance = pm.ConsumerType.objects.get_or_create(name="INSTANCE")[0]
    flavor = {"vcpus": 2, "ram": 4096, "disk": 20, "ephemeral": 0, "swap": 0, "original_name": "m1.small"}
    by_uuid = {rp.uuid: rp for rp in providers}
    chunk = 500  # nodes per batch: 8,500 servers, 25,500 allocations
    for start in range(0, len(nodes), chunk):
        servers = Server.objects.bulk_create(
            [
                Server(
                    name=f"vm-{node.host}-{i}",
                    project_id="bench-tenant",
                    user_id="bench-user",
                    flavorid="m1.small",
                    flavor=flavor,
                    host=node.host,
                    node=node.hypervisor_hostname,
                    node_uuid=str(node.uuid),
                    vm_state=Server.ACTIVE,
                    power_state=Server.POWER_RUNNING,
                    availability_zone="",
                )
                for node in nodes[start : start + chunk]
                for i in range(per_host)
            ],
            batch_size=5000,
        )
        consumers = pm.Consumer.objects.bulk_create(
            [
                pm.Consumer(uuid=str(server.uuid), project=project, user=user, consumer_type=instance)
                for server in servers
            ],
            batch_size=5000,
        )
        pm.Allocation.objects.bulk_create(
            [
                pm.Allocation(
                    resource_provider=by_uuid[server.node_uuid],
                    consumer=consumer,
                    resource_class=classes[name],
                    used=used,
                )
                for server, consumer in zip(servers, consumers, strict=True)
                for name, used in (("VCPU", 2), ("MEMORY_MB", 4096), ("DISK_GB", 20))
            ],
            batch_size=5000,
        )
        # Rows written directly: the inventories' usage is counted from them.
        from placement.services.allocations import recount_usages

        recount_usages()
    # The providers' generations moved with their allocations.
    pm.ResourceProvider.objects.filter(parent__isnull=True).update(generation=models_f("generation") + per_host)


def add_nested(args, providers):
    """Every --nested-every-th provider gets two NUMA-cell children (no
    inventory) and a physical GPU child with 16 VGPU, as Nova's libvirt
    driver builds them."""
    from placement import models as pm

    if args.nested_every <= 0:
        return
    vgpu = pm.ResourceClass.objects.get(name="VGPU")
    children = []
    for index, rp in enumerate(providers):
        if index % args.nested_every:
            continue
        for name in ("numa0", "numa1", "pci_0000_84_00_0"):
            children.append(
                pm.ResourceProvider(uuid=str(uuid_mod.uuid4()), name=f"{rp.name}_{name}", parent=rp, root=rp)
            )
    children = pm.ResourceProvider.objects.bulk_create(children, batch_size=5000)
    pm.Inventory.objects.bulk_create(
        [pm.Inventory(resource_provider=c, resource_class=vgpu, total=16) for c in children if c.name.endswith("_0")],
        batch_size=5000,
    )


def models_f(name):
    from django.db.models import F

    return F(name)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--aggregates", type=int, default=200)
    parser.add_argument("--decisions", type=int, default=30)
    parser.add_argument("--explains", type=int, default=5)
    parser.add_argument("--boots", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers serving the boots")
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="threads per gunicorn worker, connections kept alive, as Corral ships (0: sync workers)",
    )
    parser.add_argument(
        "--reuse-seconds", type=float, default=2.0, help="SCHEDULER_DECISION_REUSE_SECONDS of the second boot run"
    )
    parser.add_argument("--servers-per-host", type=int, default=17, help="ACTIVE servers on every host (0: none)")
    parser.add_argument(
        "--nested-every",
        type=int,
        default=50,
        help="every K-th host has NUMA and GPU children (0: no nested providers)",
    )
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/corral_sched_bench")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args)))
        return
    results = []
    for hosts in args.hosts:
        recreate(args.database_url)
        command = [sys.executable, __file__, "--one", "--hosts", str(hosts)]
        for option in (
            "aggregates",
            "decisions",
            "explains",
            "boots",
            "concurrency",
            "workers",
            "threads",
            "reuse_seconds",
            "servers_per_host",
            "nested_every",
        ):
            command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
        command += ["--database-url", args.database_url]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode:
            raise SystemExit(f"the {hosts}-host run failed:\n{run.stderr[-3000:]}")
        output = run.stdout
        results.append(json.loads(output.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)


if __name__ == "__main__":
    main()
