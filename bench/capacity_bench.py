"""Capacity by flavor at scale: all 12 demo flavors over every zone and
aggregate, on PostgreSQL.

    .venv/bin/python bench/capacity_bench.py [--hosts 5000] [--rounds 4]
        [--database-url postgres://postgres@127.0.0.1:5432/corral_capacity_bench]

The database (dropped and re-created: the name must not be test/postgres)
is migrated and filled in bulk by scheduler_bench.py's builder: N compute
hosts (64 vCPU at ratio 4, 256 GiB, 4 TB), each a placement provider, 17
ACTIVE servers on each with their allocations, NUMA/GPU children on every
50th, ten zone aggregates and 190 others with the metadata every aggregate
filter reads, mirrored into placement; every aggregate filter on. The demo
seed's 12 flavors are added (their extra specs included).

Then, in rounds, alternately (A, B, A, B...), with Corral's own placement in
process, each the median of --runs calls:
- A: ``capacity.counting.count`` of the 12 flavors (what GET /os-capacity
  and the beat's sample compute): one read of every node's room, the
  pre-filters and filters per flavor and node, arithmetic;
- B: for comparison, what asking placement per flavor would cost: one
  unlimited ``GET /allocation_candidates`` per flavor (the scheduler's own
  query, any zone), before any filter or count.
With --lose-hosts N, once: ``count`` with lose_hosts=N (each of the 210
groups loses its N most loaded hosts, whose servers are planned onto the
others, a scheduling decision per kind of server: slow at this size).
--reuse-database runs on the database an earlier run built.
The 1-minute load average is printed before each measurement."""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from databases import recreate  # bench/databases.py, beside this script
from scheduler_bench import ALL_FILTERS, build_cloud

ROOT = Path(__file__).resolve().parent.parent


def run(args):
    os.environ.update(
        DATABASE_URL=args.database_url,
        PLACEMENT_URL="",
        AUTH_STRATEGY="noauth2",
        ENABLED_FILTERS=ALL_FILTERS,
        LOG_LEVEL="WARNING",
        SERVICE_DOWN_TIME="86400",
        CELERY_BROKER_URL="",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from aggregates.capacity import counting
    from aggregates.demo.seed import FLAVORS
    from aggregates.flavors.models import Flavor, FlavorExtraSpec
    from aggregates.placement_client import client
    from aggregates.scheduling import engine, prefilters, services
    from placement.models import Trait

    started = time.monotonic()
    if not args.reuse_database:
        build_cloud(args.hosts, 200, args)
    built = time.monotonic() - started
    for name, flavorid, ram, vcpus, disk, extra_specs, public in FLAVORS if not args.reuse_database else ():
        flavor = Flavor.objects.create(
            flavorid=flavorid, name=name, memory_mb=ram, vcpus=vcpus, root_gb=disk, is_public=public
        )
        FlavorExtraSpec.objects.bulk_create(
            [FlavorExtraSpec(flavor=flavor, key=k, value=v) for k, v in extra_specs.items()]
        )
    flavors = list(Flavor.objects.filter(name__in=[row[0] for row in FLAVORS]).order_by("memory_mb", "name"))
    assert len(flavors) == 12, len(flavors)
    Trait.objects.get_or_create(name="CUSTOM_GPU")  # gpu.large requires it: B's query names it
    placement = client()
    aggregates = engine.load_aggregates()

    def a_count():
        return counting.count(flavors)

    def b_per_flavor_candidates():
        for flavor in flavors:
            spec = services.request_spec_for(flavor, None, "bench-tenant", "bench")
            query = prefilters.build_query(spec, list(aggregates.values()))
            query.limit = None
            engine.query_candidates(placement, query)

    report = a_count()  # warm up, and the figures' sanity
    groups = len(report.zones) + len(report.aggregates)
    fitting = sum(f.servers for g in report.zones for f in g.flavors)
    b_per_flavor_candidates()

    def timed(work):
        values = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            work()
            values.append(time.perf_counter() - t0)
        return round(statistics.median(values) * 1000, 1)

    rounds = []
    for n in range(args.rounds):
        for label, work in (("A count", a_count), ("B candidates per flavor", b_per_flavor_candidates)):
            load = round(os.getloadavg()[0], 1)
            ms = timed(work)
            rounds.append({"round": n, "side": label, "median_ms": ms, "load_1m": load})
            print(f"round {n} {label}: {ms} ms (load {load})", flush=True)
    lose = None
    if args.lose_hosts:
        load = round(os.getloadavg()[0], 1)
        t0 = time.perf_counter()
        lost = counting.count(flavors, lose_hosts=args.lose_hosts)
        lose_ms = round((time.perf_counter() - t0) * 1000, 1)
        stranded = sum(g.stranded for g in [*lost.zones, *lost.aggregates])
        print(f"lose_hosts={args.lose_hosts}: {lose_ms} ms (load {load}), {stranded} servers stranded", flush=True)
        lose = {"ms": lose_ms, "load_1m": load, "stranded": stranded}
    return {
        "hosts": args.hosts,
        "groups": groups,
        "flavors": len(flavors),
        "servers_that_fit_over_zones": fitting,
        "build_seconds": round(built, 1),
        "rounds": rounds,
        "lose_hosts": lose,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2, help="A, B pairs")
    parser.add_argument("--runs", type=int, default=3, help="calls per measurement (the median is kept)")
    parser.add_argument("--servers-per-host", type=int, default=17)
    parser.add_argument("--nested-every", type=int, default=50)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/corral_capacity_bench")
    parser.add_argument("--lose-hosts", type=int, default=0, help="also time count(lose_hosts=N) once (slow: it plans)")
    parser.add_argument(
        "--reuse-database", action="store_true", help="the database an earlier run built (no drop, no build)"
    )
    parser.add_argument("--json", help="write the result here too")
    args = parser.parse_args()
    if not args.reuse_database:
        recreate(args.database_url)
    result = run(args)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
