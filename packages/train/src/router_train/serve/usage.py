"""The tokens an upstream answer reports (`usage`), read from a JSON body or a server-sent event stream."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_SSE_LINE = 1 << 20
"""A stream line longer than this is not kept whole while looking for `usage` (it is still relayed)."""


@dataclass(frozen=True)
class Tokens:
    """`usage.prompt_tokens`, `usage.completion_tokens` of one answer."""

    prompt: int
    completion: int


def usage_of(obj: Any) -> Tokens | None:
    """The tokens of a chat completion (or chunk) object's `usage`, if it reports them as counts."""
    if not isinstance(obj, dict):
        return None
    usage = obj.get("usage")
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    ok = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (prompt, completion))
    return Tokens(prompt, completion) if ok else None  # type: ignore[arg-type]


def body_usage(body: bytes) -> Tokens | None:
    """The tokens a (non-streamed) chat completion body reports."""
    if b'"usage"' not in body:  # most bodies are read once more only when they can hold it
        return None
    try:
        return usage_of(json.loads(body))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


class StreamMeter:
    """Reads a relayed server-sent event stream for its `usage` (OpenAI sends it in the last chunk, with
    `stream_options.include_usage`); chunks may split lines anywhere. The last one reported counts."""

    def __init__(self) -> None:
        self._partial = b""
        self.tokens: Tokens | None = None

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > MAX_SSE_LINE:
            self._partial = b""
        for line in lines:
            self._line(line)

    def close(self) -> None:
        """The stream ended: read a last line not terminated by a newline."""
        if self._partial:
            self._line(self._partial)
            self._partial = b""

    def _line(self, line: bytes) -> None:
        line = line.strip()
        if not line.startswith(b"data:") or b'"usage"' not in line:
            return
        try:
            found = usage_of(json.loads(line[5:]))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return
        if found is not None:
            self.tokens = found
