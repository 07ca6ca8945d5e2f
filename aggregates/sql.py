"""Filtering by long lists of values.

``field__in=[...]`` with a thousand values sends a thousand parameters,
which the PostgreSQL driver splits and quotes one by one (about 10 ms per
query for a scheduler's candidates). On PostgreSQL the list goes as one
array literal (one text parameter, cast by the server); other databases
keep the plain IN list."""

from collections.abc import Iterable, Sequence
from typing import Any, cast

from django.db import connection
from django.db.models import Field, Model, Q
from django.db.models.expressions import RawSQL


def among(model: type[Model], field_name: str, values: Iterable[Any]) -> Q:
    """The condition ``field_name IN values`` on ``model``'s rows."""
    values = list(values)
    if connection.vendor != "postgresql":
        return Q(**{f"{field_name}__in": values})
    field = cast("Field[Any, Any]", model._meta.get_field(field_name))  # a column, never a reverse relation
    db_type = field.cast_db_type(connection)
    return Q(**{f"{field_name}__in": RawSQL(f"SELECT unnest(%s::{db_type}[])", (array_literal(values),))})


def array_literal(values: Sequence[Any]) -> str:
    """A PostgreSQL array literal of ``values``' text, each element
    double-quoted with its backslashes and quotes escaped: joined by NUL
    (which no PostgreSQL text holds) and escaped in one pass over the whole
    text, not one call per element."""
    if not values:
        return "{}"
    text = "\0".join(map(str, values))
    if text.count("\0") != len(values) - 1:
        # A value holds a NUL: escaped alone (PostgreSQL refuses it, as before).
        return "{" + ",".join(_element(value) for value in values) + "}"
    return '{"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\0", '","') + '"}'


def _element(value: Any) -> str:
    """One element of a PostgreSQL array literal, double-quoted."""
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'
