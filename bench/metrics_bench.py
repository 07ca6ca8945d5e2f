"""Benchmark: one /metrics scrape at 5,000 hosts (the database's gauges are
read at scrape time; the goal is under 200 ms).

Builds HOSTS compute services (one in fifty disabled, one in ten down) with
their nodes, in AGGREGATES aggregates naming five zones, OUTBOX pending and
failed outbox rows, JOBS long jobs of each kind and a few reconciliation
runs, in a database of its own; then builds the scrape's body ROUNDS times
(what GET /metrics answers, the HTTP layer aside) and prints the queries
per scrape and the median and slowest durations. Exits 1 when the median is
over 200 ms or the queries grow with the data.

Database: DATABASE_URL when set (it is EMPTIED first: give the bench a
database of its own), else a throwaway SQLite file.

    [DATABASE_URL=postgres://...] .venv/bin/python bench/metrics_bench.py [--hosts 5000] [--rounds 20]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path


def setup_django(workdir):
    os.environ["CORRAL_VAR_DIR"] = workdir
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)


def build(hosts, aggregates, outbox, jobs):
    from django.utils import timezone

    from aggregates.host_aggregates.models import Aggregate, AggregateHost, AggregateMetadata
    from aggregates.hosts.models import ComputeNode, Service
    from aggregates.maintenance.models import MaintenanceJob
    from aggregates.mirroring.models import PlacementMirrorRequest, ProviderSyncRequest, ReconciliationRun
    from aggregates.precache.models import ImageCacheJob

    now = timezone.now()
    services = Service.objects.bulk_create(
        Service(
            host=f"cmp-{n:05d}",
            binary=Service.COMPUTE,
            last_seen_up=now - timedelta(hours=1) if n % 10 == 0 else now,
            disabled=n % 50 == 0,
        )
        for n in range(hosts)
    )
    ComputeNode.objects.bulk_create(
        ComputeNode(service=s, host=s.host, hypervisor_hostname=s.host, vcpus=64, memory_mb=262144, local_gb=2000)
        for s in services
    )
    made = Aggregate.objects.bulk_create(Aggregate(name=f"agg-{n:03d}") for n in range(aggregates))
    AggregateMetadata.objects.bulk_create(
        AggregateMetadata(aggregate=a, key="availability_zone", value=f"az{n % 5}") for n, a in enumerate(made)
    )
    AggregateHost.objects.bulk_create(
        AggregateHost(aggregate=made[n % aggregates], host=s.host) for n, s in enumerate(services)
    )
    PlacementMirrorRequest.objects.bulk_create(
        PlacementMirrorRequest(
            aggregate_uuid=uuid.uuid4(),
            aggregate_name="a",
            host=f"cmp-{n:05d}",
            action=PlacementMirrorRequest.ADD,
            status=[PlacementMirrorRequest.PENDING, PlacementMirrorRequest.DONE, PlacementMirrorRequest.FAILED][n % 3],
            created_at=now - timedelta(seconds=n),
        )
        for n in range(outbox)
    )
    ProviderSyncRequest.objects.bulk_create(
        ProviderSyncRequest(
            node_uuid=uuid.uuid4(), hypervisor_hostname=f"cmp-{n:05d}", host=f"cmp-{n:05d}", action="sync"
        )
        for n in range(outbox)
    )
    statuses = ["queued", "running", "completed", "completed_with_errors", "failed"]
    ImageCacheJob.objects.bulk_create(
        ImageCacheJob(aggregate_id=1, aggregate_uuid=uuid.uuid4(), aggregate_name="a", status=statuses[n % 5], total=10)
        for n in range(jobs)
    )
    MaintenanceJob.objects.bulk_create(
        MaintenanceJob(host=f"cmp-{n:05d}", action="drain", status=statuses[n % 5], total=5) for n in range(jobs)
    )
    ReconciliationRun.objects.bulk_create(
        ReconciliationRun(trigger="schedule", finished_at=now - timedelta(minutes=n), missing_found=n, stale_found=1)
        for n in range(50)
    )


def scrape_queries():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from aggregates.metrics import views

    with CaptureQueriesContext(connection) as captured:
        views.exposition()
    return len(captured)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--aggregates", type=int, default=500)
    parser.add_argument("--outbox", type=int, default=3000)
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        setup_django(workdir)
        from aggregates.metrics import views

        empty_queries = scrape_queries()
        started = time.perf_counter()
        build(args.hosts, args.aggregates, args.outbox, args.jobs)
        print(f"built {args.hosts} hosts in {time.perf_counter() - started:.1f} s")
        queries = scrape_queries()
        durations = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            body = views.exposition()
            durations.append(time.perf_counter() - started)
        median = statistics.median(durations)
        print(f"scrape: {queries} queries (empty database: {empty_queries}), {len(body)} bytes")
        print(f"scrape: median {median * 1000:.1f} ms, slowest {max(durations) * 1000:.1f} ms over {args.rounds}")
        failed = median > 0.2 or queries != empty_queries
        if failed:
            print("FAILED: over 200 ms, or the queries grew with the data")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
