"""Request bodies and path ids of the compute API. Bodies are checked by the
shared schema checking (aggregates.schema_check), whose Invalid becomes a
400 fault with the same message."""

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from aggregates import schema_check
from aggregates.errors import Invalid

from .errors import ApiError

T = TypeVar("T")


def validate(body: T, schema: Mapping[str, Any]) -> T:
    """Check a request body against ``schema``; raise a 400 fault on the first error."""
    try:
        return schema_check.check(body, schema)
    except Invalid as exc:
        raise ApiError(400, exc.message) from exc


_INT_RE = re.compile(r"^-?\d+$")


def path_int(value: str | int, message: str | None = None) -> int:
    """Path ids that must be integers: 400, never 404, when they are not."""
    if not _INT_RE.match(str(value)):
        raise ApiError(400, message or f"Invalid id: {value}")
    return int(value)
