"""Statements whose plans PostgreSQL keeps.

Placement's hottest statements (a claim, an aggregate replacement, the reads
each nova-compute sends every minute) are short: planning one costs
PostgreSQL about as much as running it. On PostgreSQL (unless
``DB_PREPARED_STATEMENTS=0``) each is prepared once on a connection
(``PREPARE``, sent on its own the first time the connection needs it) and
then sent as ``EXECUTE name(values)``, bound by the client like any of
Django's queries, so that a transaction of several is still one query text
(``one_flush``). Planned once per connection, not once per request.

Not psycopg's own prepared statements (protocol-level, prepared after a
threshold of uses): psycopg deallocates every prepared statement of a
connection whenever that connection rolls a transaction back (any 409
inside a transaction), ours with its own. SQL-level ones outlive rollbacks.

``as_executed()`` turns statements into their EXECUTEs, preparing what the
connection lacks; ``run()`` hands them so to a caller's runner (and again
on a new connection if one went missing); ``rows()`` runs one statement so,
through Django's cursor."""

import hashlib
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection

# The SQL type a parameter is declared with, by its Python type (bool before int: a bool is an int).
_SQL_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "bigint"),
    (float, "double precision"),
    (str, "text"),
    (datetime, "timestamptz"),
    (list, "text[]"),
)
_SQL_TYPE_OF = dict(_SQL_TYPES)
T = TypeVar("T")
# Statements as callers give them: (SQL with %s placeholders, its parameters).
Statements = Sequence[tuple[str, Sequence[Any]]]
MISSING_STATEMENT = "26000"  # PostgreSQL's invalid_sql_statement_name: EXECUTE of an unknown name
# (statement, its parameters' SQL types) -> (name, PREPARE text)
_statements: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = {}
# The most statements kept prepared on a connection, and shapes remembered
# (a claim's text grows with its providers and classes: a client could make many).
MOST_PER_CONNECTION = 200
MOST_SHAPES = 2000
# A database connection (psycopg's) -> the names prepared on it.
_prepared_on: "weakref.WeakKeyDictionary[Any, set[str]]" = weakref.WeakKeyDictionary()


def available() -> bool:
    """Whether statements are prepared: on PostgreSQL, unless turned off."""
    return connection.vendor == "postgresql" and settings.DB_PREPARED_STATEMENTS


def _sql_type(value: object) -> str:
    if value is None:
        return "text"  # a NULL compared with a text column
    name = _SQL_TYPE_OF.get(type(value))
    if name is not None:
        return name
    for kind, name in _SQL_TYPES:
        if isinstance(value, kind):
            return name
    raise TypeError(f"no SQL type for a parameter of type {type(value).__name__}")


def _prepared_form(sql: str, types: tuple[str, ...]) -> tuple[str, str]:
    """(the statement's name, its PREPARE): ``%s`` placeholders numbered."""
    found = _statements.get((sql, types))
    if found is None:
        if len(_statements) >= MOST_SHAPES:
            _statements.clear()
        pieces = sql.split("%s")
        if len(pieces) != len(types) + 1 or "%%" in sql:
            raise ValueError("a prepared statement takes one %s per parameter and no other %")
        name = "corral_" + hashlib.blake2b(f"{sql}\0{types}".encode(), digest_size=12).hexdigest()
        body = pieces[0] + "".join(f"${number}{piece}" for number, piece in enumerate(pieces[1:], 1))
        declared = f" ({', '.join(types)})" if types else ""
        found = _statements[(sql, types)] = (name, f"PREPARE {name}{declared} AS {body}")
    return found


def as_executed(statements: Statements) -> list[tuple[str, Sequence[Any]]]:
    """``statements`` (SQL with ``%s`` placeholders, parameters) as the
    EXECUTEs of statements prepared on Django's connection (opened if need
    be), preparing first, in one query of their own, those it lacks."""
    connection.ensure_connection()
    raw = connection.connection
    known = _prepared_on.setdefault(raw, set())
    executed: list[tuple[str, Sequence[Any]]] = []
    forms: dict[str, str] = {}  # name -> PREPARE
    for sql, params in statements:
        name, forms[name] = _prepared_form(sql, tuple(_sql_type(value) for value in params))
        marks = f"({', '.join(['%s'] * len(params))})" if params else ""
        executed.append((f"EXECUTE {name}{marks}", params))
    missing = [name for name in forms if name not in known]
    if missing:
        texts = [forms[name] for name in missing]
        if len(known) + len(missing) > MOST_PER_CONNECTION:  # start afresh
            known.clear()
            missing, texts = list(forms), ["DEALLOCATE ALL", *forms.values()]
        # Sent apart (not a request's statement): a PREPARE outlives any
        # transaction it runs in, so it is known once it succeeded.
        with connection.wrap_database_errors:
            raw.execute("; ".join(texts))
        known.update(missing)
    return executed


def _is_missing_statement(error: BaseException) -> bool:
    """Whether ``error`` (psycopg's, or Django's around it) says a statement
    run by name is not on the connection (someone deallocated it)."""
    return MISSING_STATEMENT in (getattr(error, "sqlstate", None), getattr(error.__cause__, "sqlstate", None))


def run(runner: Callable[[Statements], T], statements: Statements) -> T:
    """``runner``'s answer for ``statements`` (SQL with ``%s`` placeholders,
    parameters): as their EXECUTEs when ``available()``, as they are
    elsewhere. Outside a transaction, a statement found missing (someone
    deallocated it) is prepared again on a new connection and ``runner``
    called once more."""
    if not available():
        return runner(statements)
    try:
        return runner(as_executed(statements))
    except Exception as error:
        if not _is_missing_statement(error) or connection.in_atomic_block:
            raise
        # A new connection: the record of what is prepared on this one says
        # the statement is there, the server (a pooler's reset) says not.
        connection.close()
        return runner(as_executed(statements))


def rows(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of one statement (``%s`` placeholders), prepared as ``run``
    says, through Django's cursor (its errors, its execute wrappers, its
    query log)."""
    return run(_fetch, [(sql, params)])


def _fetch(statements: Statements) -> list[tuple[Any, ...]]:
    ((sql, params),) = statements
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
