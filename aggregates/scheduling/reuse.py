"""Reusing a boot's decision for the next boots of the same request, for at
most SCHEDULER_DECISION_REUSE_SECONDS (0, the default, never: every boot
decides afresh, as Nova's scheduler does).

A decision costs a placement query over up to MAX_PLACEMENT_RESULTS
candidates, their host states, every filter and weigher; a burst of boots
of one flavor into one zone asks the same question again and again. Within
the window the worker keeps the decision it made (the hosts that passed,
in weight order, with placement's allocation request for each), accounts
for the servers it placed since (as for the instances of one multi-server
request), keeps its best HOSTS_KEPT hosts, and for each boot re-checks only
the host it is about to claim
(``engine.Recheck``: its service, aggregates, pre-filter exclusions, host
filters and traits as they are now). Placement still refuses a claim on a
host without room. What reuse trades: a host that became better elsewhere
(freed, enabled, added to the zone) is seen when the window ends.

Only single-server boots with no host asked for or hinted are reused; moves,
multi-server requests and explanations always decide afresh. The kept
decisions live in this process (each web worker its own), keyed by the
request spec and the placement query as built now, so a change of the
request's zone aggregates, tenant isolation or flavor makes a new key."""

import threading
import time
from dataclasses import dataclass

from django.conf import settings

from aggregates.scheduling import engine
from aggregates.scheduling.request import RequestSpec

# Decisions kept per process, at most (the oldest go first).
MAX_KEPT = 64
# Hosts a kept decision keeps: its best ones in weight order. Every reuse
# re-weighs them (normalised among themselves); when none is left that may
# take the server, the boot decides afresh.
HOSTS_KEPT = 100


@dataclass
class Kept:
    decision: engine.Decision
    decided_at: float  # time.monotonic()


_lock = threading.Lock()
_kept: dict[str, Kept] = {}


def window() -> float:
    return float(settings.SCHEDULER_DECISION_REUSE_SECONDS)


def key_for(spec: RequestSpec, query_string: str) -> str:
    return f"{spec!r}|{query_string}"


def reusable(spec: RequestSpec, servers: int) -> bool:
    """Whether a boot of ``servers`` servers for ``spec`` may reuse a decision."""
    asked = (
        spec.forced_host,
        spec.forced_node,
        spec.requested_host,
        spec.ignore_hosts,
        spec.same_host,
        spec.different_host,
        spec.preferred_aggregates,
        spec.group,
    )
    return window() > 0 and servers == 1 and spec.num_instances == 1 and not any(asked)


def take(key: str) -> Kept | None:
    """The decision kept under ``key`` if it is within the window, taken out
    (a concurrent boot in another thread decides afresh meanwhile)."""
    with _lock:
        kept = _kept.pop(key, None)
    if kept is None or time.monotonic() - kept.decided_at > window():
        return None
    return kept


def keep(key: str, kept: Kept) -> None:
    with _lock:
        _kept[key] = kept
        now = time.monotonic()
        for stale in [k for k, v in _kept.items() if now - v.decided_at > window()]:
            del _kept[stale]
        while len(_kept) > MAX_KEPT:
            del _kept[next(iter(_kept))]


def forget_all() -> None:
    with _lock:
        _kept.clear()
