"""The demo cloud, seeded once per test process and copied back for each
test that wants it: ``seeded_demo()``.

Seeding the demo goes through the service functions (46 registrations, each
mirrored into placement): seconds per test. The first test of a process
(xdist worker) seeds it and keeps a copy of every table's rows and of the
image store's files; each later test, starting from the empty tables a
transactional test starts from, gets those rows and files back in a fraction
of that. One copy per placement setting (the rows differ when placement is
mirrored in process). What the rows hold is the demo as seeded; anything a
test does is gone with its tables, as before.
"""

import shutil
import tempfile
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, transaction

_snapshots: dict[str, "Snapshot"] = {}


class Snapshot:
    """Every table's rows, and a copy of the image store's files."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[list[str], list[tuple]]] = {}
        self.images = Path(tempfile.mkdtemp(prefix="demo-images-"))

    @classmethod
    def take(cls) -> "Snapshot":
        snapshot = cls()
        with connection.cursor() as cursor:
            for table in _tables():
                cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
                rows = cursor.fetchall()
                if rows:
                    columns = [column[0] for column in cursor.description]
                    snapshot.rows[table] = (columns, rows)
        store = Path(settings.IMAGE_STORE_DIR)
        if store.exists():
            shutil.copytree(store, snapshot.images, dirs_exist_ok=True)
        return snapshot

    def restore(self) -> None:
        quote = connection.ops.quote_name
        # Foreign keys are checked at commit (Django makes them deferrable), so
        # the tables may be filled in any order within one transaction.
        with transaction.atomic(), connection.cursor() as cursor:
            # A transactional test's flush writes the content types and
            # permissions again (post_migrate): the copy's ids replace them.
            for table in self.rows:
                cursor.execute(f"DELETE FROM {quote(table)}")
            for table, (columns, rows) in self.rows.items():
                names = ", ".join(quote(column) for column in columns)
                marks = ", ".join(["%s"] * len(columns))
                cursor.executemany(f"INSERT INTO {quote(table)} ({names}) VALUES ({marks})", rows)
            for statement in connection.ops.sequence_reset_sql(no_style(), apps.get_models(include_auto_created=True)):
                cursor.execute(statement)
        ContentType.objects.clear_cache()
        shutil.copytree(self.images, Path(settings.IMAGE_STORE_DIR), dirs_exist_ok=True)


def _tables() -> list[str]:
    known = set(connection.introspection.table_names())
    return sorted(
        {model._meta.db_table for model in apps.get_models(include_auto_created=True) if model._meta.managed} & known
    )


def seeded_demo() -> None:
    """The demo cloud in this (transactional) test's empty tables: seeded the
    first time in this process for the current placement setting, copied back
    after that. Its hosts then report in, as the demo's agents would."""
    from aggregates.demo import seed as demo

    key = f"{settings.PLACEMENT_URL}|{connection.vendor}"
    snapshot = _snapshots.get(key)
    if snapshot is None:
        call_command("seed_demo", verbosity=0)
        _snapshots[key] = Snapshot.take()
    else:
        snapshot.restore()
    demo.heartbeat()
