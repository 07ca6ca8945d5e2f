"""The gauges read from the database at scrape time: the placement outbox,
the last reconciliation's drift, long jobs, compute services, and the
latest capacity sample. A fixed
handful of queries whatever the cloud's size (no query per host or job)."""

import logging
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from django.db import DatabaseError
from django.db.models import BooleanField, Case, Count, Min, Q, Sum, Value, When
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from aggregates.capacity.models import CapacitySample
from aggregates.hosts.models import Service, up_q
from aggregates.jobs.models import LongJob
from aggregates.maintenance.models import MaintenanceJob
from aggregates.mirroring.models import OutboxRow, PlacementMirrorRequest, ProviderSyncRequest, ReconciliationRun
from aggregates.precache.models import ImageCacheJob
from aggregates.zones.services import zone_of_service, zones_by_host

log = logging.getLogger(__name__)

OUTBOXES: dict[str, type[PlacementMirrorRequest] | type[ProviderSyncRequest]] = {
    "aggregates": PlacementMirrorRequest,
    "providers": ProviderSyncRequest,
}
JOBS: dict[str, type[ImageCacheJob] | type[MaintenanceJob]] = {"precache": ImageCacheJob, "maintenance": MaintenanceJob}


class DatabaseCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("corral_database_up", "1 when this scrape could read the database, else 0.")
        try:
            metrics = [*outbox(), *reconciliation(), *jobs(), services(), capacity()]
        except DatabaseError:
            log.warning("metrics: the database could not be read", exc_info=True)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from metrics


def outbox() -> list[Metric]:
    """Pending rows, the age of the oldest pending one, failed rows: one query per outbox."""
    pending = GaugeMetricFamily(
        "corral_mirror_outbox_pending", "Placement outbox rows not yet applied, by outbox.", labels=["outbox"]
    )
    oldest = GaugeMetricFamily(
        "corral_mirror_outbox_oldest_seconds",
        "Age of the oldest pending placement outbox row (0 when none), by outbox.",
        labels=["outbox"],
    )
    failed = GaugeMetricFamily(
        "corral_mirror_outbox_failed",
        "Placement outbox rows that gave up after PLACEMENT_MIRROR_MAX_ATTEMPTS, by outbox.",
        labels=["outbox"],
    )
    now = timezone.now()
    for name, model in OUTBOXES.items():
        row = model.objects.aggregate(
            pending=Count("id", filter=Q(status=OutboxRow.PENDING)),
            failed=Count("id", filter=Q(status=OutboxRow.FAILED)),
            oldest=Min("created_at", filter=Q(status=OutboxRow.PENDING)),
        )
        pending.add_metric([name], row["pending"])
        failed.add_metric([name], row["failed"])
        oldest.add_metric([name], max(0.0, (now - row["oldest"]).total_seconds()) if row["oldest"] else 0.0)
    return [pending, oldest, failed]


def reconciliation() -> list[Metric]:
    """The last finished reconciliation (dry runs included: they measure the drift too)."""
    drift = GaugeMetricFamily(
        "corral_reconcile_drift",
        "Aggregate associations the last reconciliation found missing from or stale in placement.",
        labels=["kind"],
    )
    finished = GaugeMetricFamily(
        "corral_reconcile_last_finished_timestamp_seconds", "When the last reconciliation finished (Unix time)."
    )
    last = (
        ReconciliationRun.objects.filter(finished_at__isnull=False)
        .order_by("-finished_at", "-id")
        .values("missing_found", "stale_found", "finished_at")
        .first()
    )
    if last is not None and last["finished_at"] is not None:
        drift.add_metric(["missing"], last["missing_found"])
        drift.add_metric(["stale"], last["stale_found"])
        finished.add_metric([], last["finished_at"].timestamp())
    return [drift, finished]


def jobs() -> list[Metric]:
    """Long jobs by kind and state, and the progress of the running ones: one query per kind."""
    count = GaugeMetricFamily("corral_jobs", "Long jobs, by kind and state.", labels=["kind", "state"])
    progress = GaugeMetricFamily(
        "corral_jobs_running_items",
        "Items (hosts, servers) of the running jobs, done and in all, by kind.",
        labels=["kind", "count"],
    )
    for kind, model in JOBS.items():
        rows: dict[str, dict[str, Any]] = {
            row["status"]: dict(row)
            for row in model.objects.order_by()
            .values("status")
            .annotate(n=Count("id"), done=Sum("done"), total=Sum("total"))
        }
        for state, _ in LongJob.STATUSES:
            count.add_metric([kind, state], rows[state]["n"] if state in rows else 0)
        running = rows.get(LongJob.RUNNING, {})
        progress.add_metric([kind, "done"], running.get("done") or 0)
        progress.add_metric([kind, "total"], running.get("total") or 0)
    return [count, progress]


def services() -> Metric:
    """Services by binary, zone and state: ``disabled``, else ``up`` or
    ``down`` by the hosts domain's own rule (``up_q``). Two queries."""
    gauge = GaugeMetricFamily(
        "corral_services",
        "Services, by binary, zone and state (up, down or disabled).",
        labels=["binary", "zone", "state"],
    )
    rows = Service.objects.annotate(
        is_up_now=Case(When(up_q(), then=Value(True)), default=Value(False), output_field=BooleanField())
    ).values_list("host", "binary", "disabled", "is_up_now")
    host_zones = zones_by_host()
    # Counted by (binary, the host's zone names, state), with one host of
    # each: the zones domain names the zone once per such group, not per row.
    counts: Counter[tuple[str, tuple[str, ...], str]] = Counter()
    example: dict[tuple[str, tuple[str, ...]], str] = {}
    for host, binary, disabled, is_up in rows:
        zones = tuple(host_zones.get(host, ()))
        example.setdefault((binary, zones), host)
        counts[(binary, zones, "disabled" if disabled else "up" if is_up else "down")] += 1
    by_zone: Counter[tuple[str, str, str]] = Counter()
    for (binary, zones, state), n in counts.items():
        zone = zone_of_service(Service(host=example[(binary, zones)], binary=binary), host_zones)
        by_zone[(binary, zone, state)] += n
    for (binary, zone, state), n in sorted(by_zone.items()):
        gauge.add_metric([binary, zone, state], n)
    return gauge


def capacity() -> Metric:
    """How many more servers of each flavor fit, per zone (``aggregate`` "")
    and per aggregate (with its zone, "" when none), as the latest capacity
    sample recorded it (two queries; nothing is counted at scrape time)."""
    gauge = GaugeMetricFamily(
        "corral_capacity_servers",
        'More servers of the flavor that fit, per zone (aggregate="") and per aggregate, at the latest sample.',
        labels=["flavor", "zone", "aggregate"],
    )
    for row in CapacitySample.latest():
        aggregate = row.name if row.scope == CapacitySample.AGGREGATE else ""
        for flavor, figure in sorted((row.figures or {}).items()):
            gauge.add_metric([flavor, row.zone, aggregate], int(figure.get("servers", 0)))
    return gauge


def timed_collect() -> float:
    """Seconds one collection takes (the benchmark's measure)."""
    started = time.perf_counter()
    list(DatabaseCollector().collect())
    return time.perf_counter() - started
