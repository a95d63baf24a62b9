"""The one rule that turns a router's reply into a model id, or into "no valid route".

The rule (a reward's parser is its attack surface, so it is strict and has no special cases):

1. A reply longer than `MAX_REPLY_CHARS` characters is invalid (never truncated: cutting it could
   drop a second tag and turn a hedge into a valid answer).
2. Every `<route` or `</route` in the reply counts as a route tag, in any letter case, anywhere:
   inside `<think>` reasoning, code blocks or quotes alike. The reply must hold exactly two of them,
   and they must be one exact lowercase element `<route>…</route>`. So two elements are invalid,
   even when they agree, and so is any `<ROUTE>`, `<route id=…>` or unclosed tag.
3. The element's content, after `str.strip()` and nothing else, must equal one of the valid model
   ids exactly: a display name, another letter case, a list of ids, an empty tag, or a unicode
   look-alike (fullwidth, Cyrillic, NFKC-equivalent) is invalid.

Hedging therefore never pays: a reply is scored either as a commitment to the one id it names or
as "no valid route" (the lowest reward). Cost is linear in the reply's length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_REPLY_CHARS = 65_536
"""Longest reply that can hold a valid route; router replies are short, so this only stops abuse."""

_TAG = re.compile(r"</?route", re.IGNORECASE | re.ASCII)
_ELEMENT = re.compile(r"<route>(.*?)</route>", re.DOTALL)


def format_route(model_id: str) -> str:
    """The answer that routes to `model_id`: `<route>MODEL_ID</route>`."""
    return f"<route>{model_id}</route>"


def parse_route(text: str, valid_ids: Sequence[str]) -> str | None:
    """The model id `text` routes to, or None when it holds no valid route (see the module rule)."""
    if len(text) > MAX_REPLY_CHARS or len(_TAG.findall(text)) != 2:
        return None
    element = _ELEMENT.search(text)
    if element is None:
        return None
    route = element.group(1).strip()
    return route if route in valid_ids else None
