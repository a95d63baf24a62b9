"""A scripted OpenAI-compatible chat server on 127.0.0.1 for `router-train route --endpoint` tests.

Each request gets what `script(body, n)` returns (n: 0-based request count): a reply text, an HTTP
error status, or a delay before replying (a timeout for a client with a shorter one). Every request
body is kept, so a test can check what the real `openai` client sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    """What the stub answers one request with."""

    text: str = ""
    """The assistant message's content."""
    status: int = 200
    """HTTP status; not 200: an OpenAI-style error body instead of a completion."""
    delay_s: float = 0.0
    """Seconds to wait before answering."""


Script = Callable[[dict[str, Any], int], Answer]


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Script) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: StubServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            n = len(self.server.requests)
            self.server.requests.append(body)
        answer = self.server.script(body, n)
        if answer.delay_s:
            time.sleep(answer.delay_s)
        payload: dict[str, Any]
        if answer.status != 200:
            payload = {"error": {"message": f"stub error {answer.status}", "type": "server_error"}}
        else:
            payload = {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer.text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        data = json.dumps(payload).encode()
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            pass


@contextmanager
def stub_server(script: Script) -> Iterator[StubServer]:
    server = StubServer(script)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
