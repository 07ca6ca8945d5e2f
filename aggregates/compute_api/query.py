"""Query strings of the compute API's routes, parsed against a domain's query
schema (aggregates.value_schemas.query)."""

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from django.http import QueryDict
from rest_framework.request import Request

from aggregates import schema_check

from .errors import ApiError

MAX_LIMIT = 1000  # Nova's [api] max_limit


def query_params(request: Request, schema: Mapping[str, Any]) -> dict[str, str]:
    """The query parameters named in ``schema``'s properties (the last value of
    each), checked against their schema; when the schema is strict (no
    additional properties) any other name is a 400."""
    properties = schema["properties"]
    if schema.get("additionalProperties", True) is False:
        _refuse_unknown(request.query_params, properties)
    values: dict[str, str] = {}
    for name, value_schema in properties.items():
        if name not in request.query_params:
            continue
        value = request.query_params.getlist(name)[-1]
        message = schema_check.first_error_message(value, value_schema)
        if message is not None:
            raise ApiError(400, f"Invalid input for query parameters {name}. Value: {value}. {message}")
        values[name] = value
    return values


def _refuse_unknown(params: QueryDict, allowed: Iterable[str]) -> None:
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ApiError(
            400,
            f"Invalid input for query parameters {unknown[0]}. Value: "
            f"{params.get(unknown[0])}. Additional properties are not allowed "
            f"('{unknown[0]}' was unexpected)",
        )


def parse_uuid(value: str) -> uuid.UUID:

    try:
        return uuid.UUID(value)
    except ValueError:
        raise ApiError(400, f"Invalid uuid {value}")
