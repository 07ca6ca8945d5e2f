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

Where statements are prepared (``prepared.available()``), they go out in
psycopg's pipeline mode instead, each with its parameters bound by the
server: still one round trip (BEGIN, the statements and COMMIT sent, then
the answers read), and each statement planned once per connection.

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
    as Django's own (the transaction rolled back in both cases)."""
    connection.ensure_connection()
    raw = connection.connection
    with connection.wrap_database_errors:
        try:
            if prepared.available():
                return _pipelined(raw, statements)
            return _in_one_query(raw, statements)
        except psycopg.errors.DivisionByZero as stopped:
            _roll_back(raw)
            raise Guarded() from stopped
        except psycopg.Error:
            _roll_back(raw)
            raise


def _pipelined(raw: psycopg.Connection[Any], statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
    """The statements in pipeline mode, each sent apart with its parameters
    (prepared once used enough); answers are read when the pipeline syncs."""
    with raw.pipeline():
        raw.execute("BEGIN")
        cursors = []
        for sql, params in statements:
            cursor = psycopg.Cursor(raw)
            cursor.execute(sql, params)
            cursors.append(cursor)
        raw.execute("COMMIT")
    return [cursor.fetchall() for cursor in cursors]


def _in_one_query(raw: psycopg.Connection[Any], statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
    """The statements as one query text, bound by the client."""
    text = "; ".join(["BEGIN", *(sql for sql, _params in statements), "COMMIT"])
    params = [value for _sql, values in statements for value in values]
    cursor = psycopg.ClientCursor(raw)  # several statements in one query: bound by the client
    cursor.execute(text, params)
    results = []
    while True:
        results.append(cursor.fetchall() if cursor.description else [])
        if not cursor.nextset():
            break
    return results[1:-1]  # not BEGIN's and COMMIT's


def _roll_back(raw: psycopg.Connection[Any]) -> None:
    if not raw.closed and raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        raw.execute("ROLLBACK")
