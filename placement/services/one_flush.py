"""A short transaction in one round trip to PostgreSQL.

A write of a few statements costs, on a loaded machine, mostly its round
trips: BEGIN, each statement, COMMIT, each waiting for the database's answer
before the next is sent. Here the statements go out together as one query
text (BEGIN; the statements; COMMIT), their parameters bound by the client,
and the answers are read once; the database still runs them one after the
other, each statement with its own snapshot taken after the one before it
finished (READ COMMITTED), so a statement that follows a lock sees what was
committed before the lock was granted.

A statement whose result would make the rest wrong stops the transaction
with a *guard*: ``1 / 0`` evaluated in SQL (``guard(condition)``), after
which the database skips what follows and nothing of the transaction stays.
The caller then takes its ordinary path, in a transaction of its own.

Where statements are prepared (``prepared``), the text is BEGIN, the
statements' EXECUTEs and COMMIT: each planned once per connection.

Only outside any transaction Django has open (a request's own write), and
only on PostgreSQL; ``available()`` tells."""

from collections.abc import Sequence
from typing import Any

import psycopg
from django.db import connection

from . import prepared


class Guarded(Exception):
    """A guard stopped the transaction: nothing it did was kept."""


def available() -> bool:
    return connection.vendor == "postgresql" and not connection.in_atomic_block and connection.get_autocommit()


def guard(condition: str) -> str:
    """A SELECT-list expression that stops the transaction unless ``condition`` holds."""
    return f"1 / (CASE WHEN {condition} THEN 1 ELSE 0 END)"


def run(statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
    """The rows of each statement, all run in one transaction sent at once.
    Raises Guarded when a guard stopped it; any other error of the database
    as Django's own (the transaction rolled back in both cases). Where
    statements are prepared and one was found missing (someone deallocated
    it), they are prepared again and the transaction sent once more."""
    return prepared.run(_run, statements)


def _run(statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
    connection.ensure_connection()
    raw = connection.connection
    text = "; ".join(["BEGIN", *(sql for sql, _params in statements), "COMMIT"])
    params = [value for _sql, values in statements for value in values]
    cursor = psycopg.ClientCursor(raw)  # several statements in one query: bound by the client
    with connection.wrap_database_errors:
        try:
            cursor.execute(text, params)
        except psycopg.errors.DivisionByZero as stopped:
            _roll_back(raw)
            raise Guarded() from stopped
        except psycopg.Error:
            _roll_back(raw)
            raise
        results = []
        while True:
            results.append(cursor.fetchall() if cursor.description else [])
            if not cursor.nextset():
                break
        return results[1:-1]  # not BEGIN's and COMMIT's


def _roll_back(raw: psycopg.Connection[Any]) -> None:
    if not raw.closed and raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        raw.execute("ROLLBACK")
