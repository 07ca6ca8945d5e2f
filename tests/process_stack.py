"""A Corral deployment in processes of its own, for the fault tests that
kill a real Celery worker: a gunicorn server, Celery workers on Redis, and
``manage.py`` runs, sharing one database — a PostgreSQL database of its own
when the suite runs on PostgreSQL (dropped afterwards), else a SQLite file."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import requests
from django.db import connection

from tests.mirroring.conftest import free_port

PROJECT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def wait_until(check, timeout=60, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class _Database:
    """The stack's database: its URL, and how to drop it afterwards."""

    def __init__(self, workdir: Path, label: str):
        settings = connection.settings_dict
        self.postgres = connection.vendor == "postgresql"
        if not self.postgres:
            self.url = f"sqlite:///{workdir}/corral.sqlite3"
            return
        self.server = {
            "host": settings.get("HOST") or "127.0.0.1",
            "port": settings.get("PORT") or 5432,
            "user": settings.get("USER") or "postgres",
            "password": settings.get("PASSWORD") or None,
        }
        self.name = f"{settings['NAME']}_{label}"[:63]
        self._admin(f'DROP DATABASE IF EXISTS "{self.name}"', f'CREATE DATABASE "{self.name}"')
        auth = self.server["user"] + (f":{self.server['password']}" if self.server["password"] else "")
        self.url = f"postgres://{auth}@{self.server['host']}:{self.server['port']}/{self.name}"

    def _admin(self, *statements):
        with psycopg.connect(dbname="postgres", autocommit=True, **self.server) as admin:
            for statement in statements:
                admin.execute(statement)

    def drop(self):
        if self.postgres:
            self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def process_stack(workdir: Path, label: str, redis_url: str, settings: dict[str, str]):
    """Start the server (generator: yields (url, run, start, workdir); stops
    every process it started and drops its database when closed)."""
    database = _Database(workdir, label)
    env = {
        **os.environ,
        "CORRAL_VAR_DIR": str(workdir),
        "DATABASE_URL": database.url,
        "AUTH_STRATEGY": "noauth2",
        "CELERY_BROKER_URL": redis_url,
        "PLACEMENT_URL": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **settings,
    }
    started = []

    def run(*args, **kw):
        return subprocess.run(args, cwd=PROJECT, env=env, check=True, capture_output=True, text=True, timeout=300, **kw)

    def start(name, *args):
        log = open(workdir / f"{name}.log", "ab")
        process = subprocess.Popen(
            args, cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        started.append(process)
        return process

    try:
        run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
        run(str(VENV_BIN / "celery"), "-A", "config", "purge", "-f")
        port = free_port()
        start("server", str(VENV_BIN / "gunicorn"), "-b", f"127.0.0.1:{port}", "-w", "1", "config.wsgi")
        url = f"http://127.0.0.1:{port}"

        def up():
            try:
                return requests.get(url + "/compute/", timeout=2).status_code == 200
            except requests.RequestException:
                return False

        wait_until(up, what="the Corral server")
        yield url, run, start, workdir
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        database.drop()
