"""The one JSON parser of every request body serve reads: bounded in nesting depth, and text that can be
written back as UTF-8 (every string is stored, logged or hashed), or one `RequestError` line (400).

Python's parser recurses per nesting level: tens of thousands of `[` raised `RecursionError`, and a
handler that caught only `JSONDecodeError` answered 500 with a traceback (issue 44, item 1). A `\\ud800`
escape decodes to a lone surrogate, which no UTF-8 encoder takes: the task key's hash, the log line and
the store's JSON each raised on it. Both are refused here, before any handler sees the body; the size
bound is the reader's (`app.read_body`, 413)."""

from __future__ import annotations

import json
import re
from typing import Any

from router_train.serve.identity import RequestError

MAX_JSON_DEPTH = 64
"""Nesting levels a request body may have (objects and arrays). A chat request with tool schemas nests a
dozen; far below the depth where Python's parser or encoder would recurse out of stack."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# A valid pair (`\ud83d\ude00`) decodes to one code point; any surrogate left in a string is a lone one.


def _deepest(obj: Any) -> int:
    """The nesting depth of a parsed value (a scalar is 0), walked without recursion; raises on a lone
    surrogate in any key or string."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if not value.isascii() and _LONE_SURROGATE.search(value):
                raise RequestError("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff): not text")
            continue
        if isinstance(value, dict):
            items: list[Any] = [*value.keys(), *value.values()]
        elif isinstance(value, list):
            items = value
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            break
        stack.extend((item, depth + 1) for item in items)
    return deepest


def parse_json_body(raw: bytes, what: str) -> Any:
    """The JSON value of a request body (`what` names it in the message: "the request body",
    "the feedback body"); invalid JSON, nesting over `MAX_JSON_DEPTH` and lone surrogates are one
    `RequestError` line each."""
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RequestError(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise RequestError(f"{what} nests deeper than {MAX_JSON_DEPTH} levels") from None
    try:
        depth = _deepest(value)
    except RequestError as exc:
        raise RequestError(f"{what}: {exc}") from None
    if depth > MAX_JSON_DEPTH:
        raise RequestError(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
    return value
