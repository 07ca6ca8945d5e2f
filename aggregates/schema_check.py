"""Checking values against JSON schemas, with Nova's messages:
``Invalid input for field/attribute <field>. Value: <value>. <reason>``.

Domain-neutral: the compute API turns the ``Invalid`` raised here into a 400
fault (aggregates.compute_api.validation), the console into a form error,
a management command into a CommandError; all show the same text. The
formats named here (``name``, ``az_name``...) are those of the shared value
schemas in aggregates.value_schemas."""

import unicodedata
import uuid
from collections.abc import Mapping
from typing import Any, TypeVar

from jsonschema import Draft4Validator, FormatChecker
from jsonschema.exceptions import FormatError

from aggregates.errors import Invalid

format_checker = FormatChecker()

T = TypeVar("T")


def _is_printable(char: str) -> bool:
    if ord(char) > 0xFFFE:
        return False
    category = unicodedata.category(char)
    return not (category.startswith("C") or (category.startswith("Z") and category != "Zs"))


def _check_name(value: object, allow_edge_spaces: bool = False, forbid_colon: bool = False) -> bool:
    if not isinstance(value, str):
        return True
    if not all(_is_printable(c) for c in value):
        raise FormatError("The name must be printable characters.")
    if not allow_edge_spaces and value != value.strip():
        raise FormatError("The name can not start or end with whitespace.")
    if allow_edge_spaces and not value.strip():
        raise FormatError("The name must contain at least one non-space character.")
    if forbid_colon and ":" in value:
        raise FormatError("The availability zone name can not contain ':', the zone:host:node separator.")
    return True


# The formats, registered with format_checker (jsonschema ships no types, so
# they are registered by a call rather than under its untyped decorator).
def _name(value: object) -> bool:
    return _check_name(value)


def _name_spaces(value: object) -> bool:
    return _check_name(value, allow_edge_spaces=True)


def _az_name(value: object) -> bool:
    return _check_name(value, forbid_colon=True)


def _uuid(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        uuid.UUID(value)
    except ValueError:
        raise FormatError(f"{value} is not a valid UUID.")
    return True


format_checker.checks("name", raises=FormatError)(_name)
format_checker.checks("name_with_leading_trailing_spaces", raises=FormatError)(_name_spaces)
format_checker.checks("az_name", raises=FormatError)(_az_name)
format_checker.checks("uuid", raises=FormatError)(_uuid)


def check(body: T, schema: Mapping[str, Any]) -> T:
    """Return ``body`` when it matches ``schema``; else raise Invalid for the first error.

    As Nova: an error below the top names the innermost field; one at the
    top gives the schema's own message."""
    validator = Draft4Validator(schema, format_checker=format_checker)
    errors = sorted(validator.iter_errors(body), key=lambda e: (len(e.path), list(map(str, e.path))))
    if not errors:
        return body
    error = _best(errors)
    if not error.absolute_path:
        raise Invalid(_reason(error))
    field = str(error.absolute_path[-1])
    raise Invalid(
        f"Invalid input for field/attribute {field}. Value: {_short(error.instance)}. {_reason(error)}", field=field
    )


def check_field(name: str, value: T, schema: Mapping[str, Any]) -> T:
    """Check one field's ``value``, with the message a body holding it under ``name`` gets."""
    check({name: value}, {"type": "object", "properties": {name: schema}})
    return value


def first_error_message(value: object, schema: Mapping[str, Any]) -> str | None:
    """The plain jsonschema message of ``value``'s first error under ``schema``, or None."""
    error = next(Draft4Validator(schema, format_checker=format_checker).iter_errors(value), None)
    return None if error is None else error.message


def _best(errors: list[Any]) -> Any:  # jsonschema's ValidationError (untyped)
    # Prefer the deepest concrete error inside a oneOf/anyOf.
    error = errors[0]
    while error.context:
        error = sorted(error.context, key=lambda e: -len(e.path))[0]
    return error


def _reason(error: Any) -> str:  # error: jsonschema's ValidationError (untyped)
    if error.validator == "format" and error.cause is not None:
        return str(error.cause)
    if error.validator == "pattern":
        return f"{_short(error.instance)!s} does not match {error.validator_value!r}"
    return error.message


def _short(value: object, limit: int = 100) -> str:

    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."
