"""Benchmark: reconciling placement (providers and aggregates) at scale.

Builds HOSTS compute hosts (nodes with inventories) in AGGREGATES aggregates,
each host in one to three of them, in a database of its own, registers
their providers in a running placement the way Corral's outbox does
(resource_tracker.sync_node, then their aggregates), then measures
``reconciler.reconcile``:

1. with no drift: the placement requests must be 1 + AGGREGATES (one
   provider listing, shared by the provider check and the aggregates; one
   member_of listing per aggregate), whatever HOSTS;
2. with DRIFT associations removed from placement behind Corral's back: 4
   more requests per drifted association (the provider's generation moved,
   so its inventories and traits are read; then a GET and a PUT of its
   aggregates);
3. once more after the repair: back to 1 + AGGREGATES.

It prints the request counts and durations and exits 1 if a count is off.

Database: DATABASE_URL when set (it is EMPTIED first: give the bench a
database of its own), else a throwaway SQLite file.

Placement to measure against (any of them, empty is best; the providers it
creates are deleted at the end unless --keep):

* ours:      CORRAL_SERVICE=placement AUTH_STRATEGY=noauth2 DATABASE_URL=<another database> \
             .venv/bin/gunicorn -b 127.0.0.1:8778 config.wsgi
* upstream:  see "Running it against upstream Placement" in the conformance README

    [DATABASE_URL=postgres://...] .venv/bin/python bench/reconcile_bench.py --placement-url http://127.0.0.1:8778
        [--hosts 5000] [--aggregates 200] [--drift 50] [--token admin] [--jobs 4] [--keep]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def setup_django(workdir):
    os.environ["CORRAL_VAR_DIR"] = workdir
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)


def aggregates_of_host(index, aggregates):
    """One to three distinct aggregate indexes for host ``index``."""
    wanted = [index % aggregates, (index * 7 + 3) % aggregates, (index * 13 + 5) % aggregates][: 1 + index % 3]
    return sorted(set(wanted))


def build_corral(hosts, aggregates):
    """Services, compute nodes, aggregates and memberships, in bulk.
    Returns [(node, [aggregate, ...]), ...]."""
    from aggregates.host_aggregates.models import Aggregate, AggregateHost
    from aggregates.hosts.models import ComputeNode, Service

    services = Service.objects.bulk_create(
        Service(host=f"bench-{i:05d}", binary=Service.COMPUTE, topic="compute") for i in range(hosts)
    )
    nodes = ComputeNode.objects.bulk_create(
        ComputeNode(service=s, host=s.host, hypervisor_hostname=s.host, vcpus=16, memory_mb=65536, local_gb=1000)
        for s in services
    )
    groups = Aggregate.objects.bulk_create(Aggregate(name=f"bench-agg-{i:04d}") for i in range(aggregates))
    members = [(node, [groups[a] for a in aggregates_of_host(i, aggregates)]) for i, node in enumerate(nodes)]
    AggregateHost.objects.bulk_create(
        AggregateHost(aggregate=aggregate, host=node.host)
        for node, groups_of_node in members
        for aggregate in groups_of_node
    )
    nodes_with_service = {n.pk: n for n in ComputeNode.objects.select_related("service")}
    return [(nodes_with_service[node.pk], groups_of_node) for node, groups_of_node in members]


def create_providers(base_url, token, members, jobs):
    """Each node's provider, with its inventories and aggregates, as the
    outbox creates them, ``jobs`` at a time. Returns (seconds, requests)."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from aggregates.mirroring import resource_tracker
    from aggregates.placement_client import PlacementClient

    def create(chunk):
        client = PlacementClient(base_url=base_url, token=token)
        try:
            for node, groups in chunk:
                resource_tracker.sync_node(node, client)
                update = client.update_provider_aggregates(node.uuid, add=[aggregate.uuid for aggregate in groups])
                resource_tracker.followed(update, uuid=node.uuid)
        finally:
            connection.close()
        return client.requests_made

    started = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        requests = sum(pool.map(create, [members[index::jobs] for index in range(jobs)]))
    return time.monotonic() - started, requests


def delete_providers(client, members):
    for node, _ in members:
        client.delete_provider(node.uuid)


def measure(label, expected_requests, client):
    from aggregates.mirroring import reconciler
    from aggregates.mirroring.models import ReconciliationRun

    result = reconciler.reconcile(ReconciliationRun.COMMAND, placement=client)
    run = result.run
    ok = run.placement_requests == expected_requests and run.failures == 0 and run.exit_code == 0
    print(
        f"{label:<28} {run.placement_requests:>9} {expected_requests:>9} {run.added:>6} "
        f"{run.duration_seconds:>9.2f}s  {'ok' if ok else 'UNEXPECTED'}",
        flush=True,
    )
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--placement-url", required=True)
    parser.add_argument("--token", default="admin", help="X-Auth-Token sent to placement (default: admin)")
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--aggregates", type=int, default=200)
    parser.add_argument("--drift", type=int, default=50, help="associations to remove before the second pass")
    parser.add_argument("--keep", action="store_true", help="keep the providers created in placement")
    parser.add_argument("--jobs", type=int, default=4, help="providers created this many at a time (default: 4)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="reconcile-bench-") as workdir:
        setup_django(workdir)
        from django.conf import settings

        from aggregates.placement_client import PlacementClient

        client = PlacementClient(base_url=args.placement_url, token=args.token)
        members = build_corral(args.hosts, args.aggregates)
        associations = sum(len(groups) for _, groups in members)
        print(
            f"{args.hosts} hosts in {args.aggregates} aggregates ({associations} associations), database "
            f"{settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}; creating providers...",
            flush=True,
        )
        seconds, requests = create_providers(args.placement_url, args.token, members, args.jobs)
        print(f"providers created in {seconds:.1f}s ({requests} requests, {args.jobs} at a time)", flush=True)
        try:
            print(f"{'pass':<28} {'requests':>9} {'expected':>9} {'added':>6} {'duration':>10}")
            in_sync = measure("no drift", 1 + args.aggregates, client)
            for node, groups in members[: args.drift]:
                client.change_provider_aggregates(node.uuid, remove=[groups[0].uuid])
            drifted = measure(f"{args.drift} drifted", 1 + args.aggregates + 4 * args.drift, client)
            repaired = measure("after the repair", 1 + args.aggregates, client)
        finally:
            if not args.keep:
                delete_providers(client, members)
    return 0 if in_sync and drifted and repaired else 1


if __name__ == "__main__":
    sys.exit(main())
