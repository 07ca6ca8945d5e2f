"""What runs once a change commits, and how Corral copes without a broker.

A service function writes its change and leaves the follow-up work (apply
outbox rows, build servers, run a move, start a job, remove a file) to run
once the transaction commits: ``dispatch`` sends it to a Celery worker when
there is a broker, and runs it in this process when there is none (Celery
eager: gunicorn alone), in the request's thread or in a thread of its own.
The change is committed already, so a failure here never fails the
request: it is logged, and the periodic task that finds work left behind
(the outbox drain, resume_builds, the job drain...) takes it up.

Work that calls placement (``outbound``) never holds a request longer than
FOLLOW_UP_WAIT_SECONDS: it runs in a follow-up thread, which the request
waits for that long, and goes on after the response when placement is
slow, down, or this very server (PLACEMENT_URL naming Corral itself, whose
workers may all be busy waiting). Its record (the outbox row, the server in
BUILD, the migration) is committed already; if the process stops first,
the catch-up takes the work up. The follow-up threads (at most
FOLLOW_UP_THREADS; more work waits for one) are kept from one piece of work
to the next with their database connections, as a request thread keeps
its own (CONN_MAX_AGE): a new connection for each piece cost PostgreSQL a
backend start and its catalog reads, about 10 ms for a boot's build. One
idle for FOLLOW_UP_THREAD_IDLE_SECONDS closes its connection and ends; a
process that exits first waits for the work given to them (a management
command ends once its work is done). FOLLOW_UP_WAIT_SECONDS = None runs
the work in the request's thread instead, with no bound.

Without a broker there is no beat to run those periodic tasks either: each
is then a ``CatchUp`` that this process runs after its own follow-up work,
at most once per its interval, one thread at a time, never inside a
transaction.
"""

import atexit
import contextvars
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Generic, TypeVar

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, connection, transaction

log = logging.getLogger(__name__)

# The threads ``dispatch`` started and that may still run (see ``wait_for_threads``).
_threads: "weakref.WeakSet[threading.Thread]" = weakref.WeakSet()

T = TypeVar("T")


def without_broker() -> bool:
    """Celery runs tasks eagerly: there is no broker, no worker and no beat."""
    return bool(current_app.conf.task_always_eager)


def task(name: str, *args: Any) -> Callable[[], object]:
    """``dispatch``'s ``send`` for the Celery task ``name`` with ``args``."""
    return lambda: current_app.send_task(name, args=list(args))


def dispatch(
    here: Callable[[], object],
    *,
    failure: str,
    send: Callable[[], object] | None = None,
    thread: str = "",
    outbound: str = "",
    if_failed: Callable[[], object] | None = None,
) -> Callable[[], None]:
    """Once the current transaction commits (at once when none is open):
    ``send`` the work to a worker when there is a broker, else run it
    ``here``, in this thread or, given a ``thread`` name, in a thread of its
    own (which closes its database connection when done). Work that calls
    placement names its thread as ``outbound``: the request waits for it at
    most FOLLOW_UP_WAIT_SECONDS (see the module's docstring). Without
    ``send`` the work runs here whatever the broker. When sending or running
    fails, ``failure`` is logged with the error and ``if_failed`` runs.
    Returns the hook registered (``is_pending`` tells whether it is still
    to run)."""

    def hook() -> None:
        try:
            if send is not None and not without_broker():
                send()
            elif thread:
                _started(threading.Thread(target=_in_context(_closing), name=thread, daemon=True))
            elif outbound and settings.FOLLOW_UP_WAIT_SECONDS is not None:
                _bounded(_follow_up_threads.submit(_in_context(_guarded)))
            else:
                here()
        except Exception:  # noqa: BLE001 - the change is committed; what is left behind is taken up later
            _failed()

    def _bounded(done: "Future[None]") -> None:
        try:
            done.result(settings.FOLLOW_UP_WAIT_SECONDS)
        except FutureTimeout:
            log.info("%s goes on after the response (placement is slow to answer)", outbound)

    def _in_context(run: Callable[[], None]) -> Callable[[], None]:
        """``run`` in a copy of this context (the request's ids)."""
        context = contextvars.copy_context()
        return lambda: context.run(run)

    def _guarded() -> None:
        try:
            here()
        except Exception:  # noqa: BLE001 - as above, in the thread
            _failed()

    def _closing() -> None:
        try:
            _guarded()
        finally:
            connection.close()

    def _failed() -> None:
        log.exception("%s", failure)
        if if_failed is not None:
            if_failed()

    transaction.on_commit(hook)
    return hook


def _started(worker: threading.Thread) -> None:
    _threads.add(worker)
    worker.start()


def wait_for_threads(timeout: float) -> None:
    """Wait, at most ``timeout`` seconds in all, for the threads ``dispatch``
    started to end and for the work given to the follow-up threads to be
    done (a test's jobs, before its tables are emptied)."""
    deadline = time.monotonic() + timeout
    for worker in list(_threads):
        worker.join(max(0.0, deadline - time.monotonic()))
    _follow_up_threads.wait(max(0.0, deadline - time.monotonic()))


class FollowUpThreads:
    """The threads that run outbound follow-up work: started as work comes
    (at most ``FOLLOW_UP_THREADS``), each kept with its database connection
    while work keeps coming, and ended, its connection closed, once idle for
    ``FOLLOW_UP_THREAD_IDLE_SECONDS``. Daemon threads: ``stop`` (run at
    exit) lets them finish the work given to them first."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], None], Future[None]] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._idle = 0
        self._pending: set[Future[None]] = set()

    def submit(self, work: Callable[[], None]) -> "Future[None]":
        """Run ``work`` in a follow-up thread; its future is done when it has run."""
        done: Future[None] = Future()
        with self._lock:
            self._pending.add(done)
            self._queue.put((work, done))
            if self._queue.qsize() > self._idle:
                self._start_one()
        return done

    def _start_one(self) -> None:
        """Start a thread, unless FOLLOW_UP_THREADS run already (the lock held)."""
        if len(self._threads) < settings.FOLLOW_UP_THREADS:
            worker = threading.Thread(target=self._serve, name="corral-follow-up", daemon=True)
            self._threads.add(worker)
            worker.start()

    def _serve(self) -> None:
        idle_seconds = settings.FOLLOW_UP_THREAD_IDLE_SECONDS
        me = threading.current_thread()
        while True:
            with self._lock:
                self._idle += 1
            try:
                item = self._queue.get(timeout=idle_seconds)
            except queue.Empty:
                with self._lock:
                    self._idle -= 1
                    if not self._queue.empty():
                        continue  # work came as the wait ended: this thread takes it
                    self._threads.discard(me)
                connection.close()
                return
            with self._lock:
                self._idle -= 1
                if item is None:  # stop
                    self._threads.discard(me)
            if item is None:
                connection.close()
                return
            work, done = item
            # As a request does: a connection past CONN_MAX_AGE, broken or
            # left in a transaction is closed (the next query opens another).
            close_old_connections()
            try:
                work()
            finally:
                close_old_connections()
                with self._lock:
                    self._pending.discard(done)
                done.set_result(None)

    def wait(self, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds, for the work given so far to be done."""
        deadline = time.monotonic() + timeout
        with self._lock:
            pending = list(self._pending)
        for done in pending:
            try:
                done.result(max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                return

    def stop(self) -> None:
        """End every thread once the work given to them is done (each closes
        its database connection); later work starts threads again."""
        with self._lock:
            threads = list(self._threads)
            for _ in threads:
                self._queue.put(None)
        for worker in threads:
            worker.join()
        with self._lock:
            # The stops of threads that ended idle meanwhile are left over,
            # maybe before work given since: that work gets a thread.
            left = []
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    left.append(item)
            for item in left:
                self._queue.put(item)
            for _ in range(len(left) - self._idle):
                self._start_one()


_follow_up_threads = FollowUpThreads()
atexit.register(_follow_up_threads.stop)


def stop_follow_up_threads() -> None:
    """End the follow-up threads now (their work done, their connections
    closed): before a test database is dropped."""
    _follow_up_threads.stop()


def is_pending(hook: Callable[[], None]) -> bool:
    """Whether ``hook`` (from ``dispatch``) waits for the current transaction to commit."""
    return any(callback is hook for _, callback, _ in transaction.get_connection().run_on_commit)


class CatchUp(Generic[T]):
    """Periodic work that the beat runs when there is a broker: without one,
    this process runs it (``run_if_due``) after its own follow-up work, at
    most once every ``every`` seconds (a number, or a function giving it),
    one thread at a time and never inside a transaction. A failure is
    logged: the request that triggered it is committed and answered."""

    def __init__(self, what: str, work: Callable[[], T], every: float | Callable[[], float]) -> None:
        self.what = what
        self.work = work
        self.every = every
        self.last = float("-inf")  # monotonic time of the last run
        self.lock = threading.Lock()

    def interval(self) -> float:
        return self.every() if callable(self.every) else self.every

    def reset(self) -> None:
        """As if it never ran (a fresh process)."""
        self.last = float("-inf")

    def run_if_due(self, now: float | None = None) -> T | None:
        """Run the work when there is no broker and the interval is over;
        its result, or None when it did not run (or failed)."""
        if not without_broker() or transaction.get_connection().in_atomic_block:
            return None
        if not self.lock.acquire(blocking=False):
            return None
        try:
            now = time.monotonic() if now is None else now
            if now - self.last < self.interval():
                return None
            self.last = now
            try:
                return self.work()
            except Exception:  # noqa: BLE001 - the request is committed and answered already
                log.exception("%s failed", self.what)
                return None
        finally:
            self.lock.release()
