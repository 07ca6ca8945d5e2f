"""A Corral deployment in processes of its own, for the fault tests that
kill a real Celery worker: a gunicorn server, Celery workers on Redis, and
``manage.py`` runs, sharing one database — a PostgreSQL database of its own
when the suite runs on PostgreSQL (dropped afterwards), else a SQLite file."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import requests
from django.db import connection

from tests.plugins.upstream_placement import free_port

PROJECT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def redis_answers():
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def wait_until(check, timeout=60, what="condition"):
    """``check()``'s first truthy value (a request that fails counts as not yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
        except requests.RequestException:
            value = None
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Processes:
    """Subprocesses started by one test in ``workdir`` with ``env``, stopped together."""

    def __init__(self, workdir, env):
        self.workdir, self.env, self.started = workdir, env, []

    def run(self, *args):
        return subprocess.run(args, cwd=PROJECT, env=self.env, check=True, capture_output=True, text=True, timeout=300)

    def register_host(self, host):
        """``manage.py register_host`` in a process of its own: 4 vCPUs, 1 GiB, 10 GB."""
        return self.run(
            str(VENV_BIN / "python"),
            "manage.py",
            "register_host",
            host,
            "--vcpus",
            "4",
            "--memory-mb",
            "1024",
            "--disk-gb",
            "10",
        )

    def start(self, name, *args, env=None):
        """Start ``args`` in a session of its own, logging to ``name``.log;
        ``env`` adds to (or overrides) the shared environment."""
        log = open(self.workdir / f"{name}.log", "ab")
        process = subprocess.Popen(
            args,
            cwd=PROJECT,
            env={**self.env, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.started.append(process)
        return process

    def stop_all(self):
        for process in self.started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.started:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def serve(processes, port):
    """Start Corral under gunicorn (one sync worker) and wait until it answers; its URL."""
    processes.start("server", str(VENV_BIN / "gunicorn"), "-b", f"127.0.0.1:{port}", "-w", "1", "config.wsgi")
    url = f"http://127.0.0.1:{port}"
    wait_until(lambda: requests.get(url + "/compute/", timeout=2).status_code == 200, what="the Corral server")
    return url


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
        # FORCE: a run killed before its teardown may have left processes connected.
        self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)', f'CREATE DATABASE "{self.name}"')
        auth = self.server["user"] + (f":{self.server['password']}" if self.server["password"] else "")
        self.url = f"postgres://{auth}@{self.server['host']}:{self.server['port']}/{self.name}"

    def _admin(self, *statements):
        with psycopg.connect(dbname="postgres", autocommit=True, **self.server) as admin:
            for statement in statements:
                admin.execute(statement)

    def drop(self):
        if self.postgres:
            self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def stack_env(workdir: Path, database_url: str, redis_url: str, settings: dict[str, str]) -> dict[str, str]:
    """The environment every process of a stack shares (no authentication: the token ``admin``)."""
    return {
        **os.environ,
        "CORRAL_VAR_DIR": str(workdir),
        "DATABASE_URL": database_url,
        "AUTH_STRATEGY": "noauth2",
        "CELERY_BROKER_URL": redis_url,
        "PLACEMENT_URL": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **settings,
    }


def prepare(processes: Processes) -> None:
    """Migrate the stack's database and empty its Redis database of old messages."""
    processes.run(str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput")
    flush_redis(processes.env["CELERY_BROKER_URL"])


def flush_redis(url: str) -> None:
    """FLUSHDB on the database of ``url`` (redis://host:port/n): a stack's
    own, emptied of what an earlier run left (a Celery purge, without
    starting Celery)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=10) as sock:
        sock.sendall(f"SELECT {parts.path.strip('/') or 0}\r\nFLUSHDB\r\n".encode())
        answer = b""
        while answer.count(b"\r\n") < 2:
            answer += sock.recv(64)
    assert answer == b"+OK\r\n+OK\r\n", answer


def process_stack(workdir: Path, label: str, redis_url: str, settings: dict[str, str]):
    """Start the server (generator: yields (url, run, start, workdir); stops
    every process it started and drops its database when closed)."""
    database = _Database(workdir, label)
    processes = Processes(workdir, stack_env(workdir, database.url, redis_url, settings))
    try:
        prepare(processes)
        url = serve(processes, free_port())
        yield url, processes.run, processes.start, workdir
    finally:
        processes.stop_all()
        database.drop()


def descendants(pid):
    """The ids of every process below ``pid`` (children, their children...), read from /proc."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid):
    """Whether ``pid`` is a running process (a zombie, dead but not reaped, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
