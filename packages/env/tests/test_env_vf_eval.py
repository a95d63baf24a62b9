"""End to end: the real `vf-eval router-frontier-rl` against a scripted local OpenAI-compatible server.

The null harness runs verifiers' chat script through `uv` (its first run fetches the script's
dependencies from PyPI into `UV_CACHE_DIR`; set that variable to reuse a warm cache). Everything
else stays on 127.0.0.1.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from vf_stub import MODEL, Reply, StubServer, last_user, read_episodes, serving, vf_eval_command, vf_eval_env

import router_frontier_rl
from router_frontier_rl import RouterConfig, RouterTaskset, format_route, score_completion
from router_frontier_rl.prompt import user_prompt

uv = pytest.importorskip("uv")

MAX_TASKS = 3


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
    with serving(lambda body: Reply(text=replies.get(last_user(body), "I cannot decide."))) as server:
        yield server, expected


@pytest.mark.e2e
def test_vf_eval_end_to_end(stub, tmp_path: Path, uv_cache: Path) -> None:
    server, expected = stub
    out = tmp_path / "out"
    cmd = [
        *vf_eval_command(),
        "router-frontier-rl",
        "-m", MODEL,
        "--client.base-url", server.base_url,
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
    env = vf_eval_env(tmp_path, uv.find_uv_bin(), uv_cache)
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (
        f"vf-eval failed:\nSTDOUT:\n{proc.stdout[-4000:]}\nSTDERR:\n{proc.stderr[-4000:]}"
    )
    episodes = read_episodes(out / "e2e" / "traces.jsonl")
    assert len(episodes) == MAX_TASKS and server.requests
    routed = []
    for episode in episodes:
        assert episode["ok"], episode["errors"]
        (trace,) = episode["traces"]
        data = trace["task"]["data"]
        assert "repo_access" not in data and "image" not in data  # single-turn tasks carry neither
        assert trace["metrics"].keys().isdisjoint({"tool_calls", "turns"})
        record = router_frontier_rl.RouteData.model_validate(data).record
        want = score_completion(record, expected[record.instance_id], data["valid_ids"])
        got = {name: r["score"] for name, r in trace["rewards"].items()}
        assert got == want.model_dump(), trace["rewards"]
        assert trace["rewards"]["routed_reward"]["weight"] == 1.0
        assert trace["rewards"]["chose_oracle"]["weight"] == 0.0
        routed.append(want.routed_reward)
    assert sorted(routed) == [-1.0, 0.0, 1.0]
