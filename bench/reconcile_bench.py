"""Benchmark: reconciling placement aggregates at scale.

Builds HOSTS compute hosts in AGGREGATES aggregates (round robin) in a
throwaway SQLite database, creates their providers with the right aggregates
in a running placement, then measures ``mirroring.reconcile``:

1. with no drift: the placement requests must be 1 + AGGREGATES (one
   provider listing, one member_of listing per aggregate), whatever HOSTS;
2. with DRIFT associations removed from placement: 2 more requests (a GET
   and a PUT) per drifted association.

It prints the request counts and durations and exits 1 if a count is off.

Placement to measure against (any of them, empty is best; the providers it
creates are deleted at the end unless --keep):

* ours:      CORRAL_SERVICE=placement AUTH_STRATEGY=noauth2 .venv/bin/gunicorn -b 127.0.0.1:8778 config.wsgi
* upstream:  see "Running it against upstream Placement" in the conformance README

    .venv/bin/python bench/reconcile_bench.py --placement-url http://127.0.0.1:8778 [--hosts 5000]
        [--aggregates 200] [--drift 50] [--token admin] [--keep]
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def setup_django(workdir):
    os.environ["CORRAL_VAR_DIR"] = workdir
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def build_corral(hosts, aggregates):
    """Services, compute nodes, aggregates and memberships, in bulk."""
    from aggregates.models import Aggregate, AggregateHost, ComputeNode, Service

    services = Service.objects.bulk_create(
        Service(host=f"bench-{i:05d}", binary=Service.COMPUTE, topic="compute") for i in range(hosts))
    nodes = ComputeNode.objects.bulk_create(
        ComputeNode(service=s, host=s.host, hypervisor_hostname=s.host, vcpus=16) for s in services)
    groups = Aggregate.objects.bulk_create(Aggregate(name=f"bench-agg-{i:04d}") for i in range(aggregates))
    AggregateHost.objects.bulk_create(
        AggregateHost(aggregate=groups[i % aggregates], host=node.host) for i, node in enumerate(nodes))
    return [(node, groups[i % aggregates]) for i, node in enumerate(nodes)]


def create_providers(client, members):
    """One provider per node, already in its aggregate."""
    started = time.monotonic()
    for node, aggregate in members:
        response = client.request("POST", "/resource_providers", "1.20",
                                  body={"uuid": str(node.uuid), "name": node.hypervisor_hostname})
        if response.status_code != 200:
            sys.exit(f"creating provider {node.hypervisor_hostname} failed: {response.status_code} {response.text}")
        client.change_provider_aggregates(node.uuid, add=[aggregate.uuid])
    return time.monotonic() - started


def delete_providers(client, members):
    for node, _ in members:
        client.request("DELETE", f"/resource_providers/{node.uuid}", "1.20")


def measure(label, expected_requests, client):
    from aggregates import mirroring
    from aggregates.models import ReconciliationRun

    result = mirroring.reconcile(ReconciliationRun.COMMAND, placement=client)
    run = result.run
    ok = run.placement_requests == expected_requests and run.failures == 0
    print(f"{label:<28} {run.placement_requests:>9} {expected_requests:>9} {run.added:>6} "
          f"{run.duration_seconds:>9.2f}s  {'ok' if ok else 'UNEXPECTED'}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--placement-url", required=True)
    parser.add_argument("--token", default="admin", help="X-Auth-Token sent to placement (default: admin)")
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--aggregates", type=int, default=200)
    parser.add_argument("--drift", type=int, default=50, help="associations to remove before the second pass")
    parser.add_argument("--keep", action="store_true", help="keep the providers created in placement")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="reconcile-bench-") as workdir:
        setup_django(workdir)
        from aggregates.placement_client import PlacementClient

        client = PlacementClient(base_url=args.placement_url, token=args.token)
        members = build_corral(args.hosts, args.aggregates)
        print(f"{args.hosts} hosts in {args.aggregates} aggregates; creating providers...", flush=True)
        print(f"providers created in {create_providers(client, members):.1f}s")
        try:
            print(f"{'pass':<28} {'requests':>9} {'expected':>9} {'added':>6} {'duration':>10}")
            in_sync = measure("no drift", 1 + args.aggregates, client)
            for node, aggregate in members[:args.drift]:
                client.change_provider_aggregates(node.uuid, remove=[aggregate.uuid])
            drifted = measure(f"{args.drift} drifted", 1 + args.aggregates + 2 * args.drift, client)
        finally:
            if not args.keep:
                delete_providers(client, members)
    return 0 if in_sync and drifted else 1


if __name__ == "__main__":
    sys.exit(main())
