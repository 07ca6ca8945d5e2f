"""Server group benchmark: what a boot with a ``group`` hint costs against
the same boot without one, at 5,000 hosts, on PostgreSQL.

    .venv/bin/python bench/server_group_bench.py [--hosts 5000] [--boots 40]
        [--database-url postgres://postgres@127.0.0.1:5432/bench_groups]

The database (dropped and re-created: the name must not be test/postgres)
is migrated and filled in bulk by scheduler_bench.py's builder: N compute
hosts (64 vCPU at ratio 4, 256 GiB, 4 TB), each a placement provider, in
ten zone aggregates mirrored into placement (no other aggregates); every aggregate filter and
both server group filters on. Then --boots pairs of boots, taken in turns
(each first every other time; one without a hint, one into an anti-affinity group whose members pile
up: the last boot's group has --boots - 1 members placed), each the
service's whole create (rows, then the build in this thread: decision,
admission under the group's lock, claim, ACTIVE), with Corral's own
placement in process. Reported: the median and p95 of each, the ratio
of the medians, and the median number of database queries of each.

Measured here (2 cores shared with other work, load average 12 to 27):
ratios of the medians 1.102, 1.033, 1.095 and 1.067 (e.g. 763 ms
without, 814 ms with), 70 queries without a group and 82 with one."""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from databases import recreate  # bench/databases.py, beside this script
from scheduler_bench import build_cloud

ROOT = Path(__file__).resolve().parent.parent
FILTERS = (
    "ComputeFilter,ImagePropertiesFilter,AggregateInstanceExtraSpecsFilter,AggregateMultiTenancyIsolation,"
    "AggregateImagePropertiesIsolation,AggregateIoOpsFilter,AggregateNumInstancesFilter,AggregateTypeAffinityFilter,"
    "ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter"
)


def run(args):
    os.environ.update(
        DATABASE_URL=args.database_url,
        PLACEMENT_URL="",
        AUTH_STRATEGY="noauth2",
        ENABLED_FILTERS=FILTERS,
        LOG_LEVEL="WARNING",
        SERVICE_DOWN_TIME="86400",
        CELERY_BROKER_URL="",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from aggregates.flavors.models import Flavor
    from aggregates.identity.caller import Caller
    from aggregates.images.models import Image
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
    caller = Caller(username="bench", project_id="bench", roles=frozenset({"admin", "member"}))
    group = server_groups.create_group(caller, "spread", "anti-affinity").group

    queries = {"plain": [], "grouped": []}

    def boot(name, hints):
        t0 = time.perf_counter()
        with CaptureQueriesContext(connection) as captured:
            created = servers.create_servers(
                caller, name=name, flavor_ref=flavor.flavorid, image_ref=str(image.id), networks="none",
                scheduler_hints=hints,
            )  # fmt: skip
        seconds = time.perf_counter() - t0
        queries["grouped" if hints else "plain"].append(len(captured))
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

    return {
        "hosts": args.hosts,
        "build_seconds": round(built, 1),
        "boots_each": args.boots,
        "without_group": ms(plain),
        "with_group": ms(grouped),
        "ratio_of_medians": round(statistics.median(grouped) / statistics.median(plain), 3),
        "queries_median": {kind: statistics.median(counts) for kind, counts in queries.items()},
        "load_average": os.getloadavg(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--boots", type=int, default=40)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/bench_groups")
    args = parser.parse_args()
    recreate(args.database_url)
    print(json.dumps(run(args), indent=2))


if __name__ == "__main__":
    main()
