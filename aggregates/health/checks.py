"""The checks behind /healthcheck, each timed. A ``failed`` check means this
process cannot serve (503: take it out of the pool); a ``degraded`` one is
shown to admins only and keeps the answer 200: placement or the broker down
is absorbed by the outbox, and every web node would leave the pool at once."""

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from celery import current_app
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.executor import MigrationExecutor
from django.db.utils import load_backend

from aggregates.placement_client.inprocess import is_own_placement
from aggregates.placement_client.session import PlacementClient

OK = "ok"
DEGRADED = "degraded"
FAILED = "failed"


@dataclass
class Result:
    """One check: its name, state, the reason a probe sees when it fails
    (a fixed phrase, never exception text), details for admins, seconds."""

    name: str
    state: str
    reason: str = "OK"
    details: str = ""
    seconds: float = 0.0

    @property
    def available(self) -> bool:
        return self.state != FAILED


class Unhealthy(Exception):
    """A check's failure: the reason probes see, and the details admins see."""

    def __init__(self, reason: str, details: str, state: str = FAILED) -> None:
        super().__init__(details)
        self.reason, self.details, self.state = reason, details, state


def disabled_by_file() -> Result | None:
    """oslo's disable_by_file backend: while HEALTHCHECK_DISABLE_BY_FILE
    exists the node is out of the pool (drained before a restart)."""
    path = settings.HEALTHCHECK_DISABLE_BY_FILE
    if path and os.path.exists(path):
        return Result("disable_by_file", FAILED, "DISABLED BY FILE", f"Path {path!r} was found")
    return None


def fresh_connection() -> BaseDatabaseWrapper:
    """A new connection to the default database, not the one requests use:
    the check sees whether a connection can be made now, within
    HEALTHCHECK_TIMEOUT. A SQLite file is opened read-write, never created."""
    params = dict(connections.settings[DEFAULT_DB_ALIAS])
    options = dict(params.get("OPTIONS") or {})
    timeout = settings.HEALTHCHECK_TIMEOUT
    if params["ENGINE"] == "django.db.backends.sqlite3":
        options["timeout"] = timeout
        name = str(params["NAME"])
        if name != ":memory:" and not name.startswith("file:"):
            params["NAME"] = f"file:{name}?mode=rw"
    elif params["ENGINE"] == "django.db.backends.postgresql":
        options["connect_timeout"] = max(1, round(timeout))
    params["OPTIONS"] = options
    wrapper: BaseDatabaseWrapper = load_backend(params["ENGINE"]).DatabaseWrapper(params, DEFAULT_DB_ALIAS)
    return wrapper


def database(connection: BaseDatabaseWrapper) -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        raise Unhealthy("DATABASE UNAVAILABLE", f"{type(exc).__name__}: {exc}") from exc
    return f"{connection.vendor}: connected"


def migrations(connection: BaseDatabaseWrapper) -> str:
    """Every migration on disk is applied (the migration executor's plan to
    the leaf nodes is empty): code newer than its schema cannot serve."""
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        names = ", ".join(f"{m.app_label}.{m.name}" for m, _ in plan[:5])
        raise Unhealthy("MIGRATIONS NOT APPLIED", f"{len(plan)} migration(s) not applied: {names}")
    return f"{len(executor.loader.applied_migrations or {})} applied"


def placement() -> str:
    if is_own_placement(settings.PLACEMENT_URL):
        return "served in this process (from the database)"
    timeout = settings.HEALTHCHECK_TIMEOUT
    try:
        PlacementClient(timeout=(timeout, timeout)).answers()
    except Exception as exc:
        raise Unhealthy("PLACEMENT UNAVAILABLE", f"{type(exc).__name__}: {exc}", DEGRADED) from exc
    return "answers"


def broker() -> str:
    if not settings.CELERY_BROKER_URL:
        return "none: tasks run in this process"
    try:
        with current_app.connection_for_write(settings.CELERY_BROKER_URL) as connection:
            connection.ensure_connection(max_retries=1, timeout=math.ceil(settings.HEALTHCHECK_TIMEOUT))
    except Exception as exc:
        raise Unhealthy("BROKER UNAVAILABLE", f"{type(exc).__name__}: {exc}", DEGRADED) from exc
    return "connected"


def _run(name: str, check: Callable[[], str]) -> Result:
    started = time.perf_counter()
    try:
        details = check()
        result = Result(name, OK, "OK", details)
    except Unhealthy as unhealthy:
        result = Result(name, unhealthy.state, unhealthy.reason, unhealthy.details)
    except Exception as exc:  # a check never turns the probe into a 500
        result = Result(name, FAILED, f"{name.upper()} CHECK FAILED", f"{type(exc).__name__}: {exc}")
    result.seconds = time.perf_counter() - started
    return result


def run_all() -> list[Result]:
    """Every check, in order: the disable file (alone when it is there), the
    database, the migrations (skipped when the database is down), then
    placement and the broker (degraded at worst)."""
    disabled = disabled_by_file()
    if disabled is not None:
        return [disabled]
    connection = fresh_connection()
    try:
        results = [_run("database", lambda: database(connection))]
        if results[0].available:
            results.append(_run("migrations", lambda: migrations(connection)))
    finally:
        connection.close()
    results.append(_run("placement", placement))
    results.append(_run("broker", broker))
    return results
