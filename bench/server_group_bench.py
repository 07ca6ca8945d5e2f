"""What a boot with a ``group`` hint and quota checks costs against the
same boot with neither, at 5,000 hosts, on PostgreSQL (issue 20's target:
at most 10 % more).

    .venv/bin/python bench/server_group_bench.py [--hosts 5000] [--boots 40]
        [--existing 2000] [--show-queries]
        [--database-url postgres://postgres@127.0.0.1:5432/bench_groups]

The database (dropped and re-created: the name must not be test/postgres)
is migrated and filled in bulk by scheduler_bench.py's builder: N compute
hosts (64 vCPU at ratio 4, 256 GiB, 4 TB), each a placement provider, in
ten zone aggregates mirrored into placement (no other aggregates); every
aggregate filter and both server group filters on. The booting project
already holds --existing servers (rows only, so that counting its usage
has rows to count) under limits high enough for every boot. Then --boots
pairs of boots, taken in turns (A, B, then B, A: each first every other
time): A without a hint under QUOTA_DRIVER=noop (no quota check), B into
an anti-affinity group whose members pile up (the last boot's group has
--boots - 1 members placed) under QUOTA_DRIVER=db (the checks of the
instances, cores and RAM and of the group's members, under the project's
lock row). Each is the service's whole create (checks, rows, then the
build in this thread: decision, admission under the group's lock, claim,
ACTIVE), with Corral's own placement in process. Reported: the median and
p95 of each, the ratio of the medians, the median number of database
queries of each, and the load average; --show-queries prints the SQL of
the last boot of each kind.

Figures: bench/README.md."""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from databases import recreate, start_django  # bench/databases.py, beside this script
from scheduler_bench import build_cloud

ROOT = Path(__file__).resolve().parent.parent
FILTERS = (
    "ComputeFilter,ImagePropertiesFilter,AggregateInstanceExtraSpecsFilter,AggregateMultiTenancyIsolation,"
    "AggregateImagePropertiesIsolation,AggregateIoOpsFilter,AggregateNumInstancesFilter,AggregateTypeAffinityFilter,"
    "ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter"
)


PROJECT = "group-bench"


def run(args):
    start_django(args.database_url, ENABLED_FILTERS=FILTERS)
    from django.conf import settings
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from aggregates.flavors.models import Flavor
    from aggregates.identity.caller import Caller
    from aggregates.images.models import Image
    from aggregates.quotas.models import ProjectQuota
    from aggregates.server_groups import services as server_groups
    from aggregates.servers import services as servers
    from aggregates.servers.models import Server

    settings.FOLLOW_UP_WAIT_SECONDS = None  # the build runs in this thread, timed with the create
    started = time.monotonic()
    build_cloud(args.hosts, 10)  # migrated; ten zone aggregates, no others
    built = time.monotonic() - started
    flavor = Flavor.objects.create(flavorid="m1.small", name="m1.small", vcpus=1, memory_mb=2048, root_gb=20)
    image = Image.objects.create(
        name="cirros", status=Image.ACTIVE, visibility=Image.PUBLIC, disk_format="qcow2", container_format="bare"
    )
    Server.objects.bulk_create(
        [
            Server(name=f"old{i}", project_id=PROJECT, user_id="bench", flavorid="1", flavor={"vcpus": 1, "ram": 512})
            for i in range(args.existing)
        ],
        batch_size=1000,
    )
    ProjectQuota.objects.bulk_create(
        [
            ProjectQuota(project_id=PROJECT, resource=name, hard_limit=10**9)
            for name in ("instances", "cores", "ram", "server_groups", "server_group_members")
        ]
    )
    caller = Caller(username="bench", project_id=PROJECT, roles=frozenset({"admin", "member"}))
    group = server_groups.create_group(caller, "spread", "anti-affinity").group
    with connection.cursor() as cursor:
        # Statistics of the rows just added (autovacuum would take them in its
        # own time): without them PostgreSQL takes the server table for empty
        # and joins a group's members to it in a nested loop (30 ms, not 1).
        cursor.execute("ANALYZE")

    queries = {"plain": [], "grouped": []}
    last_sql = {}

    def boot(name, hints):
        kind = "grouped" if hints else "plain"
        settings.QUOTA_DRIVER = "db" if hints else "noop"
        connection.queries_log.clear()  # its 9,000-query bound would leave later boots counting 0
        t0 = time.perf_counter()
        with CaptureQueriesContext(connection) as captured:
            created = servers.create_servers(
                caller, name=name, flavor_ref=flavor.flavorid, image_ref=str(image.id), networks="none",
                scheduler_hints=hints,
            )  # fmt: skip
        seconds = time.perf_counter() - t0
        queries[kind].append(len(captured))
        last_sql[kind] = [q["sql"] for q in captured.captured_queries]
        (server,) = created.servers
        assert Server.objects.get(pk=server.pk).vm_state == Server.ACTIVE
        return seconds

    boot("warm-up", {})
    plain, grouped = [], []
    for i in range(args.boots):  # in turns, each first every other time
        if i % 2:
            plain.append(boot(f"plain{i}", {}))
        grouped.append(boot(f"grouped{i}", {"group": str(group.uuid)}))
        if not i % 2:
            plain.append(boot(f"plain{i}", {}))
    hosts = list(Server.objects.filter(name__startswith="grouped").values_list("host", flat=True))
    assert len(set(hosts)) == len(hosts), "two members of the anti-affinity group share a host"

    def ms(values):
        values = sorted(values)
        return {
            "median_ms": round(statistics.median(values) * 1000, 1),
            "p95_ms": round(values[max(int(len(values) * 0.95) - 1, 0)] * 1000, 1),
        }

    if args.show_queries:
        for kind, sql in last_sql.items():
            print(f"--- {kind}: {len(sql)} queries", file=sys.stderr)
            for line in sql:
                print(line[:300], file=sys.stderr)
    return {
        "hosts": args.hosts,
        "build_seconds": round(built, 1),
        "existing_servers": args.existing,
        "boots_each": args.boots,
        "neither (noop quotas, no hint)": ms(plain),
        "group hint and quota checks": ms(grouped),
        "ratio_of_medians": round(statistics.median(grouped) / statistics.median(plain), 3),
        "queries_median": {kind: statistics.median(counts) for kind, counts in queries.items()},
        "load_average": os.getloadavg(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--boots", type=int, default=40)
    parser.add_argument("--existing", type=int, default=2000, help="servers the project has already")
    parser.add_argument("--show-queries", action="store_true", help="print the SQL of the last boot of each kind")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/bench_groups")
    args = parser.parse_args()
    recreate(args.database_url)
    print(json.dumps(run(args), indent=2))


if __name__ == "__main__":
    main()
