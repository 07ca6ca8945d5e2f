"""Nova's extra-spec operator grammar: does an aggregate's value satisfy a
flavor's requirement such as ``>= 4``, ``<in> ssd`` or ``<or> a <or> b``?

The requirement is split on whitespace. When its first word is one of the
operators below, the value is compared with the operand(s) that follow;
otherwise the whole requirement must equal the value exactly. An operator
without an operand never matches, and extra operands are ignored (except by
``<all-in>`` and ``<or>``, which use them all).

``=`` means *at least* (float(value) >= float(operand)), and there is no
numeric ``>`` or ``<``. A numeric operator given something that is not a
number raises :class:`SchedulingInputError` rather than quietly not
matching."""

import operator
from collections.abc import Callable


class SchedulingInputError(ValueError):
    """A requirement or an aggregate value that the grammar cannot compare."""


def _number(text: str, op: str, requirement: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise SchedulingInputError(
            f"operator {op!r} compares numbers, but {text!r} is not a number (requirement {requirement!r})"
        ) from None


_NUMERIC: dict[str, Callable[[float, float], bool]] = {
    "=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
}

_STRING: dict[str, Callable[[str, str], bool]] = {
    "s==": operator.eq,
    "s!=": operator.ne,
    "s<": operator.lt,
    "s<=": operator.le,
    "s>": operator.gt,
    "s>=": operator.ge,
    "<in>": lambda value, operand: operand in value,
}

OPERATORS: frozenset[str] = frozenset(_NUMERIC) | frozenset(_STRING) | {"<all-in>", "<or>"}


def operator_of(requirement: str) -> str | None:
    """The requirement's operator, or None when it is a plain value."""
    words = requirement.split()
    return words[0] if words and words[0] in OPERATORS else None


def match(value: str, requirement: str) -> bool:
    """Whether the aggregate ``value`` satisfies the flavor's ``requirement``."""
    op = operator_of(requirement)
    if op is None:
        return value == requirement
    operands = requirement.split()[1:]
    if not operands:
        return False
    if op == "<or>":
        # "<or> a <or> b": every other word is a candidate, as in Nova.
        return value in operands[::2]
    if op == "<all-in>":
        return all(operand in value for operand in operands)
    if op in _NUMERIC:
        return _NUMERIC[op](_number(value, op, requirement), _number(operands[0], op, requirement))
    return _STRING[op](value, operands[0])
