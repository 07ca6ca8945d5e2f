"""Request validation with JSON schemas, reporting errors the way Nova does:
``Invalid input for field/attribute <field>. Value: <value>. <reason>``."""
import re
import unicodedata
import uuid

import jsonschema
from jsonschema.exceptions import FormatError
from jsonschema import Draft4Validator, FormatChecker

from .errors import ApiError

format_checker = FormatChecker()


def _is_printable(char):
    if ord(char) > 0xFFFE:
        return False
    category = unicodedata.category(char)
    return not (category.startswith("C") or (category.startswith("Z") and category != "Zs"))


def _check_name(value, allow_edge_spaces=False, forbid_colon=False):
    if not isinstance(value, str):
        return True
    if not all(_is_printable(c) for c in value):
        raise FormatError("The name must be printable characters.")
    if not allow_edge_spaces and value != value.strip():
        raise FormatError("The name can not start or end with whitespace.")
    if allow_edge_spaces and not value.strip():
        raise FormatError("The name must contain at least one non-space character.")
    if forbid_colon and ":" in value:
        raise FormatError(
            "The availability zone name can not contain ':', the zone:host:node separator."
        )
    return True


@format_checker.checks("name", raises=FormatError)
def _name(value):
    return _check_name(value)


@format_checker.checks("name_with_leading_trailing_spaces", raises=FormatError)
def _name_spaces(value):
    return _check_name(value, allow_edge_spaces=True)


@format_checker.checks("az_name", raises=FormatError)
def _az_name(value):
    return _check_name(value, forbid_colon=True)


@format_checker.checks("uuid", raises=FormatError)
def _uuid(value):
    if not isinstance(value, str):
        return True
    try:
        uuid.UUID(value)
    except ValueError:
        raise FormatError(f"{value} is not a valid UUID.")
    return True


# --- parameter types -------------------------------------------------------

name = {"type": "string", "minLength": 1, "maxLength": 255, "format": "name"}
name_with_spaces = {"type": "string", "minLength": 1, "maxLength": 255,
                    "format": "name_with_leading_trailing_spaces"}
az_name = {"type": "string", "minLength": 1, "maxLength": 255, "format": "az_name"}
az_name_or_none = {"oneOf": [az_name, {"type": "null"}]}
hostname = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[a-zA-Z0-9-._]*$"}
metadata_key = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[a-zA-Z0-9-_:. ]{1,255}$"}
boolean = {"type": ["boolean", "string"], "enum": [True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES",
                                                   "Yes", "yes", "y", "t", False, "False", "FALSE", "false", "0",
                                                   "OFF", "Off", "off", "NO", "No", "no", "n", "f"]}
TRUE_STRINGS = {"true", "1", "on", "yes", "y", "t"}


def to_bool(value):
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in TRUE_STRINGS


def validate(body, schema):
    """Check a request body against ``schema``; raise a 400 fault on the first error.

    As Nova: an error below the top names the innermost field; one at the
    top gives the schema's own message."""
    validator = Draft4Validator(schema, format_checker=format_checker)
    errors = sorted(validator.iter_errors(body), key=lambda e: (len(e.path), list(map(str, e.path))))
    if not errors:
        return body
    error = _best(errors)
    if error.absolute_path:
        message = (f"Invalid input for field/attribute {error.absolute_path[-1]}. "
                   f"Value: {_short(error.instance)}. {_reason(error)}")
    else:
        message = _reason(error)
    raise ApiError(400, message)


def _best(errors):
    # Prefer the deepest concrete error inside a oneOf/anyOf.
    error = errors[0]
    while error.context:
        error = sorted(error.context, key=lambda e: -len(e.path))[0]
    return error


def _reason(error):
    if error.validator == "format" and error.cause is not None:
        return str(error.cause)
    if error.validator == "pattern":
        return f"{_short(error.instance)!s} does not match {error.validator_value!r}"
    return error.message


def _short(value, limit=100):
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def validate_query(params, allowed, strict):
    """Reject unknown query parameters when ``strict`` (the microversion cut-over)."""
    if not strict:
        return
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ApiError(400, f"Invalid input for query parameters {unknown[0]}. Value: "
                            f"{params.get(unknown[0])}. Additional properties are not allowed "
                            f"('{unknown[0]}' was unexpected)")


_INT_RE = re.compile(r"^-?\d+$")


def path_int(value, message=None):
    """Path ids that must be integers: 400, never 404, when they are not."""
    if not _INT_RE.match(str(value)):
        raise ApiError(400, message or f"Invalid id: {value}")
    return int(value)
