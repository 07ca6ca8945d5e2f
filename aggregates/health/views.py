"""``GET /healthcheck`` and ``HEAD /healthcheck``, as oslo.middleware's
healthcheck answers: 200 ``OK`` (HEAD: 204) when this process can serve,
503 with the reasons when it cannot; JSON when asked (``Accept:
application/json``), detailed (each check, its state, its seconds) only
for an admin token. Unauthenticated: probes send no token."""

import json
import platform
import sys
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_safe

from aggregates.compute_api.auth import admin_caller
from aggregates.health import checks

TEXT = "text/plain"
JSON = "application/json"


def wants_json(request: HttpRequest) -> bool:
    """oslo's negotiation among text/plain and application/json (text/plain
    when nothing matches, and on a tie, as oslo's order has it)."""
    return request.get_preferred_type([TEXT, JSON]) == JSON


def _reasons(results: list[checks.Result], healthy: bool) -> list[str]:
    """What anyone may see: ``OK``, or the fixed phrases of the failed checks."""
    if healthy:
        return ["OK"]
    return [result.reason for result in results if not result.available]


def _detailed(results: list[checks.Result], healthy: bool) -> dict[str, Any]:
    """oslo's detailed body (its keys, less the threads' stacks), with each
    check's state and seconds."""
    return {
        "detailed": True,
        "healthy": healthy,
        "now": str(timezone.now()),
        "python_version": sys.version,
        "platform": platform.platform(),
        "reasons": [
            {
                "reason": result.reason,
                "details": result.details,
                "class": result.name,
                "state": result.state,
                "seconds": round(result.seconds, 6),
            }
            for result in results
        ],
    }


@require_safe
def healthcheck(request: HttpRequest) -> HttpResponse:
    results = checks.run_all()
    healthy = all(result.available for result in results)
    status = 200 if healthy else 503
    if request.method == "HEAD":
        return HttpResponse(status=204 if healthy else 503, content_type="text/plain; charset=UTF-8")
    if wants_json(request):
        if admin_caller(request) is not None:
            body: dict[str, Any] = _detailed(results, healthy)
        else:
            body = {"detailed": False, "reasons": _reasons(results, healthy)}
        return HttpResponse(json.dumps(body, indent=4, sort_keys=True), status=status, content_type=JSON)
    text = "\n".join(_reasons(results, healthy))
    return HttpResponse(text, status=status, content_type="text/plain; charset=UTF-8")
