"""A strict test double of the Prime API, on 127.0.0.1, for the real `prime` 0.18.0 CLI.

Only the routes `router-train launch` makes prime call (read from prime 0.18.0's source, the package
`prime_cli`; base URL + `/api/v1` + path, prime_cli/core/client.py APIClient.request):

- GET  /api/v1/user/whoami                                     `prime whoami` (commands/whoami.py:63)
- POST /api/v1/environmentshub/resolve                         `prime env push` (commands/env.py:994)
- POST /api/v1/environmentshub/{env}/wheels                    (commands/env.py:1148), then
  PUT  {upload_url} (the wheel's bytes, env.py:1177) and
  POST /api/v1/environmentshub/{env}/wheels/{wheel}/finalize   (commands/env.py:1192)
- POST /api/v1/environmentshub/{env}/versions                  (commands/env.py:1254), then
  PUT  {upload_url} (the source archive, env.py:1283) and
  POST /api/v1/environmentshub/{env}/versions/{version}/finalize (commands/env.py:1300)
- POST /api/v1/training/runs/prepare                           `prime train` (api/training.py:271);
  answered 404 like a Platform without local validation, which prime skips (commands/rl.py)
- POST /api/v1/training/runs                                   (api/training.py:289)

Strict: any other route, a missing or wrong bearer token, or a body without the fields prime sends
is recorded in `errors` (and answered 400/404); a test asserts `errors == []`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

API_KEY = "pit_double_0123456789abcdef"
OWNER = "alice"
RUN_ID = "cmrouterdouble0001"
ENV_HUB_ID = "envhub_router_1"

Mode = Literal["ok", "push_rejected", "train_rejected", "unauthorized", "hang"]

_WHEEL_FIELDS = {"content_hash", "filename", "sha256", "size", "semantic_version", "metadata"}
_VERSION_FIELDS = {"content_hash", "filename", "sha256", "semantic_version", "metadata"}


@dataclass
class PrimeApiDouble:
    """State of one double: what prime sent, and what went wrong."""

    mode: Mode = "ok"
    port: int = 0
    requests: list[tuple[str, str]] = field(default_factory=list)
    """(method, path) of every request, in order."""
    errors: list[str] = field(default_factory=list)
    """Strictness violations; must stay empty."""
    uploads: dict[str, bytes] = field(default_factory=dict)
    """Uploaded bodies by kind: `wheel`, `source`."""
    wheel_meta: dict[str, Any] = field(default_factory=dict)
    """The JSON body of POST .../wheels."""
    train_request: dict[str, Any] | None = None
    """The JSON body of POST /training/runs."""
    release: threading.Event = field(default_factory=threading.Event)
    """Set to let hanging handlers return (test teardown)."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _handler(state: PrimeApiDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any] | None = None) -> None:
            data = json.dumps(body if body is not None else {}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _fail(self, why: str, status: int = 400) -> None:
            state.errors.append(f"{self.command} {self.path}: {why}")
            self._send(status, {"detail": why})

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _json(self) -> dict[str, Any] | None:
            raw = self._body()
            try:
                data = json.loads(raw or b"{}")
            except ValueError:
                self._fail("body is not JSON")
                return None
            if not isinstance(data, dict):
                self._fail("body is not a JSON object")
                return None
            return data

        def _authorized(self) -> bool:
            if self.headers.get("Authorization") != f"Bearer {API_KEY}":
                self._fail(f"bad Authorization header {self.headers.get('Authorization')!r}", 401)
                return False
            if state.mode == "unauthorized":
                self._send(401, {"detail": "invalid API key"})
                return False
            return True

        def do_GET(self) -> None:
            state.requests.append(("GET", self.path))
            if state.mode == "hang":
                state.release.wait(120)
                return
            if self.path.split("?")[0] != "/api/v1/user/whoami":
                self._fail("unknown route", 404)
                return
            if self._authorized():
                self._send(
                    200, {"data": {"id": "user_1", "email": "a@example.org", "name": "Alice", "slug": OWNER}}
                )

        def do_PUT(self) -> None:
            state.requests.append(("PUT", self.path))
            m = re.fullmatch(r"/upload/(wheel|source)", self.path)
            if m is None:
                self._fail("unknown route", 404)
                return
            if self.headers.get("Content-Type") != "application/octet-stream":
                self._fail("upload is not application/octet-stream")
                return
            state.uploads[m.group(1)] = self._body()
            self._send(200)

        def do_POST(self) -> None:
            state.requests.append(("POST", self.path))
            if not self._authorized():
                return
            body = self._json()
            if body is None:
                return
            path = self.path
            hub = f"/api/v1/environmentshub/{ENV_HUB_ID}"
            if path == "/api/v1/environmentshub/resolve":
                if set(body) != {"name"} or not isinstance(body["name"], str):
                    self._fail(f"resolve body {body}")
                    return
                if state.mode == "push_rejected":
                    self._send(403, {"detail": "environment name is reserved"})
                    return
                self._send(200, {"data": {"id": ENV_HUB_ID, "owner": {"name": OWNER}, "created": True}})
            elif path == f"{hub}/wheels":
                if not set(body) >= _WHEEL_FIELDS or not str(body["filename"]).endswith(".whl"):
                    self._fail(f"wheel body fields {sorted(body)}")
                    return
                state.wheel_meta = body
                self._send(200, {"data": {"wheel_id": "w1", "upload_url": f"{state.base_url}/upload/wheel"}})
            elif path == f"{hub}/wheels/w1/finalize":
                self._send(200, {"data": {"success": True}})
            elif path == f"{hub}/versions":
                if not set(body) >= _VERSION_FIELDS:
                    self._fail(f"version body fields {sorted(body)}")
                    return
                self._send(
                    200, {"data": {"version_id": "v1", "upload_url": f"{state.base_url}/upload/source"}}
                )
            elif path == f"{hub}/versions/v1/finalize":
                self._send(200, {"data": {"success": True}})
            elif path == "/api/v1/training/runs/prepare":
                if body.get("mode") != "rl":
                    self._fail(f"prepare body {body}")
                    return
                self._send(404, {"detail": "Not Found"})  # no local validation: prime skips it
            elif path == "/api/v1/training/runs":
                if not isinstance(body.get("config"), dict):
                    self._fail(f"run body has no config object: {sorted(body)}")
                    return
                state.train_request = body
                if state.mode == "train_rejected":
                    self._send(400, {"detail": "Config validation failed: orchestrator.batch_size too large"})
                    return
                self._send(200, {"runId": RUN_ID, "tokenValue": "tok_secret"})
            else:
                self._fail("unknown route", 404)

    return Handler


@contextmanager
def prime_api_double(mode: Mode = "ok") -> Iterator[PrimeApiDouble]:
    """Serve a double on a free 127.0.0.1 port for the `with` block."""
    state = PrimeApiDouble(mode=mode)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        time.sleep(0.05)
        server.shutdown()
        server.server_close()
