"""``manage.py liveness worker|beat``: exit 0 for a live process, 1 (and why)
for a dead one; the beat's scheduler touches its heartbeat on every tick."""

import os
import socket
import subprocess
import time

import pytest
from django.core.management import CommandError, call_command

from tests.process_stack import PROJECT, VENV_BIN, Processes, redis_answers, wait_until

REDIS_URL = "redis://127.0.0.1:6379/13"


@pytest.mark.django_db(transaction=True)  # the beat's scheduler closes its connections
def test_beat_is_dead_without_a_heartbeat_and_alive_after_its_scheduler_ticks(settings, tmp_path, capsys):
    from config import celery_app

    settings.BEAT_HEARTBEAT_FILE = str(tmp_path / "beat-heartbeat")
    with pytest.raises(CommandError, match="no heartbeat file") as dead:
        call_command("liveness", "beat")
    assert dead.value.returncode == 1

    from aggregates.jobs.beat import SingleBeatScheduler

    SingleBeatScheduler(app=celery_app).tick()
    call_command("liveness", "beat")
    assert "beat alive" in capsys.readouterr().out


def test_a_beat_heartbeat_older_than_the_limit_is_dead(settings, tmp_path):
    heartbeat = tmp_path / "beat-heartbeat"
    heartbeat.touch()
    old = time.time() - 120
    os.utime(heartbeat, (old, old))
    settings.BEAT_HEARTBEAT_FILE = str(heartbeat)
    settings.BEAT_HEARTBEAT_MAX_AGE = 60
    with pytest.raises(CommandError, match="more than 60 s"):
        call_command("liveness", "beat")
    call_command("liveness", "beat", "--max-age", "300")


def test_no_worker_is_alive_without_a_broker(settings):
    settings.CELERY_BROKER_URL = ""
    with pytest.raises(CommandError, match="no broker") as dead:
        call_command("liveness", "worker")
    assert dead.value.returncode == 1


@pytest.mark.processes
@pytest.mark.skipif(not redis_answers(), reason="Redis is not reachable on 127.0.0.1:6379")
def test_a_real_worker_and_beat_answer_and_a_stopped_worker_does_not(tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "PLACEMENT_", "DATABASE_"))},
        "CORRAL_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path}/corral.sqlite3",
        "CELERY_BROKER_URL": REDIS_URL,
        "BEAT_HEARTBEAT_FILE": str(tmp_path / "beat-heartbeat"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    processes = Processes(tmp_path, env)
    name = f"liveness-test@{socket.gethostname()}"

    def liveness(*args):
        return subprocess.run(
            [str(VENV_BIN / "python"), "manage.py", "liveness", *args],
            cwd=PROJECT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    try:
        processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
        assert liveness("beat").returncode == 1
        worker = processes.start(
            "worker", str(VENV_BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "-n", name, "-l", "info"
        )
        processes.start("beat", str(VENV_BIN / "celery"), "-A", "config", "beat", "-l", "info")
        wait_until(lambda: liveness("worker", "--name", name, "--timeout", "2").returncode == 0, what="the worker")
        wait_until(lambda: liveness("beat").returncode == 0, what="the beat's heartbeat")

        worker.terminate()
        worker.wait(timeout=30)
        stopped = liveness("worker", "--name", name, "--timeout", "2")
        assert stopped.returncode == 1
        assert "did not answer" in stopped.stderr
    finally:
        processes.stop_all()
