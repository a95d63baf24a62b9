"""Doubles for `router-train serve` tests: OpenAI-compatible stub upstreams and servers run in threads.

Everything listens on 127.0.0.1 on a port the OS picks, and every server started is stopped.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import tomli_w
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from router_train.checkpoint_io import save_checkpoint
from router_train.local.config import LocalTrainConfig
from router_train.local.trainer import train_local
from router_train.route import CheckpointSpec, Router, bundled_tasks, load_router
from router_train.route.baseline_checkpoint import BaselineCheckpoint
from router_train.scoring.baselines import CHEAPEST_NAME, CheapestFit
from router_train.serve import read_config
from router_train.serve_app import build_app

SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""mini-SWE-agent's submit marker (first output line of the final command)."""


@dataclass
class Seen:
    """One request a stub upstream received."""

    model: str
    first_user: str
    n_messages: int
    stream: bool
    authorization: str | None


@dataclass
class StubUpstream:
    """An OpenAI-compatible chat API that answers with its own name.

    `fail_status` makes it answer that HTTP status; `delay_s` makes it wait before answering. A request
    carrying `tools` (an agent) gets a bash tool call: first writing a file with the stub's name, then
    mini-SWE-agent's submit command printing that file.
    """

    name: str
    fail_status: int | None = None
    delay_s: float = 0.0
    reply: str | None = None
    """Answer this text instead of `I am <name>` (an LLM router's reply)."""
    seen: list[Seen] = field(default_factory=list)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> Response:
        body = json.loads(await request.body())
        messages = body["messages"]
        first = next(m["content"] for m in messages if m["role"] == "user")
        if isinstance(first, list):
            first = "\n".join(p["text"] for p in first if p.get("type") == "text")
        stream = body.get("stream") is True
        self.seen.append(
            Seen(body["model"], first, len(messages), stream, request.headers.get("authorization"))
        )
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail_status is not None:
            return JSONResponse(
                {"error": {"message": f"{self.name} is failing", "type": "server_error"}},
                status_code=self.fail_status,
            )
        if body.get("tools"):
            return JSONResponse(self._agent_reply(body["model"], messages))
        text = self.reply if self.reply is not None else f"I am {self.name}"
        if not stream:
            return JSONResponse(_completion(body["model"], {"role": "assistant", "content": text}))
        include_usage = (body.get("stream_options") or {}).get("include_usage") is True
        return StreamingResponse(_sse(body["model"], text, include_usage), media_type="text/event-stream")

    def _agent_reply(self, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        steps = sum(1 for m in messages if m["role"] == "assistant")
        if steps == 0:
            command = f"echo answered-by-{self.name} > proof.txt"
        else:
            command = f"echo {SUBMIT} && cat proof.txt"
        call = {
            "id": f"call_{steps}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})},
        }
        message = {"role": "assistant", "content": f"THOUGHT: step {steps}", "tool_calls": [call]}
        return _completion(model, message, finish_reason="tool_calls")


def _completion(model: str, message: dict[str, Any], finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": dict(STUB_USAGE),
    }


STUB_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
"""The `usage` every stub answer reports (a stream's last chunk, when it asks for usage)."""


async def _sse(model: str, text: str, include_usage: bool = False) -> Any:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    for word in text.split(" "):
        yield chunk({"content": word if word == text.split(" ")[0] else " " + word})
        await asyncio.sleep(0)
    yield chunk({}, "stop")
    if include_usage:  # OpenAI's last chunk with stream_options.include_usage: no choices, the usage
        last = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1, "model": model}
        yield f"data: {json.dumps({**last, 'choices': [], 'usage': STUB_USAGE})}\n\n".encode()
    yield b"data: [DONE]\n\n"


class ServerThread:
    """An ASGI app served by uvicorn in a thread on 127.0.0.1, on a port the OS picked."""

    def __init__(self, app: Any) -> None:
        # IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say they are TCP.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()
        assert not self._thread.is_alive(), "server thread did not stop"


@contextmanager
def serving(app: Any) -> Iterator[ServerThread]:
    server = ServerThread(app).start()
    try:
        yield server
    finally:
        server.stop()


Upstreams = dict[str, tuple[StubUpstream, ServerThread]]
"""Pool model id -> its stub upstream and the server thread serving it."""


@contextmanager
def running_upstreams(pool: list[str]) -> Iterator[Upstreams]:
    """One stub upstream per pool model, each served on its own port, all stopped on exit."""
    running: Upstreams = {}
    try:
        for model_id in pool:
            stub = StubUpstream(f"up-{model_id}")
            running[model_id] = (stub, ServerThread(stub.app()).start())
        yield running
    finally:
        for _, server in running.values():
            server.stop()


def wait_until_serving(proc: subprocess.Popen[str], url: str, within_s: float = 120) -> None:
    """Wait until the `serve` process `proc` answers `url`/health (it loads its router first)."""
    deadline = time.monotonic() + within_s
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, "the server did not come up"
        try:
            if httpx.get(f"{url}/health").status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)


def free_port() -> int:
    """A port nothing listens on (bound, then released): connecting to it is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def trained_checkpoint(base: Path) -> Path:
    """A `router-train local` checkpoint trained in a few steps on the bundled table (cached under base)."""
    path = base / "serve-local-router" / "checkpoint.json"
    if not path.exists():
        cfg = LocalTrainConfig(output_dir=path.parent, steps=5, tasks_per_step=16, shift_folds=0)
        train_local(cfg, progress=False)
    return path


def native_router(checkpoint: Path) -> Router:
    """The router of `checkpoint` at its native point, as `write_config`'s proxy routes."""
    return load_router(CheckpointSpec(checkpoint=checkpoint, no_safe_point=True))


def always_checkpoint(path: Path, pool: list[str], model: str) -> Path:
    """A saved `cheapest-on-train` baseline whose costs make `model` the cheapest: a router over `pool`
    that sends every task to `model` (two of them, naming two models, route every text differently)."""
    classes = sorted(pool)
    fit = CheapestFit(classes=classes, mean_cost=[0.0 if m == model else 1.0 for m in classes])
    checkpoint = BaselineCheckpoint(
        name=CHEAPEST_NAME,
        pool_ids=list(pool),
        table="always.json",
        table_sha256="0" * 64,
        split="all",
        eval_fraction=0.2,
        split_seed=0,
        seed=0,
        train_task_ids=[],
        vocabulary=[],
        idf=[],
        fit=fit,
    )
    save_checkpoint(checkpoint, path)
    return path


def ask(client: httpx.Client, url: str, issue: str, turn: int = 0) -> httpx.Response:
    """A routed chat request for `issue`'s task at turn `turn` (its first message and `turn` more turns)."""
    messages: list[dict[str, str]] = [{"role": "user", "content": issue}]
    for i in range(turn):
        messages += [{"role": "assistant", "content": f"step {i}"}, {"role": "user", "content": "go on"}]
    body = {"model": "router", "messages": messages}
    return client.post(f"{url}/v1/chat/completions", json=body, timeout=30)


def bundled_issues() -> list[tuple[str, str, str]]:
    """(instance_id, repo, problem_statement) of every bundled SWE-bench Verified task, in file order."""
    return [(t.instance_id, t.repo or "", t.problem_statement) for t in bundled_tasks().values()]


def write_config(
    path: Path,
    checkpoint: Path,
    stubs: dict[str, tuple[StubUpstream, ServerThread]],
    **per_model: Any,
) -> Path:
    upstreams = {
        m: {"base_url": f"{server.url}/v1", "model": f"served-{m}", **per_model.get(m, {})}
        for m, (_, server) in stubs.items()
    }
    doc = {
        # The native point: the tests need a router that spreads tasks over the pool, and a 5-step one's
        # safe default point may be "always the cheapest model".
        "router": {"checkpoint": str(checkpoint), "no_safe_point": True},
        "upstreams": upstreams,
        "store": str(path.parent / "state" / "decisions.sqlite"),
        "decision_log": str(path.parent / "state" / "decisions.jsonl"),
    }
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return path


def proxy_app(config_path: Path) -> Any:
    config = read_config(config_path)
    return build_app(config, load_router(config.router))


def log_lines(config_path: Path, *, usage: bool = False) -> list[dict[str, Any]]:
    """The decision log's records as JSON objects; without `usage`, all but the per-answer usage lines."""
    log = config_path.parent / "state" / "decisions.jsonl"
    lines = (
        [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
    )
    return [line for line in lines if usage or line.get("event") != "usage"]
