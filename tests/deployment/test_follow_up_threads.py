"""Without a broker, follow-up work that calls placement (builds, moves,
mirroring) runs in this process's follow-up threads: kept from one piece of
work to the next with their database connections, at most
FOLLOW_UP_THREADS of them, each ended (its connection closed) once idle."""

import threading
import time

import pytest
from django.db import connection

from aggregates import after_commit
from tests.process_stack import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

THREAD_NAME = "corral-follow-up"


@pytest.fixture(autouse=True)
def fresh_threads(settings):
    """No follow-up thread of an earlier test; none left to the next."""
    after_commit.stop_follow_up_threads()
    settings.FOLLOW_UP_WAIT_SECONDS = 10
    yield
    after_commit.stop_follow_up_threads()


def follow_up(work):
    """Give ``work`` to the follow-up threads as a service does (no
    transaction is open: at once); the request's wait applies."""
    after_commit.dispatch(work, failure="the test's work failed", outbound="the test's work")


def backend():
    """This thread's database session: PostgreSQL's backend pid, else the connection object."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]
    return id(connection.connection)


def follow_up_threads():
    return [t for t in threading.enumerate() if t.name == THREAD_NAME and t.is_alive()]


def test_work_runs_in_a_kept_thread_on_its_kept_connection():
    seen = []

    def work():
        seen.append((threading.current_thread(), backend()))

    follow_up(work)
    follow_up(work)
    assert len(seen) == 2
    (first_thread, first_backend), (second_thread, second_backend) = seen
    assert first_thread.name == THREAD_NAME and first_thread is not threading.current_thread()
    assert second_thread is first_thread
    if connection.vendor == "postgresql":  # CONN_MAX_AGE keeps it; SQLite's is 0
        assert second_backend == first_backend
        assert second_backend != backend()  # not the request's


def test_an_idle_thread_ends_and_closes_its_connection(settings):
    settings.FOLLOW_UP_THREAD_IDLE_SECONDS = 0.2
    seen = []
    follow_up(lambda: seen.append(backend()))
    assert len(seen) == 1
    wait_until(lambda: not follow_up_threads(), timeout=10, what="the idle follow-up thread to end")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [seen[0]])
            assert cursor.fetchone()[0] == 0
    seen.clear()
    follow_up(lambda: seen.append(backend()))  # later work starts a thread again
    assert len(seen) == 1


def test_at_most_follow_up_threads_run_and_the_rest_waits(settings):
    settings.FOLLOW_UP_THREADS = 2
    settings.FOLLOW_UP_WAIT_SECONDS = 0  # the request does not wait
    release = threading.Event()
    lock = threading.Lock()
    state = {"running": 0, "peak": 0, "done": 0}

    def work():
        with lock:
            state["running"] += 1
            state["peak"] = max(state["peak"], state["running"])
        release.wait(10)
        with lock:
            state["running"] -= 1
            state["done"] += 1

    for _ in range(5):
        follow_up(work)
    wait_until(lambda: state["running"] == 2, timeout=10, what="two pieces of work to run")
    time.sleep(0.2)
    assert state["peak"] == 2 and len(follow_up_threads()) == 2
    release.set()
    after_commit.wait_for_threads(timeout=10)
    assert state["done"] == 5
    assert state["peak"] == 2


def test_stopping_lets_the_given_work_finish(settings):
    settings.FOLLOW_UP_WAIT_SECONDS = 0
    done = []

    def slow():
        time.sleep(0.3)
        done.append(True)

    follow_up(slow)
    follow_up(slow)
    after_commit.stop_follow_up_threads()
    assert done == [True, True]
    assert not follow_up_threads()
