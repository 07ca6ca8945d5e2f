"""The benchmarks' own PostgreSQL databases: dropped and created afresh
(never the databases the tests or a deployment use)."""

import subprocess

PROTECTED = ("test", "test_test", "postgres")


def recreate(database_url: str) -> None:
    """Drop and create the database of ``database_url`` (refusing the protected names)."""
    name = database_url.rsplit("/", 1)[1]
    if name in PROTECTED:
        raise SystemExit(f"refusing to drop database {name}")
    server = database_url.rsplit("/", 1)[0] + "/postgres"
    subprocess.run(["psql", server, "-qc", f"DROP DATABASE IF EXISTS {name}"], check=True)
    subprocess.run(["psql", server, "-qc", f"CREATE DATABASE {name}"], check=True)
