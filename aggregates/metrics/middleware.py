"""Times every HTTP request into ``corral_http_request_duration_seconds``,
labelled by the URL pattern that matched (never the raw path: the label
set stays bounded whatever clients send)."""

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase

from aggregates.metrics import instruments


def route_of(request: HttpRequest) -> str:
    """The route template that answered ``request`` (its resolved URL
    pattern, prefixes included: ``/compute/v2.1/servers/<str:server_id>``;
    a regular expression as written, ``^compute/``), or ``unmatched``."""
    match = getattr(request, "resolver_match", None)
    if match is None or not match.route:
        return instruments.UNMATCHED_ROUTE
    route: str = match.route
    return route if route.startswith("^") else "/" + route


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.monotonic()
        response = self.get_response(request)
        instruments.http_request(
            route_of(request), request.method or "", response.status_code, time.monotonic() - started
        )
        return response
