"""Allocation candidates in process, one side of an A/B comparison of two
checkouts on the same database (read only):

    for code in /tmp/a /tmp/b /tmp/a /tmp/b; do   # e.g. git archive <commit> | tar -x -C /tmp/a
        (cd $code && PYTHONPATH=$code .venv/bin/python bench/candidates_inprocess.py \
            --code $code --database-url postgres://.../db --reps 60)
    done

(Run from the checkout with PYTHONPATH set to it: the virtualenv's editable
install otherwise decides which checkout is imported. The output names the
file of the engine imported.)

Times GET /allocation_candidates through Django's test client (limit=1000,
member_of three aggregates, no limit; the shared workload's resources), the
candidate engine's SQL within each request, and the inventory statement
alone in its two forms: summing the allocations (as the engine did before
usage was counted on the inventory rows) and reading ``used``. Medians in
ms, with the 1-minute load average and the number of candidates. The code
of ``--code`` is imported (its config and placement packages)."""

import argparse
import json
import os
import statistics
import sys
import time

RESOURCES = "VCPU:2,MEMORY_MB:4096,DISK_GB:20"
SUM_ALLOCATIONS = (
    "SELECT inv.resource_provider_id, inv.resource_class_id, inv.total, COALESCE(u.used, 0) "
    "FROM placement_inventory inv LEFT JOIN (SELECT resource_provider_id, resource_class_id, SUM(used) AS used "
    "FROM placement_allocation GROUP BY resource_provider_id, resource_class_id) u "
    "ON u.resource_provider_id = inv.resource_provider_id AND u.resource_class_id = inv.resource_class_id"
)
INVENTORY_USED = "SELECT resource_provider_id, resource_class_id, total, used FROM placement_inventory"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", required=True, help="the checkout whose placement is timed")
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--reps", type=int, default=60)
    args = parser.parse_args()
    sys.path.insert(0, args.code)
    os.environ.update(
        DATABASE_URL=args.database_url,
        ALLOWED_HOSTS="*",
        PLACEMENT_URL="",
        AUTH_STRATEGY="noauth2",
        LOG_LEVEL="WARNING",
        CELERY_BROKER_URL="",
        DJANGO_SETTINGS_MODULE="config.settings",
        CORRAL_VAR_DIR=os.environ.get("CORRAL_VAR_DIR", "/tmp/candidates-inprocess"),
    )
    import django

    django.setup()
    import logging

    logging.disable(logging.WARNING)
    from django.db import connection
    from django.test import Client

    import placement.candidates as engine
    from placement.models import PlacementAggregate

    engine_seconds = [0.0]
    query = engine._query

    def timed(*a, **k):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return query(*a, **k)
        finally:
            engine_seconds[0] += time.perf_counter() - started

    engine._query = timed
    aggregates = sorted(PlacementAggregate.objects.values_list("uuid", flat=True))[:3]
    client = Client(HTTP_HOST="127.0.0.1")
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39"}
    queries = {
        "limit1000": f"resources={RESOURCES}&limit=1000",
        "member_of3": f"resources={RESOURCES}&limit=1000&member_of=in:{','.join(aggregates)}",
        "nolimit": f"resources={RESOURCES}",
    }
    out: dict[str, object] = {"code": engine.__file__, "load1": round(os.getloadavg()[0], 2)}
    for name, params in queries.items():
        for _ in range(2):
            response = client.get(f"/placement/allocation_candidates?{params}", headers=headers)
            assert response.status_code == 200, response.content[:300]
        total, sql = [], []
        for _ in range(args.reps):
            engine_seconds[0] = 0.0
            started = time.perf_counter()
            response = client.get(f"/placement/allocation_candidates?{params}", headers=headers)
            total.append(time.perf_counter() - started)
            sql.append(engine_seconds[0])
        out[name] = {
            "ms": round(statistics.median(total) * 1000, 2),
            "engine_sql_ms": round(statistics.median(sql) * 1000, 2),
            "candidates": len(response.json()["allocation_requests"]),
        }
    with connection.cursor() as cursor:
        for name, sql_text in (("stmt_sum_allocations", SUM_ALLOCATIONS), ("stmt_inventory_used", INVENTORY_USED)):
            times = []
            for _ in range(args.reps):
                started = time.perf_counter()
                cursor.execute(sql_text)
                cursor.fetchall()
                times.append(time.perf_counter() - started)
            out[name + "_ms"] = round(statistics.median(times) * 1000, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
