"""The one rendering of a pydantic `ValidationError` for people: a single line, no URLs.

pydantic's own `str(exc)` runs to several lines per error, with a documentation URL each; a CLI that
prints it buries the one fact the user needs. Every command of the project that reports a
`ValidationError` prefixes this line with the file or argument it was validating.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

MAX_ERRORS = 3
"""Errors shown in full; the rest are counted."""

_MAX_INPUT = 40
"""Longest input repr quoted as `(got ...)`; longer inputs (whole documents, long paths) are left out."""


def _where(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def one_line(exc: ValidationError, *, limit: int = MAX_ERRORS) -> str:
    """`field.path: problem (got value); ...`: the first `limit` errors of `exc` on one line."""
    parts = []
    errors = exc.errors(include_url=False)
    for err in errors[:limit]:
        msg = str(err.get("msg", err.get("type", "invalid")))
        # A ValueError raised by one of our validators already says what is wrong, in our words.
        msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        value = err.get("input")
        if err.get("type") not in ("value_error", "assertion_error", "missing") and not isinstance(
            value, dict | list
        ):
            shown = repr(value)
            if len(shown) <= _MAX_INPUT:
                msg += f" (got {shown})"
        where = _where(err.get("loc", ()))
        parts.append(f"{where}: {msg}" if where else msg)
    more = len(errors) - limit
    text = "; ".join(parts) + (f"; and {more} more error{'s' if more > 1 else ''}" if more > 0 else "")
    return " ".join(text.split())
