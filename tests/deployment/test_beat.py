"""Exactly one beat: a second ``celery beat`` started against the same
database (by mistake, or as a standby) sends nothing while the first holds
the beat lease, and takes over when the first dies. Observed through the
beats' logs ("Sending due task", with the time) and the schedule's row."""

import os
import re
import signal
from datetime import datetime

import pytest

from tests.process_stack import VENV_BIN, Processes, _Database, wait_until

pytestmark = pytest.mark.processes

PERIOD = 1.0  # seconds between two runs of the test's schedule
LEASE = 2  # BEAT_LEASE_SECONDS: a beat renews it every third of that
# A beat's log line (LOGGING's text format: time, level, logger, request ids).
SENT = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO celery\.beat \[[^\]]*\] Scheduler: Sending due task every-second ",
    re.M,
)

ONE_FAST_SCHEDULE = """
from django_celery_beat.models import IntervalSchedule, PeriodicTask
PeriodicTask.objects.update(enabled=False)
every = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.SECONDS)
PeriodicTask.objects.create(name="every-second", task="corral.mirroring.drain_mirror_requests", interval=every)
"""

RUN_COUNT = """
from django_celery_beat.models import PeriodicTask
print(PeriodicTask.objects.get(name="every-second").total_run_count)
"""


@pytest.fixture
def beats(tmp_path):
    """Beats sharing one database: a SQLite file, or a PostgreSQL database of
    their own when the suite runs on PostgreSQL."""
    database = _Database(tmp_path, "beats")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "DATABASE_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": database.url,
        "CELERY_BROKER_URL": "memory://",  # the beat only sends; no worker runs the tasks here
        "BEAT_LEASE_SECONDS": str(LEASE),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)

    def start(name, lease=LEASE):
        processes.env = {**env, "BEAT_LEASE_SECONDS": str(lease)}
        return processes.start(name, str(VENV_BIN / "celery"), "-A", "config", "beat", "-l", "info")

    def log(name):
        return (tmp_path / f"{name}.log").read_text()

    def run_count():
        return int(processes.run(str(VENV_BIN / "python"), "manage.py", "shell", "-c", RUN_COUNT).stdout.split()[-1])

    try:
        processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
        processes.run(str(VENV_BIN / "python"), "manage.py", "shell", "-c", ONE_FAST_SCHEDULE)
        yield start, log, run_count
    finally:
        processes.stop_all()
        database.drop()


def sends(text):
    return [datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp() for stamp in SENT.findall(text)]


def test_a_second_beat_runs_nothing_twice_and_takes_over_when_the_first_dies(beats):
    start, log, run_count = beats
    first = start("first")
    wait_until(lambda: len(sends(log("first"))) >= 1, 60, "the first beat to send")
    assert "holds the beat lease" in log("first")

    second = start("second")
    wait_until(lambda: "waits" in log("second"), 60, "the second beat to wait")
    sent_by_first = len(sends(log("first")))
    wait_until(lambda: len(sends(log("first"))) >= sent_by_first + 4, 30, "four more periods")
    assert sends(log("second")) == []  # the standby sent nothing
    # Each run is written as it is sent (the standby reads it when it takes
    # over): the count read lies between the sends logged before and after
    # the read (which starts a process: a second or more, a send or more),
    # give or take the send in flight.
    logged_before = len(sends(log("first")))
    runs = run_count()
    logged_after = len(sends(log("first")))
    assert logged_before - 1 <= runs <= logged_after + 1, (logged_before, runs, logged_after)

    first.send_signal(signal.SIGKILL)  # no goodbye: its lease runs out
    first.wait(10)
    killed_after = sends(log("first"))[-1]
    wait_until(lambda: len(sends(log("second"))) >= 3, 30, "the second beat to take over")
    assert "holds the beat lease" in log("second")
    taken_over = sends(log("second"))[0]
    assert taken_over - killed_after <= LEASE + 3  # the lease, a retry interval, a beat tick
    assert second.poll() is None

    # Once per period, never twice: no two sends, by either beat, closer than most of a period.
    every = sorted(sends(log("first")) + sends(log("second")))
    gaps = [later - earlier for earlier, later in zip(every, every[1:], strict=False)]
    assert min(gaps) >= PERIOD * 0.5, gaps


def test_a_beat_stopped_with_sigterm_hands_over_at_once(beats):
    start, log, _ = beats
    lease = 6  # long enough to tell a handover from a lease running out
    first = start("first", lease)
    wait_until(lambda: len(sends(log("first"))) >= 1, 60, "the first beat to send")
    start("second", lease)
    wait_until(lambda: "waits" in log("second"), 60, "the second beat to wait")

    first.send_signal(signal.SIGTERM)
    assert first.wait(15) == 0
    stopped = sends(log("first"))[-1]
    wait_until(lambda: sends(log("second")), 30, "the second beat to take over")
    # Released on the way out: no waiting for the lease to run out.
    assert sends(log("second"))[0] - stopped < lease * 2 / 3
    assert "let go of the beat lease" in log("first")
