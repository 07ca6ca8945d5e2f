"""What quota checks add to a boot, at 5,000 hosts, on PostgreSQL.

    .venv/bin/python bench/quota_bench.py [--hosts 5000] [--boots 40] [--existing 2000]

A database of its own (dropped and re-created) is filled as
scheduler_bench.py fills it (--hosts hosts, 200 aggregates, every filter
on); the booting project already has --existing servers (rows only, so
that counting its usage has rows to count) and limits high enough for every
boot. Then, in this process with placement in process, one server at a
time is booted through the service the API calls (``create_servers``:
checks, rows, then the build: scheduling and the claim, after commit),
alternately with QUOTA_DRIVER=noop (no check) and db (lock, count,
compare), --boots of each; and ``check_boot`` alone, in a transaction,
--boots times. Prints medians, p95s, the ratio of the medians and the
load average.
"""

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from databases import recreate, start_django  # bench/databases.py, beside this script
from scheduler_bench import ALL_FILTERS, build_cloud

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "quota-bench"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--aggregates", type=int, default=200)
    parser.add_argument("--boots", type=int, default=40, help="boots with each driver")
    parser.add_argument("--existing", type=int, default=2000, help="servers the project has already")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/corral_quota_bench")
    args = parser.parse_args()
    recreate(args.database_url)
    start_django(
        args.database_url,
        ENABLED_FILTERS=ALL_FILTERS,
        LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE="true",
        ENABLE_ISOLATED_AGGREGATE_FILTERING="true",
    )
    from django.conf import settings
    from django.db import transaction

    from aggregates.identity.caller import ADMIN, MEMBER, Caller
    from aggregates.images.models import Image
    from aggregates.quotas import services as quotas
    from aggregates.quotas.models import ProjectQuota
    from aggregates.servers import services
    from aggregates.servers.models import Server

    settings.FOLLOW_UP_WAIT_SECONDS = None  # each build in this thread, as a request without a broker
    flavor = build_cloud(args.hosts, args.aggregates)
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
        [ProjectQuota(project_id=PROJECT, resource=name, hard_limit=10**9) for name in ("instances", "cores", "ram")]
    )
    caller = Caller(username="bench", project_id=PROJECT, roles=frozenset({ADMIN, MEMBER}))

    def boot(index):
        t0 = time.perf_counter()
        created = services.create_servers(
            caller, name=f"b{index}", flavor_ref=flavor.flavorid, image_ref=str(image.id), networks="none"
        )
        seconds = time.perf_counter() - t0
        assert Server.objects.get(pk=created.servers[0].pk).vm_state == Server.ACTIVE
        return seconds

    times = {"noop": [], "db": []}
    boot(-1)  # warm up
    for index in range(args.boots):
        for driver in ("noop", "db") if index % 2 else ("db", "noop"):
            settings.QUOTA_DRIVER = driver
            times[driver].append(boot(index))
    settings.QUOTA_DRIVER = "db"
    checks = []
    for _ in range(args.boots):
        t0 = time.perf_counter()
        with transaction.atomic():
            quotas.check_boot(PROJECT, "bench", flavor.vcpus, flavor.memory_mb, 1, 1)
        checks.append(time.perf_counter() - t0)

    def ms(values):
        values = sorted(values)
        return {
            "median_ms": round(statistics.median(values) * 1000, 1),
            "p95_ms": round(values[max(0, int(len(values) * 0.95) - 1)] * 1000, 1),
        }

    result = {
        "hosts": args.hosts,
        "existing_servers": args.existing,
        "boots_each": args.boots,
        "boot_without_quota_checks": ms(times["noop"]),
        "boot_with_quota_checks": ms(times["db"]),
        "median_ratio": round(statistics.median(times["db"]) / statistics.median(times["noop"]), 3),
        "check_boot_alone": ms(checks),
        "load_average": os.getloadavg(),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
