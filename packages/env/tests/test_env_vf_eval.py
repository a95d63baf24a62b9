"""End to end: the real `vf-eval router-frontier-rl` against a scripted local OpenAI-compatible server.

The null harness runs verifiers' chat script through `uv` (its first run fetches the script's
dependencies from PyPI into `UV_CACHE_DIR`; set that variable to reuse a warm cache). Everything
else stays on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import router_frontier_rl
import router_oracle
from router_frontier_rl import RouterConfig, RouterTaskset, format_route, score_completion
from router_frontier_rl.prompt import user_prompt

uv = pytest.importorskip("uv")

MAX_TASKS = 3
MODEL = "stub-router"


USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def _completion(obj: str, choices: list[dict], usage: dict | None = None) -> bytes:
    body = {
        "id": "chatcmpl-stub",
        "object": obj,
        "created": int(time.time()),
        "model": MODEL,
        "choices": choices,
    }
    return json.dumps(body | ({"usage": usage} if usage else {})).encode()


class StubServer(ThreadingHTTPServer):
    """Answers each chat completion with the reply scripted for the task whose issue it carries."""

    def __init__(self, replies: dict[str, str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies = replies
        self.requests: list[dict] = []


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
        self.server.requests.append(body)
        user = [m for m in body.get("messages", []) if m.get("role") == "user"][-1]["content"]
        if isinstance(user, list):
            user = "".join(part.get("text", "") for part in user)
        text = self.server.replies.get(user, "I cannot decide.")
        if not body.get("stream"):
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            return self._send("application/json", _completion("chat.completion", [choice], USAGE))
        self._send("text/event-stream")
        chunk = "chat.completion.chunk"
        deltas = [
            {"role": "assistant", "content": text[: len(text) // 2]},
            {"content": text[len(text) // 2 :]},
        ]
        events = [_completion(chunk, [{"index": 0, "delta": d, "finish_reason": None}]) for d in deltas]
        events.append(_completion(chunk, [{"index": 0, "delta": {}, "finish_reason": "stop"}]))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(_completion(chunk, [], USAGE))
        for event in [*events, b"[DONE]"]:
            self.wfile.write(b"data: " + event + b"\n\n")
        self.wfile.flush()


@pytest.fixture
def stub() -> Iterator[tuple[StubServer, dict[str, str]]]:
    tasks = list(RouterTaskset(RouterConfig(split="eval", max_tasks=MAX_TASKS)))
    replies: dict[str, str] = {}
    expected: dict[str, str] = {}
    for k, task in enumerate(tasks):
        record = task.data.record
        wrong = next(i for i in task.data.valid_ids if i != record.oracle)
        reply = [
            f"Best pick.\n{format_route(record.oracle)}",
            format_route(wrong),
            "<route>all of them</route>",
        ][k % 3]
        replies[user_prompt(record)] = reply
        expected[record.instance_id] = reply
    server = StubServer(replies)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, expected
    finally:
        server.shutdown()
        server.server_close()


def _vf_eval_command() -> list[str]:
    """`vf-eval` run by this interpreter, from its console-script entry point (no PATH lookup)."""
    (ep,) = entry_points(group="console_scripts", name="vf-eval")
    module, attr = ep.value.split(":")
    return [
        sys.executable,
        "-c",
        f"import sys; sys.argv[0] = 'vf-eval'; from {module} import {attr}; sys.exit({attr}())",
    ]


def _env(tmp_path: Path) -> dict[str, str]:
    src_dirs = {
        str(Path(str(m.__file__)).resolve().parent.parent) for m in (router_frontier_rl, router_oracle)
    }
    home = tmp_path / "home"
    env = {
        "PATH": os.pathsep.join(
            [str(Path(uv.find_uv_bin()).parent), os.environ.get("PATH", "/usr/bin:/bin")]
        ),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR") or str(tmp_path / "uv-cache"),
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


def test_vf_eval_end_to_end(stub, tmp_path: Path) -> None:
    server, expected = stub
    out = tmp_path / "out"
    cmd = [
        *_vf_eval_command(),
        "router-frontier-rl",
        "-m", MODEL,
        "--client.base-url", f"http://127.0.0.1:{server.server_address[1]}/v1",
        "--client.api-key-var", "STUB_API_KEY",
        "--env.agent.harness.id", "null",
        "--env.agent.runtime.type", "subprocess",
        "--env.taskset.split", "eval",
        "--env.taskset.max-tasks", str(MAX_TASKS),
        "--no-push",
        "-o", str(out),
        "--run.name", "e2e",
        "-r", "1",
    ]  # fmt: skip
    proc = subprocess.run(cmd, env=_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (
        f"vf-eval failed:\nSTDOUT:\n{proc.stdout[-4000:]}\nSTDERR:\n{proc.stderr[-4000:]}"
    )
    episodes = [json.loads(line) for line in (out / "e2e" / "traces.jsonl").read_text().splitlines()]
    assert len(episodes) == MAX_TASKS and server.requests
    routed = []
    for episode in episodes:
        assert episode["ok"], episode["errors"]
        (trace,) = episode["traces"]
        data = trace["task"]["data"]
        record = router_frontier_rl.RouteData.model_validate(data).record
        want = score_completion(record, expected[record.instance_id], data["valid_ids"])
        got = {name: r["score"] for name, r in trace["rewards"].items()}
        assert got == want.model_dump(), trace["rewards"]
        assert trace["rewards"]["routed_reward"]["weight"] == 1.0
        assert trace["rewards"]["chose_oracle"]["weight"] == 0.0
        routed.append(want.routed_reward)
    assert sorted(routed) == [-1.0, 0.0, 1.0]
