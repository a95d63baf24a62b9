"""`router-train evaluate --traces` on agentic traces (the env's `repo_access` mode): the final reply is the
route, and turns and tool calls reach the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router_train.cli import main
from router_train.evaluate import read_table, read_traces
from router_train.evaluate.traces import episode_counts, last_reply
from router_train.scoring.metrics import compute_metrics

DATA = Path(__file__).parent / "data"
AGENTIC_TRACES = DATA / "evaluate_agentic_traces.jsonl"
"""A real `vf-eval router-frontier-rl --env.taskset.repo-access true --env.taskset.turn-budget 4` output
(stub model on 127.0.0.1 reading fixture repositories with `ls`, `grep -rn`, `git log`; the env's offline
end-to-end test), long texts trimmed: one task routed to its oracle after 4 tool calls in 3 turns, one to
another model after 2, one that never stopped calling tools and ran out of turns."""
AGENTIC_TABLE = DATA / "evaluate_agentic_table.json"
"""The bundled table cut to the 3 tasks of AGENTIC_TRACES, which its recorded rewards were scored on."""


def test_final_reply_after_tool_calls_is_the_route() -> None:
    table, _ = read_table(AGENTIC_TABLE)
    ids = {t.instance_id for t in table.tasks}
    d = read_traces(AGENTIC_TRACES, table.pool.ids, ids, name="agentic")
    oracle = {t.instance_id: t.oracle for t in table.tasks}
    picks = {tid: max(c, key=c.__getitem__) for tid, c in d.choices.items()}
    assert picks["scikit-learn__scikit-learn-14710"] == oracle["scikit-learn__scikit-learn-14710"]
    assert picks["sphinx-doc__sphinx-9602"] in table.pool.ids
    assert picks["sphinx-doc__sphinx-9602"] != oracle["sphinx-doc__sphinx-9602"]
    assert picks["sympy__sympy-14531"] == "<unparseable>"  # out of turns on a tool call
    # Our scoring of the final replies reproduces what the environment recorded during the run.
    m = compute_metrics(d, table.tasks)
    assert m.mean_reward == pytest.approx(d.recorded["reward/routed_reward"], abs=1e-6) == 0.0
    assert 1 - m.unparseable_rate == pytest.approx(d.recorded["reward/parsed_valid_route"], abs=1e-6)
    # Turns and tool calls, counted from the traces, agree with the env's own metrics: means over 3 traces.
    assert d.recorded["trace/turns"] == pytest.approx((4 + 3 + 4) / 3, abs=1e-6)
    assert d.recorded["trace/tool_calls"] == pytest.approx((4 + 2 + 4) / 3, abs=1e-6)
    assert d.recorded["trace/turns"] == d.recorded["metric/turns"]
    assert d.recorded["trace/tool_calls"] == d.recorded["metric/tool_calls"]


def test_counts_of_single_turn_and_hand_made_traces() -> None:
    def node(role: str, sampled: bool, calls: int = 0) -> dict:
        message: dict = {"role": role, "content": "x"}
        if calls:
            message["tool_calls"] = [{"id": str(i), "name": "bash", "arguments": "{}"} for i in range(calls)]
        return {"message": message, "sampled": sampled}

    assert episode_counts({"nodes": [node("user", False), node("assistant", True)]}) == {
        "trace/turns": 1.0,
        "trace/tool_calls": 0.0,
    }
    trace = {
        "nodes": [
            node("assistant", False, calls=5),  # prompt-supplied: not the model's
            node("assistant", True, calls=2),
            node("tool", False),
            node("tool", False),
            node("assistant", True),
        ]
    }
    assert episode_counts(trace) == {"trace/turns": 2.0, "trace/tool_calls": 2.0}
    assert last_reply(trace) == "x"
    assert episode_counts({}) == {"trace/turns": 0.0, "trace/tool_calls": 0.0}


def test_report_shows_turns_and_tool_calls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep"
    argv = ["evaluate", "--table", str(AGENTIC_TABLE), "--split", "all", "--no-plot", "-o", str(out)]
    assert main([*argv, "--traces", f"agentic={AGENTIC_TRACES}"]) == 0
    assert "agentic" in capsys.readouterr().out
    report = (out / "report.md").read_text()
    assert "trace/tool_calls 3.33333" in report and "trace/turns 3.66667" in report
    assert "trace/tool_calls" in json.dumps(json.loads((out / "report.json").read_text()))
