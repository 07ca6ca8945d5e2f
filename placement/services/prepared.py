"""Statements whose plans PostgreSQL keeps.

Placement's hottest statements (a claim, an aggregate replacement, the reads
each nova-compute sends every minute) are short: planning one costs
PostgreSQL about as much as running it. Sent with their parameters bound
by the server, the same text each time, they are prepared on a
connection's second use (settings: ``prepare_threshold``, on unless
``DB_PREPARED_STATEMENTS=0``) and planned once per connection rather than
once per request. Django's own queries are bound by the client and never
prepared.

``available()`` tells whether statements are prepared (PostgreSQL, not
turned off); ``rows()`` runs one statement, prepared where available and
through Django's cursor elsewhere."""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db import connection
from django.db.backends.utils import CursorWrapper


def available() -> bool:
    """Whether this connection prepares statements sent with server-side parameters."""
    if connection.vendor != "postgresql":
        return False
    return connection.settings_dict.get("OPTIONS", {}).get("prepare_threshold") is not None


def rows(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of one statement (``%s`` placeholders), prepared on PostgreSQL
    when ``available()``, through Django's cursor (its errors, its
    execute wrappers, its query log) either way."""
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@contextmanager
def _cursor() -> Iterator[CursorWrapper]:
    if not available():
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.ensure_connection()
    # Parameters sent apart from the text, so that the text repeats and is prepared.
    server_bound = psycopg.Cursor(connection.connection)
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    with wrap(server_bound) as cursor:  # type: ignore[arg-type]  # (django-stubs type it as a wrapper)
        yield cursor
