"""Host maintenance and capacity headroom in the console.

- The host page's "Maintenance" card (``maintenance_card``): a form whose
  first submit shows the dry-run plan (each server and the host it would
  go to, or why it would stay) and a Confirm button that starts the job
  (``submit``, called by ``host_views.host_maintenance``: post, redirect to
  the job page, get). Stop works the same way, with its rebalance option.
- The maintenance jobs: a list and a job page whose progress fragment is
  polled by ``dashboard/precache.js`` (the same data attributes as the
  image cache jobs': ``#job-live[data-poll-url]``, ``#job-progress[data-finished]``).
- Capacity headroom of an aggregate or a zone (``headroom``): how many of
  its most loaded hosts it can lose before a server is stranded, computed
  with ``capacity_headroom`` for 1, 2, ... lost hosts up to the first that
  strands something. The aggregate and zones pages load it as a fragment
  (``dashboard/maintenance.js``), so they stay as cheap as they were.
"""

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect

from aggregates.errors import Invalid, NotFound, ServiceError, Unavailable
from aggregates.hosts.models import Service
from aggregates.maintenance import services
from aggregates.maintenance.headroom import Headroom, ResourceHeadroom, capacity_headroom
from aggregates.maintenance.models import MaintenanceJob
from aggregates.maintenance.planning import PlannedMove
from aggregates.placement_client import PlacementError

from .console import caller_of, console_view, form_error, page, paginate

# Headroom: at most this many capacity_headroom calls (1, 2, ... lost hosts).
HEADROOM_MAX_CALLS = 5
# Beyond this many hosts only the loss of one host is computed.
HEADROOM_FULL_LIMIT = 50
# Stranded servers named in the sentence (the table lists them all).
HEADROOM_NAMED = 5
FRAGMENT_HEADER = "X-Console-Fragment"


# --- the host page's card --------------------------------------------------------------


class MaintenanceForm(forms.Form):
    action = forms.ChoiceField(choices=MaintenanceJob.ACTIONS, widget=forms.HiddenInput)
    reason = forms.CharField(
        max_length=255,
        required=False,
        help_text=f"Recorded as the compute service's disabled reason (default “{services.DEFAULT_REASON}”).",
    )
    strategy = forms.ChoiceField(
        choices=[(MaintenanceJob.LIVE, "live migration"), (MaintenanceJob.COLD, "cold migration")],
        initial=MaintenanceJob.LIVE,
        widget=forms.RadioSelect,
    )
    prefer_aggregate_peers = forms.BooleanField(
        required=False, initial=True, label="Prefer hosts that share an aggregate with this one"
    )
    rebalance = forms.BooleanField(
        required=False, initial=False, label="Move back the servers the maintenance moved away"
    )

    def options(self) -> dict[str, Any]:
        data = self.cleaned_data
        options: dict[str, Any] = {"strategy": data["strategy"]}
        if data["action"] == MaintenanceJob.START:
            options.update(reason=data["reason"] or None, prefer_aggregate_peers=data["prefer_aggregate_peers"])
        else:
            options.update(rebalance=data["rebalance"])
        return options


def maintenance_card(
    host: str, form: MaintenanceForm | None = None, plan: services.Plan | None = None
) -> dict[str, Any]:
    """What the host page's Maintenance card shows: whether the host is in
    maintenance, its last job, and the form (with the plan of a preview)."""
    last = services.last_job(host)
    active = services.in_maintenance(host)
    action = MaintenanceJob.STOP if active else MaintenanceJob.START
    if form is None:
        form = MaintenanceForm(initial={"action": action}, auto_id="id_maint_%s")
    return {
        "active": active,
        "last_job": last,
        # A stop must wait for the drain to end (the service refuses it before).
        "busy": last is not None and not last.is_finished,
        "action": action,
        "form": form,
        "plan": plan,
        "plan_rows": [
            {"move": move, "resources": ", ".join(f"{rc} {amount}" for rc, amount in sorted(move.resources.items()))}
            for move in (plan.servers if plan is not None else [])
        ],
    }


def submit(request: HttpRequest, host: str) -> tuple[HttpResponseRedirect | None, dict[str, Any] | None, int]:
    """The card's POST: without ``confirm`` the dry run (nothing changes),
    with it the maintenance itself. Returns (a redirect to the job, None, 302)
    or (None, the card to show again, its status)."""
    form = MaintenanceForm(request.POST, auto_id="id_maint_%s")
    plan = None
    status = 400
    if form.is_valid():
        action = form.cleaned_data["action"]
        confirm = request.POST.get("confirm") == "1"
        try:
            result = services.maintain(caller_of(request), host, action, dry_run=not confirm, **form.options())
        except ServiceError as exc:
            form_error(form, exc)
            status = exc.status if exc.status in (400, 409, 503) else 400
        except PlacementError as exc:  # the services wrap it as Unavailable; in case one slips through
            form.add_error(None, f"Placement could not be read: {exc.message}")
            status = 503
        else:
            if isinstance(result, MaintenanceJob):
                verb = "Maintenance of" if action == MaintenanceJob.START else "End of maintenance of"
                messages.success(request, f"{verb} {host} started: {result.total} server(s) to move.")
                return redirect("dashboard:maintenance_job", result.uuid), None, 302
            plan = result
    card = maintenance_card(host, form=form, plan=plan)
    if plan is not None:
        card["confirm_values"] = form.cleaned_data
        return None, card, 200
    return None, card, status


# --- jobs --------------------------------------------------------------------------------


def _job_or_404(job_uuid: uuid.UUID) -> MaintenanceJob:
    try:
        return services.get_job(str(job_uuid))
    except NotFound as exc:
        raise Http404(exc.message)


@console_view
def job_list(request: HttpRequest) -> HttpResponse:
    rows = services.jobs()
    status = request.GET.get("status")
    if status in dict(MaintenanceJob.STATUSES):
        rows = rows.filter(status=status)
    host = request.GET.get("host", "").strip()
    if host:
        rows = rows.filter(host=host)
    current, querystring = paginate(request, rows)
    context = {"page": current, "querystring": querystring, "statuses": MaintenanceJob.STATUSES, "host": host}
    return page(request, context, "dashboard/maintenance/jobs.html")


@console_view
def job_detail(request: HttpRequest, job_uuid: uuid.UUID) -> HttpResponse:
    return page(request, {"job": _job_or_404(job_uuid)}, "dashboard/maintenance/job.html")


@console_view
def job_progress(request: HttpRequest, job_uuid: uuid.UUID) -> HttpResponse:
    """The part of the job page that changes while it runs (polled by precache.js)."""
    return page(request, {"job": _job_or_404(job_uuid)}, "dashboard/maintenance/_progress.html")


# --- headroom ------------------------------------------------------------------------------


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def short_reason(move: PlannedMove, figures: Mapping[str, ResourceHeadroom]) -> str:
    """Why a stranded server stays, in a few words: the resource classes no
    host has room for (those the remaining hosts would run short of, else
    every class it asks), or the filters that refused every host."""
    rejected = move.rejected_by or {}
    if not rejected or {"planned_usage", "resources"} & set(rejected):
        short = [
            rc
            for rc, amount in sorted(move.resources.items())
            if amount and rc in figures and figures[rc].free_after < amount
        ]
        if short:
            return f"no host has room for {', '.join(short)}"
        short = _short_on_every_host(move)
        if short:
            return f"no host it may go to has room for {', '.join(short)}"
        if rejected:
            return "no single host has room left for it"
    if rejected:
        return "refused by " + ", ".join(sorted(rejected))
    return (move.reason or "no valid host").split(". ")[0][:120]


def _short_on_every_host(move: PlannedMove) -> list[str]:
    """The classes every host of a "no room left" explanation lacks for the
    server (the explanation lists each host as ``name (VCPU 3, MEMORY_MB 0 free)``)."""
    rooms = [
        dict((rc, int(amount)) for rc, amount in re.findall(r"([A-Z][A-Z0-9_]+) (-?\d+)", inside))
        for inside in re.findall(r"\(([^()]*) free\)", move.reason or "")
    ]
    if not rooms:
        return []
    return [
        rc
        for rc, amount in sorted(move.resources.items())
        if amount and all(rc in room and room[rc] < amount for room in rooms)
    ]


def headroom_summary(*, aggregate_id: int | None = None, zone: str | None = None) -> dict[str, Any]:
    """How many hosts the aggregate (or zone) can lose: ``capacity_headroom``
    for 1, 2, ... lost hosts (at most HEADROOM_MAX_CALLS, and only 1 beyond
    HEADROOM_FULL_LIMIT hosts) up to the first that strands a server. A dict
    for the template: ``sentence``, the ``headroom`` shown in the table (the
    first failing count, else the last computed), ``problem`` when placement
    could not be read or the set is too small."""
    scope: dict[str, Any] = {"aggregate_id": aggregate_id} if aggregate_id is not None else {"availability_zone": zone}
    summary: dict[str, Any] = {
        "scope": "aggregate" if aggregate_id is not None else "zone",
        "name": zone,
        "problem": "",
    }
    try:
        headroom = capacity_headroom(**scope, hosts=1)
        total = len(headroom.hosts)
        limit = 1 if total > HEADROOM_FULL_LIMIT else min(HEADROOM_MAX_CALLS, total - 1)
        lost = 1
        while headroom.fits and lost < limit:
            lost += 1
            headroom = capacity_headroom(**scope, hosts=lost)
    except NotFound:
        raise
    except Invalid as exc:
        summary["problem"] = exc.message
        return summary
    except (Unavailable, PlacementError) as exc:
        summary["problem"] = f"Placement could not be read, so the headroom is unknown: {exc.message}"
        summary["unavailable"] = True
        return summary
    except ServiceError as exc:
        summary["problem"] = exc.message
        return summary
    remaining = [host for host in headroom.hosts if host not in headroom.lost_hosts]
    disabled = sorted(
        Service.objects.filter(binary=Service.COMPUTE, host__in=remaining, disabled=True).values_list("host", flat=True)
    )
    figures = {figure.resource_class: figure for figure in headroom.resources}
    stranded = [{"move": move, "why": short_reason(move, figures)} for move in headroom.stranded]
    summary.update(
        name=headroom.name,
        headroom=headroom,
        total=total,
        lost=lost,
        remaining=total - len(headroom.lost_hosts),
        disabled=disabled,
        stranded=stranded,
        partial=total > HEADROOM_FULL_LIMIT,
        sentence=_sentence(headroom, total, lost, limit, stranded),
    )
    return summary


def _sentence(headroom: Headroom, total: int, lost: int, limit: int, stranded: Sequence[Mapping[str, Any]]) -> str:
    hosts = _plural(total, "host")
    if headroom.fits:
        if lost >= total - 1:
            return f"Can lose {lost} of {hosts}: the servers of all but one would fit on the last."
        if total > HEADROOM_FULL_LIMIT:
            return f"Can lose 1 of {hosts} (only the loss of one host was computed: there are more than 50)."
        return f"Can lose at least {lost} of {hosts} (checked up to {lost})."
    named = ", ".join(
        f"{row['move'].name or row['move'].server_uuid} ({row['why']})" for row in stranded[:HEADROOM_NAMED]
    )
    more = f", and {len(stranded) - HEADROOM_NAMED} more" if len(stranded) > HEADROOM_NAMED else ""
    losing = (
        f"losing {lost} ({', '.join(headroom.lost_hosts)}) strands {_plural(len(stranded), 'server')}: {named}{more}."
    )
    if lost == 1:
        return f"Cannot lose any of {hosts}: {losing}"
    return f"Can lose {lost - 1} of {hosts}; {losing}"


@console_view
def headroom(request: HttpRequest) -> HttpResponse:
    """?aggregate=<id> or ?zone=<name>: the headroom panel, as a page or
    (with the X-Console-Fragment header) as the fragment the aggregate and
    zones pages load."""
    aggregate = request.GET.get("aggregate", "")
    zone = request.GET.get("zone", "")
    if aggregate:
        if not aggregate.isdigit():
            raise Http404("No such aggregate.")
        scope: dict[str, Any] = {"aggregate_id": int(aggregate)}
    elif zone:
        scope = {"zone": zone}
    else:
        raise Http404("Name an aggregate or a zone.")
    try:
        summary = headroom_summary(**scope)
    except NotFound as exc:
        raise Http404(exc.message)
    context = {"summary": summary, "aggregate_id": scope.get("aggregate_id")}
    if request.headers.get(FRAGMENT_HEADER) == "headroom":
        return page(request, context, "dashboard/maintenance/_headroom.html")
    return page(request, context, "dashboard/maintenance/headroom.html")
