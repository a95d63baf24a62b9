"""End to end, offline: `vf-eval` in agentic mode (`repo_access`) on the subprocess runtime.

A fixture repository made here (two commits, the second one after the tasks' base_commit) serves three
held-out tasks through `repos_dir`: two as a clone of their repository, one as an instance checkout. A
scripted local server plays the router: it reads the repository with tool calls (`ls`, `grep -rn`,
`git log`) before it routes, or never stops calling tools, which the turn budget must end with -1.
"""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fixture_repos import BASE_SUBJECT, BASE_TAG, LATER_SUBJECT, LATER_TAG, git, make_repo
from system_tools import needs_bwrap
from vf_stub import MODEL, Reply, first_user, read_episodes, serving, vf_eval_command, vf_eval_env

from router_frontier_rl import RouterConfig, RouterTaskset, format_route, score_completion
from router_frontier_rl.prompt import user_prompt
from router_frontier_rl.repo_checkout import clone_dir_name
from router_oracle.table import TaskRecord

uv = pytest.importorskip("uv")

TURN_BUDGET = 4
EXPLORATION_COST = 0.05
WORD = "frobnicate"


def make_clone(path: Path) -> tuple[str, str]:
    """The base commit has a package using WORD; the later one adds pkg/future.py."""
    base = {
        "README.md": "Widgets.\n",
        "pkg/core.py": f"def {WORD}(x):\n    return x + 1\n",
        "tests/test_core.py": f"from pkg.core import {WORD}\n",
    }
    return make_repo(path, base, {"pkg/future.py": f"# {WORD} moved here after the issue\n"})


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command})


def script_for(records: list[TaskRecord]) -> Any:
    """The scripted router: explore then route (task 0: oracle, task 1: another model); task 2 never stops."""
    explore, wrong, _ = records
    other = next(m for m in wrong.per_model if m != wrong.oracle)
    plans = {
        user_prompt(explore): [
            Reply(text="Looking around.", tool_calls=[bash("ls -a"), bash("cat README.md")]),
            Reply(tool_calls=[bash(f"grep -rn {WORD} .")]),
            Reply(tool_calls=[bash("git log --all --format=%s; git tag")]),
            Reply(text=f"Small change in one module.\n{format_route(explore.oracle)}"),
        ],
        user_prompt(wrong): [
            Reply(tool_calls=[bash("ls")]),
            Reply(tool_calls=[bash(f"grep -rn {WORD} .")]),
            Reply(text=format_route(other)),
        ],
    }

    def script(body: dict[str, Any]) -> Reply:
        plan = plans.get(first_user(body))
        if plan is None:  # the run-away router
            return Reply(text="Still looking.", tool_calls=[bash("ls")])
        step = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        return plan[min(step, len(plan) - 1)]

    return script


def sampled(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [n["message"] for n in trace["nodes"] if n.get("sampled") and n["message"]["role"] == "assistant"]


def tool_outputs(trace: dict[str, Any]) -> str:
    return "\n".join(str(n["message"]["content"]) for n in trace["nodes"] if n["message"]["role"] == "tool")


@pytest.mark.e2e
@needs_bwrap
def test_vf_eval_repo_access_end_to_end(tmp_path: Path, uv_cache: Path) -> None:
    records = [t.data.record for t in RouterTaskset(RouterConfig(split="eval", max_tasks=3))]
    explore, wrong, runaway = records
    repos = tmp_path / "repos"
    clones = {}
    for repo in sorted({r.repo for r in records}):
        clones[repo] = make_clone(repos / clone_dir_name(repo))
    base, later = clones[explore.repo]
    # `wrong` gets an instance checkout (which wins over its repository's clone): a plain directory.
    instance = repos / wrong.instance_id
    instance.mkdir()
    (instance / "only_in_instance.txt").write_text(f"{WORD}\n")
    tasks_file = tmp_path / "tasks.jsonl.gz"
    rows = [
        {
            "instance_id": r.instance_id,
            "repo": r.repo,
            "problem_statement": "-",
            "base_commit": clones[r.repo][0],
        }
        for r in records
    ]
    tasks_file.write_bytes(gzip.compress("".join(json.dumps(row) + "\n" for row in rows).encode()))

    out = tmp_path / "out"
    with serving(script_for(records)) as server:
        cmd = [
            *vf_eval_command(),
            "router-frontier-rl",
            "-m", MODEL,
            "--client.base-url", server.base_url,
            "--client.api-key-var", "STUB_API_KEY",
            "--env.agent.runtime.type", "subprocess",
            "--env.taskset.split", "eval",
            "--env.taskset.max-tasks", "3",
            "--env.taskset.repo-access", "true",
            "--env.taskset.turn-budget", str(TURN_BUDGET),
            "--env.taskset.exploration-cost", str(EXPLORATION_COST),
            "--env.taskset.repos-dir", str(repos),
            "--env.taskset.tasks-path", str(tasks_file),
            "--env.taskset.allow-unsandboxed", "true",
            "--no-push",
            "-o", str(out),
            "--run.name", "agentic",
            "-r", "1",
        ]  # fmt: skip
        env = vf_eval_env(tmp_path, uv.find_uv_bin(), uv_cache)
        proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (
        f"vf-eval failed:\nSTDOUT:\n{proc.stdout[-4000:]}\nSTDERR:\n{proc.stderr[-4000:]}"
    )

    # The default harness ran verifiers' bash agent: one `bash` tool, no edit tool, our read-only prompt.
    tools = {tuple(t["function"]["name"] for t in body.get("tools") or []) for body in server.requests}
    assert tools == {("bash",)}
    system = server.requests[0]["messages"][0]["content"]
    assert "You are a coding agent" in system and "Do not modify the repository" in system

    traces = {}
    for episode in read_episodes(out / "agentic" / "traces.jsonl"):
        assert episode["ok"], episode["errors"]
        (trace,) = episode["traces"]
        traces[trace["task"]["data"]["record"]["instance_id"]] = trace
    assert set(traces) == {r.instance_id for r in records}

    for record in records:
        trace = traces[record.instance_id]
        replies = sampled(trace)
        calls = sum(len(m.get("tool_calls") or []) for m in replies)
        assert trace["metrics"]["tool_calls"] == calls and trace["metrics"]["turns"] == len(replies)
        # Rewards are the env's own scoring of the final reply, plus the exploration term.
        final = (replies[-1].get("content") or "").strip()
        want = score_completion(record, final, trace["task"]["data"]["valid_ids"])
        got = {name: r["score"] for name, r in trace["rewards"].items()}
        assert got == want.model_dump() | {"exploration_cost": -calls}
        assert trace["rewards"]["exploration_cost"]["weight"] == EXPLORATION_COST
        total = sum(r["score"] * r["weight"] for r in trace["rewards"].values())  # verifiers' trace.reward
        assert total == pytest.approx(want.routed_reward - EXPLORATION_COST * calls)

    # Task 0: a shared clone at base_commit, history cut there; the source clone untouched.
    t0 = traces[explore.instance_id]
    outputs = tool_outputs(t0)
    assert "README.md" in outputs and "pkg" in outputs and "Widgets." in outputs
    assert f"./pkg/core.py:1:def {WORD}(x):" in outputs
    assert f"./tests/test_core.py:1:from pkg.core import {WORD}" in outputs
    assert f"{BASE_SUBJECT}\n{BASE_TAG}" in outputs  # `git log --all; git tag`: history ends at the base
    assert "future.py" not in outputs and LATER_SUBJECT not in outputs and LATER_TAG not in outputs
    assert [len(m.get("tool_calls") or []) for m in sampled(t0)] == [2, 1, 1, 0]
    assert t0["rewards"]["routed_reward"]["score"] == 1.0
    source = repos / clone_dir_name(explore.repo)
    assert git(source, "rev-parse", LATER_TAG) == later and git(source, "rev-parse", BASE_TAG) == base

    # Task 1: the instance checkout, copied as it is; routed to another valid model.
    t1 = traces[wrong.instance_id]
    assert f"./only_in_instance.txt:1:{WORD}" in tool_outputs(t1)
    assert t1["rewards"]["routed_reward"]["score"] == 0.0 and t1["stop_condition"] != "turn_budget"

    # Task 2: never answers; the budget ends it after TURN_BUDGET turns, with no valid route.
    t2 = traces[runaway.instance_id]
    assert t2["stop_condition"] == "turn_budget"
    assert len(sampled(t2)) == TURN_BUDGET == t2["metrics"]["turns"]
    assert t2["rewards"]["routed_reward"]["score"] == -1.0
    assert t2["rewards"]["parsed_valid_route"]["score"] == 0.0
