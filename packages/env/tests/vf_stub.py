"""Running the real `vf-eval` in tests: a scripted OpenAI-compatible server on 127.0.0.1, command, env.

The server answers every chat completion with what a test's `script(request_body)` returns: text, tool
calls, or both, streamed as server-sent events when asked (verifiers' chat script always streams), so
both the single-turn and the bash-harness episodes can be driven without a model.

The harnesses run verifiers' chat script through `uv` (its first run fetches the script's dependencies
from PyPI into `UV_CACHE_DIR`; set that variable to reuse a warm cache).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import router_frontier_rl
import router_oracle

MODEL = "stub-router"
USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


@dataclass(frozen=True)
class Reply:
    """One scripted assistant message."""

    text: str = ""
    """Its content."""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(function name, arguments) of each tool call it makes."""


Script = Callable[[dict[str, Any]], Reply]
"""Request body -> the reply to send."""


def text_of(content: Any) -> str:
    """Message content as text (a string or a list of content parts)."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def first_user(body: dict[str, Any]) -> str:
    """The text of the request's first user message (the task's prompt in a zero-shot episode)."""
    return text_of(next(m for m in body.get("messages", []) if m.get("role") == "user")["content"])


def last_user(body: dict[str, Any]) -> str:
    """The text of the request's last user message."""
    return text_of([m for m in body.get("messages", []) if m.get("role") == "user"][-1]["content"])


class StubServer(ThreadingHTTPServer):
    """Answers each chat completion with `script(body)`; keeps every request body in `requests`."""

    def __init__(self, script: Script) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


def _chunk(obj: str, choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
    body = {
        "id": "chatcmpl-stub",
        "object": obj,
        "created": int(time.time()),
        "model": MODEL,
        "choices": choices,
    }
    return json.dumps(body | ({"usage": usage} if usage else {})).encode()


class _Handler(BaseHTTPRequestHandler):
    server: StubServer

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output quiet
        pass

    def _send(self, content_type: str, payload: bytes | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if payload is not None:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload is not None:
            self.wfile.write(payload)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with self.server.lock:
            self.server.requests.append(body)
        reply = self.server.script(body)
        n = len(self.server.requests)
        calls: list[dict[str, Any]] = [
            {
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if calls:
                message["tool_calls"] = calls
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return self._send("application/json", _chunk("chat.completion", [choice], USAGE))
        self._send("text/event-stream")
        text = reply.text
        deltas: list[dict[str, Any]] = [
            {"role": "assistant", "content": text[: len(text) // 2]},
            {"content": text[len(text) // 2 :]},
        ]
        for i, call in enumerate(calls):
            # As OpenAI streams a call: id, type and name first, the arguments in a later delta.
            head: dict[str, Any] = {
                "index": i,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"]},
            }
            deltas.append({"tool_calls": [head | {"function": head["function"] | {"arguments": ""}}]})
            deltas.append(
                {"tool_calls": [{"index": i, "function": {"arguments": call["function"]["arguments"]}}]}
            )
        chunk = "chat.completion.chunk"
        events = [_chunk(chunk, [{"index": 0, "delta": d, "finish_reason": None}]) for d in deltas]
        events.append(_chunk(chunk, [{"index": 0, "delta": {}, "finish_reason": finish}]))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(_chunk(chunk, [], USAGE))
        for event in [*events, b"[DONE]"]:
            self.wfile.write(b"data: " + event + b"\n\n")
        self.wfile.flush()


@contextmanager
def serving(script: Script) -> Iterator[StubServer]:
    """A StubServer running `script` in a background thread for the duration of the block."""
    server = StubServer(script)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def vf_eval_command() -> list[str]:
    """`vf-eval` run by this interpreter, from its console-script entry point (no PATH lookup)."""
    (ep,) = entry_points(group="console_scripts", name="vf-eval")
    module, attr = ep.value.split(":")
    return [
        sys.executable,
        "-c",
        f"import sys; sys.argv[0] = 'vf-eval'; from {module} import {attr}; sys.exit({attr}())",
    ]


def vf_eval_env(tmp_path: Path, uv_bin: str, uv_cache: Path) -> dict[str, str]:
    """The environment of a `vf-eval` subprocess: a private HOME, `uv` on PATH, our packages importable,
    the stub's key in STUB_API_KEY, proxies and index settings passed through, 127.0.0.1 unproxied."""
    src_dirs = {
        str(Path(str(m.__file__)).resolve().parent.parent) for m in (router_frontier_rl, router_oracle)
    }
    home = tmp_path / "home"
    env = {
        "PATH": os.pathsep.join([str(Path(uv_bin).parent), os.environ.get("PATH", "/usr/bin:/bin")]),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "UV_CACHE_DIR": str(uv_cache),
        "PYTHONPATH": os.pathsep.join([*sorted(src_dirs), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
        "STUB_API_KEY": "sk-stub",
        "NO_COLOR": "1",
    }
    for var in (
        "SSL_CERT_FILE",
        "UV_INDEX_URL",
        "UV_DEFAULT_INDEX",
        "PIP_INDEX_URL",
        "HTTPS_PROXY",
        "HTTP_PROXY",
    ):
        if var in os.environ:
            env[var] = os.environ[var]
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


def read_episodes(traces: Path) -> list[dict[str, Any]]:
    """The episodes of a vf-eval `traces.jsonl`."""
    return [json.loads(line) for line in traces.read_text().splitlines() if line.strip()]
