"""Capacity by flavor in the console (``/capacity/``): how many more servers
of each flavor fit per zone and per aggregate now, with what stops each
(``capacity.services.capacity``, the API's own function: for a project, after
losing hosts), and each group's history, one line per flavor, drawn as
server-rendered SVG from the beat's samples. Without a broker the page takes
a sample when one is due (``SAMPLE_WITHOUT_BROKER``)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from aggregates.capacity import services
from aggregates.capacity.counting import GroupCapacity, Report
from aggregates.errors import ServiceError

from .console import caller_of, console_view, page

# Line colours, one per flavor in order (readable on the light and dark themes).
PALETTE = (
    "#2f6fed", "#e4572e", "#17a398", "#f3a712", "#8e44ad", "#5d6778",
    "#c0392b", "#27ae60", "#d35400", "#2c3e50", "#16a085", "#b8860b",
)  # fmt: skip
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 640, 180, 44, 22, 8
# Charts drawn on one page (zones first, then aggregates); the table lists every group.
MAX_CHARTS = 60


@dataclass
class Line:
    flavor: str
    colour: str
    points: str  # the polyline's "x,y x,y ..."
    last: int


@dataclass
class Chart:
    scope: str
    name: str
    lines: list[Line]
    top: int  # the y axis' maximum
    first: datetime | None
    last: datetime | None
    samples: int
    plot_right: int = WIDTH - 8
    plot_bottom: int = HEIGHT - BOTTOM


def _chart(scope: str, name: str, series: Sequence[services.Series], colours: dict[str, str]) -> Chart:
    times = sorted({taken for s in series for taken, _ in s.points})
    top = max([n for s in series for _, n in s.points] + [1])
    chart = Chart(scope, name, [], top, times[0] if times else None, times[-1] if times else None, len(times))
    if not times:
        return chart
    start, span = times[0], max((times[-1] - times[0]).total_seconds(), 1.0)
    plot_w, plot_h = chart.plot_right - LEFT, chart.plot_bottom - TOP

    def x(at: datetime) -> float:
        return LEFT + (plot_w * (at - start).total_seconds() / span if len(times) > 1 else plot_w / 2)

    for s in sorted(series, key=lambda s: list(colours).index(s.flavor) if s.flavor in colours else len(colours)):
        points = " ".join(f"{x(at):.1f},{chart.plot_bottom - plot_h * n / top:.1f}" for at, n in s.points)
        chart.lines.append(Line(s.flavor, colours.get(s.flavor, PALETTE[-1]), points, s.points[-1][1]))
    return chart


def _rows(groups: Sequence[GroupCapacity], scope: str) -> list[dict[str, Any]]:
    return [{"scope": scope, "group": group} for group in groups]


@console_view
def capacity(request: HttpRequest) -> HttpResponse:
    """?project=<id>&lose_hosts=<n>&days=<n>: the current table and the history."""
    services.SAMPLE_WITHOUT_BROKER.run_if_due()
    project = request.GET.get("project", "").strip() or None
    lose = request.GET.get("lose_hosts", "").strip() or "0"
    error = ""
    report: Report | None = None
    if not lose.isdigit() or len(lose) > 6:
        error = f"lose_hosts must be a whole number of hosts, 0 or more (not {lose!r})."
    else:
        try:
            report = services.capacity(caller_of(request), project_id=project, lose_hosts=int(lose))
        except ServiceError as exc:
            error = exc.message
    days_text = request.GET.get("days", "")
    days = int(days_text) if days_text.isdigit() and 0 < int(days_text) <= 366 else settings.CAPACITY_HISTORY_DAYS
    groups = (
        [("availability_zone", g.name) for g in report.zones] + [("aggregate", g.name) for g in report.aggregates]
        if report
        else []
    )
    flavors = [name for _, name in report.flavors] if report else []
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(flavors)}
    history = services.history(groups[:MAX_CHARTS], since=timezone.now() - timedelta(days=days))
    charts = [_chart(scope, name, history.get((scope, name), []), colours) for scope, name in groups[:MAX_CHARTS]]
    context = {
        "report": report,
        "error": error,
        "project": project or "",
        "lose_hosts": lose,
        "days": days,
        "flavors": flavors,
        "colours": [(name, colours[name]) for name in flavors],
        "rows": (_rows(report.zones, "zone") + _rows(report.aggregates, "aggregate")) if report else [],
        "charts": charts,
        "more_charts": max(len(groups) - MAX_CHARTS, 0),
        "sample_seconds": settings.CAPACITY_SAMPLE_SECONDS,
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "top_margin": TOP,
    }
    return page(request, context, "dashboard/capacity/capacity.html")
