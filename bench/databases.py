"""The benchmarks' own PostgreSQL databases: dropped and created afresh
(never the databases the tests or a deployment use); and Django set up in
the benchmark's own process on one of them."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROTECTED = ("test", "test_test", "postgres")


def recreate(database_url: str, template: str | None = None) -> None:
    """Drop and create the database of ``database_url`` (refusing the
    protected names): empty, or a copy of the database ``template``."""
    name = database_url.rsplit("/", 1)[1]
    if name in PROTECTED:
        raise SystemExit(f"refusing to drop database {name}")
    server = database_url.rsplit("/", 1)[0] + "/postgres"
    subprocess.run(["psql", server, "-qc", f"DROP DATABASE IF EXISTS {name}"], check=True)
    copy = f" TEMPLATE {template}" if template else ""
    subprocess.run(["psql", server, "-qc", f"CREATE DATABASE {name}{copy}"], check=True)


def start_django(database_url: str, **environment: str) -> None:
    """Django in this process on ``database_url``, as the in-process
    benchmarks run Corral: its placement in process, no broker, no
    authentication, warnings only, hosts never down once built (they
    heartbeat once); ``environment`` adds or overrides settings."""
    os.environ.update(
        {
            "DATABASE_URL": database_url,
            "PLACEMENT_URL": "",
            "CELERY_BROKER_URL": "",
            "AUTH_STRATEGY": "noauth2",
            "LOG_LEVEL": "WARNING",
            "SERVICE_DOWN_TIME": "86400",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            **environment,
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
