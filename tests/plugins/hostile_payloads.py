"""Hostile payloads and how to judge the answers (issue 11): every hostile
variant of a valid body (deep nesting, an oversized body, lone surrogates
and NUL in every string and key, NaN/±Infinity/overflowing numbers in
every number, wrong types in every leaf, unexpected keys in every object),
each API's error format, and a snapshot of every table to show a refusal
changed nothing. Used by the fuzz tests of every API and of the console."""

import hashlib
import json

from django.apps import apps

# Tables a refusal may legitimately touch: the audit log records refusals,
# tokens record their use, failed logins are counted.
EXCLUDED = {"aggregates.event", "aggregates.token", "aggregates.loginfailure", "sessions.session"}

SURROGATE = "\ud800"
NUL = "\x00"
UNEXPECTED = "unexpected_key"
HUGE_INT = 2**64


def snapshot():
    """{table: (row count, checksum of its rows)} for every table."""
    state = {}
    for model in apps.get_models():
        label = model._meta.label_lower
        if label in EXCLUDED:
            continue
        rows = sorted(map(repr, model.objects.order_by().values_list()))
        state[label] = (len(rows), hashlib.sha256("\n".join(rows).encode("utf-8", "backslashreplace")).hexdigest())
    return state


def changed_tables(before, after):
    return sorted(table for table in after if before.get(table) != after[table])


# --- payloads ---------------------------------------------------------------------


def raw_number(text):
    """A JSON number (or constant) that json.dumps will not write: a marker replaced after dumping."""
    return ("__raw__", text)


def dump(body):
    text = json.dumps(body, ensure_ascii=True)
    for marker, value in _markers(body):
        text = text.replace(json.dumps(marker), value, 1)
    return text


def _markers(body):
    stack = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            if len(item) == 2 and item[0] == "__raw__":
                yield item, item[1]
            else:
                stack.extend(item)
        elif isinstance(item, tuple):
            yield list(item), item[1]


def _leaves(body, path=()):
    """(path, value) of every leaf and ('key', path) of every object."""
    if isinstance(body, dict):
        yield ("object", path, body)
        for key, value in body.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(body, list):
        for index, value in enumerate(body):
            yield from _leaves(value, (*path, index))
    else:
        yield ("leaf", path, body)


def _replace(body, path, value):
    copy = json.loads(json.dumps(body))
    if not path:
        return value
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copy


def _with_key(body, path, key, value):
    copy = json.loads(json.dumps(body))
    target = copy
    for step in path:
        target = target[step]
    target[key] = value
    return copy


def mutations(body, skip_unexpected=()):
    """(name, raw JSON text) of every hostile variant of a valid ``body``."""
    yield "deep nesting (150)", dump({"x": 1}).replace("1", "[" * 150 + "]" * 150)
    yield "deep nesting (20000)", '{"x": ' + "[" * 20000 + "]" * 20000 + "}"
    yield "deep nesting (objects)", '{"a":' * 5000 + "1" + "}" * 5000
    yield "oversized body", json.dumps({"x": "a" * (3 * 1024 * 1024)})
    yield "invalid UTF-8", b'{"x": "\xff\xfe"}'
    for kind, path, value in _leaves(body):
        where = "/".join(map(str, path)) or "(root)"
        if kind == "object":
            yield f"surrogate key in {where}", dump(_with_key(body, path, "k" + SURROGATE, "v"))
            yield f"NUL key in {where}", dump(_with_key(body, path, "k" + NUL, "v"))
            if path not in skip_unexpected:
                yield f"unexpected key in {where}", dump(_with_key(body, path, UNEXPECTED, {"x": [1]}))
            continue
        if isinstance(value, str):
            yield f"surrogate in {where}", dump(_replace(body, path, value + SURROGATE))
            yield f"NUL in {where}", dump(_replace(body, path, value + NUL))
        if isinstance(value, int | float) and not isinstance(value, bool):
            huge = (str(HUGE_INT), str(-HUGE_INT)) if isinstance(value, int) else ()  # 2**64 is a fine float
            for text in ("NaN", "Infinity", "-Infinity", "1e999", "-1e999", *huge):
                yield f"{text} in {where}", dump(_replace(body, path, ("__raw__", text)))
        yield f"wrong type in {where}", dump(_replace(body, path, {"x": [1]}))


# --- the APIs' formats --------------------------------------------------------------

NOVA_FAULTS = {"badRequest", "itemNotFound", "conflictingRequest", "overLimit", "forbidden", "badMethod"}


def nova_format(response):
    body = response.json()
    (name,) = body
    return name in NOVA_FAULTS and body[name]["code"] == response.status_code and body[name]["message"]


def keystone_format(response):
    error = response.json()["error"]
    return error["code"] == response.status_code and error["title"] and error["message"]


def placement_format(response):
    (error,) = response.json()["errors"]
    return error["status"] == response.status_code and error["detail"] and error["request_id"]


def glance_format(response):
    body = response.json()
    return body["code"].startswith(str(response.status_code)) and body["message"] and body["title"]


EXPECTED_STATUS = {"oversized body": 413, "deep nesting": 400, "invalid UTF-8": 400}


def check(send, cases, is_api_format):
    """Send every case; the problems found (status, format, changed tables)."""
    problems = []
    # Every refused payload leaves the tables as they were, so one payload's
    # "after" is the next one's "before": one snapshot per payload.
    before = snapshot()
    for name, method, path, raw in cases:
        response = send(method, path, raw)
        after = snapshot()
        status = response.status_code
        expected = EXPECTED_STATUS.get(name.split(" (")[0])
        try:
            formatted = 400 <= status < 500 and bool(is_api_format(response))
            formatted = formatted and (expected is None or status == expected)
        except (ValueError, KeyError, TypeError, AttributeError):
            formatted = False
        changed = changed_tables(before, after)
        if not formatted or changed:
            problems.append(f"{method.upper()} {path} [{name}]: {status} {response.content[:200]!r} changed {changed}")
        before = after
    return problems
