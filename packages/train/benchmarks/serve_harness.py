"""What the serve benchmarks with feedback share: a stub upstream, a config, `serve` as a child process.

Everything listens on 127.0.0.1. Not a benchmark itself (feedback_loop_demo.py and
bench_serve_feedback_kill.py import it).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import tomli_w
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.split import split_ids
from router_oracle.table import OracleTable, TaskRecord
from router_oracle.table_check import load_table

TOKEN_ENV = "FEEDBACK_TOKEN"
"""The variable `[feedback] token_env` names; the scripts set it for the `serve` they start."""
TOKEN = "s3cret"
"""The bearer token feedback is posted with."""
USAGE = {"prompt_tokens": 1200, "completion_tokens": 150, "total_tokens": 1350}
"""The `usage` every stub answer reports (the proxy prices it)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stub_app() -> Starlette:
    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        message = {"role": "assistant", "content": f"{body['model']}: on it"}
        return JSONResponse(
            {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "created": 1,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": USAGE,
            }
        )

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


class StubUpstream:
    """An OpenAI-compatible chat API answering `<model>: on it` (with `usage`), in a thread on 127.0.0.1."""

    def __init__(self) -> None:
        self.port = free_port()
        config = uvicorn.Config(
            _stub_app(), host="127.0.0.1", port=self.port, log_level="warning", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> StubUpstream:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the stub upstream did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)


def bundled_table() -> OracleTable:
    return load_table(bundled_table_path())


def eval_tasks(table: OracleTable) -> list[TaskRecord]:
    """The table's eval split (the env's: fraction 0.2, seed 0), in the split's order."""
    by_id = {t.instance_id: t for t in table.tasks}
    return [by_id[i] for i in split_ids(table).eval]


def write_config(
    path: Path,
    checkpoint: Path,
    upstream_url: str,
    pool: list[str],
    state: Path,
    explore_rate: float | None,
) -> Path:
    """A serve TOML: every pool model on the stub (priced 5 / 25 USD per million tokens), feedback on."""
    doc: dict[str, Any] = {
        "router": {"checkpoint": str(checkpoint)},
        "upstreams": {
            m: {"base_url": upstream_url, "model": m, "input_price": 5.0, "output_price": 25.0} for m in pool
        },
        "store": str(state / "decisions.sqlite"),
        "decision_log": str(state / "decisions.jsonl"),
        "feedback": {"token_env": TOKEN_ENV},
    }
    if explore_rate is not None:
        doc["explore"] = {"rate": explore_rate, "seed": 0}
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return path


def child_env() -> dict[str, str]:
    return {**os.environ, TOKEN_ENV: TOKEN, "PYTHONPATH": os.pathsep.join(sys.path)}


def router_train(*args: str) -> str:
    """Run `router-train ARGS` (this interpreter's) to completion; its stdout and stderr, or exit."""
    cmd = [sys.executable, "-m", "router_train.cli", *args]
    done = subprocess.run(cmd, env=child_env(), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"router-train {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return (done.stderr + done.stdout).strip()


class Serve:
    """`router-train serve CONFIG --port PORT` as a child process (stderr kept in a file)."""

    def __init__(self, config: Path, port: int, log: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.config, self.port, self.log = config, port, log
        cmd = [sys.executable, "-m", "router_train.cli", "serve", str(config), "--port", str(port)]
        with log.open("w", encoding="utf-8") as err:
            self.proc = subprocess.Popen(cmd, env=child_env(), stdout=err, stderr=err, text=True)
        deadline = time.monotonic() + 180
        while True:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit(f"serve did not come up: {log.read_text(encoding='utf-8').strip()}")
            try:
                if httpx.get(f"{self.url}/health").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)

    def banner(self) -> str:
        """serve's first stderr line (what it serves, where)."""
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return next((line for line in lines if line.startswith("router-train serve:")), "")

    def stop(self) -> int:
        """Ctrl-C (SIGINT), as a user stops it; its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=60)

    def kill(self) -> int:
        self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait(timeout=60)
