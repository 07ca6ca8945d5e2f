"""Capacity by flavor, the operation the API, the console and the beat
call: which flavors (the public ones, or those named), for which project,
after losing how many hosts (``counting`` does the counting); the samples
the beat records, their pruning, the latest sample and a group's history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from aggregates import after_commit
from aggregates.errors import Invalid, NotFound
from aggregates.flavors.models import Flavor
from aggregates.identity.caller import Caller
from aggregates.quotas import services as quotas

from . import counting
from .models import CapacitySample

POLICY = "corral:os-capacity"


def flavors_named(refs: Sequence[str] = ()) -> list[Flavor]:
    """The flavors ``refs`` name (each by id or name; 404 for one that
    names none), in that order; without refs every public, enabled flavor,
    smallest first."""
    if not refs:
        return list(Flavor.objects.filter(is_public=True, disabled=False).order_by("memory_mb", "vcpus", "name"))
    found = []
    for ref in dict.fromkeys(refs):
        flavor = Flavor.objects.filter(flavorid=ref).first() or Flavor.objects.filter(name=ref).first()
        if flavor is None:
            raise NotFound(f"Flavor {ref} could not be found.", field="flavor")
        found.append(flavor)
    return found


def capacity(
    caller: Caller, flavors: Sequence[str] = (), project_id: str | None = None, lose_hosts: int = 0
) -> counting.Report:
    """How many more servers of each flavor fit in every zone and aggregate
    (``counting.count``), for ``project_id`` (its tenant isolation and
    quota) when given, after losing ``lose_hosts`` hosts of each."""
    if lose_hosts < 0:
        raise Invalid("lose_hosts must be 0 or more.", field="lose_hosts")
    chosen = flavors_named(flavors)
    if project_id is not None:
        quotas.verify_project(project_id)
    return counting.count(chosen, project_id, lose_hosts)


# --- samples ------------------------------------------------------------------------


def sample(now: datetime | None = None, force: bool = False) -> int:
    """Record the capacity of every public flavor in every zone and
    aggregate now, unless the last sample is less than
    CAPACITY_SAMPLE_SECONDS old; prune samples older than
    CAPACITY_HISTORY_DAYS. The rows written (0: not due; ``force``: due now)."""
    now = now or timezone.now()
    last = CapacitySample.objects.aggregate(last=Max("taken_at"))["last"]
    if not force and last is not None and now - last < timedelta(seconds=settings.CAPACITY_SAMPLE_SECONDS - 5):
        return 0
    report = counting.count(flavors_named())
    rows = [
        CapacitySample(
            taken_at=now,
            scope=group.scope,
            name=group.name,
            zone=group.zone,
            hosts=group.hosts,
            figures={
                f.name: {"id": f.flavorid, "servers": f.servers, "limited_by": f.limited_by} for f in group.flavors
            },
        )
        for group in [*report.zones, *report.aggregates]
    ]
    with transaction.atomic():
        CapacitySample.objects.bulk_create(rows, batch_size=500)
        prune(now)
    return len(rows)


def prune(now: datetime | None = None) -> int:
    """Delete the samples older than CAPACITY_HISTORY_DAYS; how many rows."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.CAPACITY_HISTORY_DAYS)
    deleted, _ = CapacitySample.objects.filter(taken_at__lt=cutoff).delete()
    return deleted


def latest() -> list[CapacitySample]:
    """The rows of the latest sample (none before the first)."""
    return CapacitySample.latest()


@dataclass(frozen=True)
class Series:
    """One flavor's figures over time in one group."""

    flavor: str
    points: list[tuple[datetime, int]]


def history(scopes: Sequence[tuple[str, str]], since: datetime | None = None) -> dict[tuple[str, str], list[Series]]:
    """Per (scope, name) group, each flavor's servers over time (oldest
    first), from the samples since ``since`` (all kept by default): one query."""
    wanted = Q(pk__in=[])
    for scope, name in scopes:
        wanted |= Q(scope=scope, name=name)
    rows = CapacitySample.objects.filter(wanted)
    if since is not None:
        rows = rows.filter(taken_at__gte=since)
    found: dict[tuple[str, str], dict[str, list[tuple[datetime, int]]]] = {key: {} for key in scopes}
    for scope, name, taken_at, figures in rows.order_by("taken_at").values_list("scope", "name", "taken_at", "figures"):
        series = found[(scope, name)]
        for flavor, figure in (figures or {}).items():
            series.setdefault(flavor, []).append((taken_at, int(figure.get("servers", 0))))
    return {key: [Series(flavor, points) for flavor, points in series.items()] for key, series in found.items()}


# Without a broker there is no beat: the console's capacity page takes a
# sample when one is due (and `manage.py sample_capacity` from cron does).
SAMPLE_WITHOUT_BROKER = after_commit.CatchUp(
    "sampling capacity by flavor", lambda: sample(), every=lambda: float(settings.CAPACITY_SAMPLE_SECONDS)
)
