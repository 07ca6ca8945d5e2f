"""The counters and histograms Corral's processes record, and one function
per thing recorded (the code that records imports this module and nothing
else of the metrics). They live in Corral's own registry, so a scrape shows
only Corral's metrics. With PROMETHEUS_MULTIPROC_DIR set (in the
environment, before the process starts) every gunicorn and Celery worker
writes its values to files there and a scrape sums them
(prometheus-client's multiprocess mode)."""

import re
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

LONG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, float("inf"))

HTTP_REQUEST = Histogram(
    "corral_http_request_duration_seconds",
    "Seconds to answer an HTTP request, by route template (the URL pattern that matched), method and status.",
    ["route", "method", "status"],
    registry=REGISTRY,
)
PLACEMENT_REQUEST = Histogram(
    "corral_placement_request_duration_seconds",
    "Seconds of a request to placement, by operation (method and path template) and status ('unreachable': no answer).",
    ["operation", "status"],
    registry=REGISTRY,
)
SCHEDULER_DECISION = Histogram(
    "corral_scheduler_decision_seconds",
    "Seconds to schedule one boot or move request: decide, claim, and explain a failure.",
    registry=REGISTRY,
    buckets=LONG_BUCKETS,
)
NO_VALID_HOST = Counter(
    "corral_scheduler_no_valid_host",
    "Requests that found no valid host, once per stage and filter that rejected hosts in the failed decision.",
    ["stage", "filter"],
    registry=REGISTRY,
)
TASK_DURATION = Histogram(
    "corral_celery_task_duration_seconds",
    "Seconds a Celery task ran, by task name and final state.",
    ["task", "state"],
    registry=REGISTRY,
    buckets=LONG_BUCKETS,
)
TASK_FAILURES = Counter(
    "corral_celery_task_failures",
    "Celery tasks that raised, by task name.",
    ["task"],
    registry=REGISTRY,
)

UNMATCHED_ROUTE = "unmatched"
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


def http_request(route: str, method: str, status: int, seconds: float) -> None:
    HTTP_REQUEST.labels(route or "/", method, str(status)).observe(seconds)


def path_template(path: str) -> str:
    """A placement path without its query string, each uuid as ``{uuid}``:
    the operation label never carries a provider or consumer."""
    path = path.split("?", 1)[0]
    return "/".join("{uuid}" if _UUID.match(part) else part for part in path.split("/")) or "/"


def placement_request(method: str, path: str, status: str, seconds: float) -> None:
    PLACEMENT_REQUEST.labels(f"{method} {path_template(path)}", status).observe(seconds)


def scheduling(seconds: float, no_valid_host: Iterable[tuple[str, str]] | None = None) -> None:
    """One scheduled request; ``no_valid_host``: the (stage, filter) pairs
    that rejected hosts when it found none (None when it found hosts)."""
    SCHEDULER_DECISION.observe(seconds)
    if no_valid_host is not None:
        for stage, name in set(no_valid_host) or {("none", "")}:
            NO_VALID_HOST.labels(stage, name).inc()


def task_finished(task: str, state: str, seconds: float) -> None:
    TASK_DURATION.labels(task, state).observe(seconds)


def task_failed(task: str) -> None:
    TASK_FAILURES.labels(task).inc()
