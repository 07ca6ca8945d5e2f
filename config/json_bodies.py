"""Safe JSON request bodies, shared by every API Corral serves (compute,
identity, image, placement) and domain-neutral: each API turns a
``BodyRefused`` into a 400 in its own format.

``loads`` refuses, before anything reaches a schema or the database:

- nesting deeper than ``MAX_DEPTH`` (checked by a scan of the text, before
  the recursive parser runs, so no ``RecursionError`` is possible);
- ``NaN``, ``Infinity``, ``-Infinity`` and numbers that overflow a float
  (``1e999``). Integers of any size parse (Nova takes long numbers as
  extra spec values, stored as text); each API's schema bounds the numbers
  it stores in integer columns;
- NUL characters and lone surrogates in any string, key or value (an
  iterative walk over the parsed value).

``check_text`` applies the same string rules to path ids and query values.
"""

import itertools
import json
import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.http import HttpRequest
    from rest_framework.request import Request


MAX_DEPTH = 100


class BodyRefused(ValueError):
    """The request body (or a path id) cannot be accepted; ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _no_constant(name: str) -> float:
    raise BodyRefused(f"Invalid number {name}: numbers must be finite.")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BodyRefused(f"Invalid number {text[:32]}: numbers must be finite.")
    return value


_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_DELTAS = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """The deepest nesting of arrays and objects in ``text`` (brackets inside
    strings ignored). Bodies with few brackets (most) are answered by
    counting alone; the others without a Python loop per character."""
    count = text.count("[") + text.count("{")
    if count <= limit:
        return count
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(itertools.accumulate(map(_DELTAS.__getitem__, brackets)), default=0)


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored (NUL, lone surrogate), or None."""
    if "\x00" in value:
        return "must not contain NUL characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must not contain lone surrogates (invalid Unicode)"
    return None


def check_text(value: str, what: str = "value") -> str:
    """``value`` itself, or BodyRefused when it holds NUL or a lone surrogate."""
    problem = text_problem(value)
    if problem:
        raise BodyRefused(f"Invalid {what}: {problem}.")
    return value


def check_value(data: object) -> object:
    """Walk a parsed JSON value without recursion; refuse bad strings and numbers."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(key, str):
                    check_text(key, "key")
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            check_text(item, "string")
        elif isinstance(item, float) and not math.isfinite(item):
            raise BodyRefused("Invalid number: numbers must be finite.")
    return data


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)


def loads(raw: bytes | str, max_depth: int = MAX_DEPTH) -> object:
    """Parse a JSON body under the rules above. Malformed JSON raises
    ``ValueError`` (json.JSONDecodeError or UnicodeDecodeError) as
    ``json.loads`` does; refused content raises ``BodyRefused``."""
    text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
    if nesting_depth(text, max_depth) > max_depth:
        raise BodyRefused(f"The request body is nested more than {max_depth} levels deep.")
    # Floats are checked as they are parsed; the walk runs only on bodies
    # with \\u escapes, the only way to write NUL or a lone surrogate in valid
    # JSON (raw ones fail to parse or to decode).
    try:
        data = _DECODER.decode(text)
    except RecursionError:  # pragma: no cover - the depth scan comes first
        raise BodyRefused(f"The request body is nested more than {max_depth} levels deep.") from None
    return check_value(data) if "\\u" in text else data


def escape(value: object, limit: int | None = None) -> str:
    """``value`` as text safe to echo in a message: unencodable characters
    (lone surrogates) and NUL backslash-escaped, optionally cut to ``limit``."""
    text = value if isinstance(value, str) else str(value)
    if limit is not None:
        text = text[:limit]
    if text_problem(text) is None:
        return text
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def request_problem(path: str, query: dict[str, list[str]], headers: dict[str, str]) -> str | None:
    """Why a request's path, query values or header values cannot be read
    (NUL or a lone surrogate in them), or None."""
    if text_problem(path):
        return "The URL path must not contain NUL characters or invalid Unicode."
    for key, values in query.items():
        if text_problem(key) or any(text_problem(value) for value in values):
            return "Query parameters must not contain NUL characters or invalid Unicode."
    for value in headers.values():
        if "\x00" in value:
            return "Header values must not contain NUL characters."
    return None


def problem_of(request: "HttpRequest | Request") -> str | None:
    """``request_problem`` of a Django request."""
    return request_problem(request.path, dict(request.GET.lists()), dict(request.headers))
