"""Exactly one beat: the schedules stored in the database (django-celery-beat)
are sent by whichever ``celery beat`` holds the beat lease (``leases.hold``,
a row in the database, on PostgreSQL and SQLite alike). A second beat,
started by mistake or as a standby, sends nothing: it waits, asking for the
lease every third of BEAT_LEASE_SECONDS, and takes over when the holder
stops renewing it (it died: at most BEAT_LEASE_SECONDS later) or lets it go
(stopped with SIGTERM or Ctrl-C: at once).

The holder renews the lease every third of BEAT_LEASE_SECONDS, and writes
each schedule's last run as it sends it, so the beat that takes over reads
where the previous one left off and sends nothing twice. The lease is
measured by each beat's clock, as the long jobs' leases are: keep the
machines' clocks synchronised (NTP), far closer than BEAT_LEASE_SECONDS.

Every beat, holder or standby, touches BEAT_HEARTBEAT_FILE on each tick of
its loop (every few seconds), so that ``manage.py liveness beat`` can tell
a beat that runs from one that hangs or died.
"""

import logging
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connections
from django_celery_beat.schedulers import DatabaseScheduler

from aggregates.jobs import leases

log = logging.getLogger(__name__)

LEASE_NAME = "celery-beat"
CLOSE_SECONDS = 10  # writing the last runs and letting go of the lease, at most


def touch_heartbeat() -> None:
    path = Path(settings.BEAT_HEARTBEAT_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


class SingleBeatScheduler(DatabaseScheduler):
    """django-celery-beat's database scheduler, sending only while it holds the beat lease."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.token = leases.worker_token()
        self.leading = False
        self.renewed_at = 0.0
        self.waiting_said = False
        super().__init__(*args, **kwargs)
        self.sync_every_tasks = 1  # each run written as it is sent: a beat taking over knows it

    @property
    def lease_seconds(self) -> float:
        return float(settings.BEAT_LEASE_SECONDS)

    def tick(self, *args: Any, **kwargs: Any) -> float:
        """Send what is due when holding the lease; the seconds until the next call."""
        touch_heartbeat()
        if not self._lead():
            return self.lease_seconds / 3
        until_renewal = self.renewed_at + self.lease_seconds / 3 - time.monotonic()
        return max(0.0, min(float(super().tick(*args, **kwargs)), until_renewal))

    def _lead(self) -> bool:
        """Whether this beat holds the lease (taken or renewed when a third of it has passed)."""
        if self.leading and time.monotonic() - self.renewed_at < self.lease_seconds / 3:
            return True
        asked_at = time.monotonic()
        try:
            close_old_connections()
            held = leases.hold(LEASE_NAME, self.token, self.lease_seconds)
        except DatabaseError as exc:
            log.warning("Beat %s could not reach the database to hold the beat lease: %s", self.token, exc)
            held = False
        if held:
            self.renewed_at = asked_at
            if not self.leading:
                log.info("Beat %s holds the beat lease: it sends the schedules.", self.token)
                self._read_schedules_afresh()
            self.leading, self.waiting_said = True, False
            return True
        if self.leading:
            log.warning("Beat %s lost the beat lease: it sends nothing until it holds it again.", self.token)
        elif not self.waiting_said:
            log.info(
                "Beat %s waits: the beat lease is held by %s; this beat takes over if that one stops.",
                self.token,
                self._holder(),
            )
            self.waiting_said = True
        self.leading = False
        self._dirty.clear()  # the holder writes the runs
        return False

    @staticmethod
    def _holder() -> str:
        try:
            lease = leases.holder_of(LEASE_NAME)
        except DatabaseError:
            lease = None
        return f"{lease.holder} until {lease.expires_at:%H:%M:%S}" if lease and lease.holder else "another beat"

    def _read_schedules_afresh(self) -> None:
        """Read the schedules and their last runs from the database, as the previous holder left them."""
        self._dirty.clear()
        self._initial_read = True  # the next tick reads every schedule as at start
        self._heap = None  # and orders them again
        self._heap_invalidated = False

    def reserve(self, entry: Any) -> Any:
        """The entry after this run, kept in the schedule too (django-celery-beat
        keeps the one before it there): the heap is ordered again from the
        schedule when it changes, and the entry from before the run would be
        due again at once, sent twice."""
        new_entry = super().reserve(entry)
        if self._schedule is not None and new_entry.name in self._schedule:
            self._schedule[new_entry.name] = new_entry
        return new_entry

    def close(self) -> None:
        """Write the last runs, then let go of the lease so that a waiting beat
        takes over at once. Done in a thread of its own, on a database
        connection of its own: SIGTERM's handler calls this in the beat's
        thread, possibly in the middle of one of the beat's own queries, whose
        connection is not to be used again (psycopg's connection lock is held
        by that query: using it from the handler hung the beat)."""
        closing = threading.Thread(target=self._close_on_own_connection, name="beat-close", daemon=True)
        closing.start()
        closing.join(CLOSE_SECONDS)
        if closing.is_alive():
            log.warning("Beat %s did not close within %s s: its lease runs out instead.", self.token, CLOSE_SECONDS)

    def _close_on_own_connection(self) -> None:
        try:
            super().close()
        except DatabaseError as exc:
            log.warning("Beat %s could not write its last runs: %s", self.token, exc)
        finally:
            if self.leading:
                self.leading = False
                try:
                    if leases.let_go(LEASE_NAME, self.token):
                        log.info("Beat %s let go of the beat lease.", self.token)
                except DatabaseError as exc:
                    log.warning("Beat %s could not let go of the beat lease (it runs out): %s", self.token, exc)
            connections.close_all()
