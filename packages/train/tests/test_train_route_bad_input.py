"""`router-train route`, fourth bad-input round (issue 33): damaged checkpoints, task files with one bad
line, duplicate ids, NUL bytes, a 4 MB and a unicode issue, budgets past the richest point, and two runs
onto one `-o` at once. Bad input is one stderr line, exit 2, nothing written; big or unicode text routes.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from router_train.cli import main

INSTANCE = ["--instance", "astropy__astropy-12907"]
GOOD = {"instance_id": "acme__widgets-1", "repo": "acme/widgets", "problem_statement": "It breaks."}


def _bad(capsys: pytest.CaptureFixture[str], out: Path, *argv: str) -> str:
    """Route `argv` onto `out`: exit 2, one stderr line (no traceback), `out` left as it was (absent)."""
    capsys.readouterr()
    assert main(["route", "--quiet", "-o", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()
    return err


def _ok(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict]:
    capsys.readouterr()
    assert main(["route", "--quiet", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_damaged_checkpoints_are_one_line_naming_the_file(grpo_checkpoint, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    text = grpo_checkpoint.read_text()
    doc = json.loads(text)

    def variant(name: str, body: str) -> str:
        path = tmp_path / name
        path.write_text(body)
        err = _bad(capsys, out, "--checkpoint", str(path), *INSTANCE)
        assert str(path) in err
        return err

    assert "malformed JSON" in variant("empty.json", "")
    assert "malformed JSON" in variant("truncated.json", text[: len(text) // 2])
    nan = copy.deepcopy(doc)
    nan["weights"][0][0] = math.nan
    assert "weights holds non-finite numbers" in variant("nan.json", json.dumps(nan))
    inf = copy.deepcopy(doc)
    inf["calibration"]["points"][0]["cost_per_task"] = math.inf
    assert "calibration" in variant("inf-calibration.json", json.dumps(inf))
    future = {**doc, "version": 99}
    assert "version: Input should be 2 or 3 (got 99)" in variant("future.json", json.dumps(future))
    other_pool = {**doc, "pool_ids": ["o3", "gpt-5-mini"]}
    assert "not the pool ['o3', 'gpt-5-mini']" in variant("other-pool.json", json.dumps(other_pool))
    unknown_kind = {**doc, "kind": "router-train-local-v9"}
    assert "not a router checkpoint" in variant("kind.json", json.dumps(unknown_kind))


def test_task_file_bad_line_among_good_is_named_and_nothing_written(grpo_checkpoint, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    ck = ["--checkpoint", str(grpo_checkpoint)]
    rows = [json.dumps({**GOOD, "instance_id": f"acme__widgets-{i}"}) for i in range(1, 6)]
    tasks = tmp_path / "tasks.jsonl"
    for line, broken in (
        (3, '{"instance_id": "acme__widgets-x", "repo": '),  # truncated JSON
        (4, json.dumps({"instance_id": "acme__widgets-y", "repo": "acme/widgets"})),  # no problem_statement
        (5, "\x00\x00\x00"),  # raw NUL bytes
        (2, json.dumps({**GOOD, "instance_id": "acme__widgets-1"})),  # a duplicate id
    ):
        body = rows.copy()
        body[line - 1] = broken
        tasks.write_text("\n".join(body) + "\n")
        err = _bad(capsys, out, *ck, "--tasks", str(tasks))
        assert f"{tasks}: line {line}" in err
    assert "duplicate task 'acme__widgets-1'" in err
    # NUL as an escaped character inside the issue text is text like any other: it routes.
    tasks.write_text(json.dumps({**GOOD, "problem_statement": "before\x00after"}) + "\n")
    (d,) = _ok(capsys, *ck, "--tasks", str(tasks))
    assert d["instance_id"] == GOOD["instance_id"] and d["model"] is not None


def test_a_4mb_and_a_unicode_issue_route(grpo_checkpoint, tmp_path, capsys):
    # No documented size limit on an issue: a 4 MB text routes like any other (the featuriser reads it).
    ck = ["--checkpoint", str(grpo_checkpoint), "--repo", "acme/widgets"]
    big = tmp_path / "big.txt"
    big.write_text("QuerySet crashes on save. " * 160_000)
    assert big.stat().st_size > 4_000_000
    (d,) = _ok(capsys, *ck, "--issue", str(big))
    assert d["instance_id"].startswith("acme__widgets-issue-") and d["model"] is not None
    uni = tmp_path / "uni.txt"
    uni.write_text(
        "Ошибка 🐛 в модуле 模块: \u202e reversed \u200b zero-width, é vs e\u0301\n", encoding="utf-8"
    )
    (u,) = _ok(capsys, *ck, "--issue", str(uni))
    assert u["model"] is not None and u["instance_id"] != d["instance_id"]
    # Not UTF-8 is one line naming the flag and file.
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("café crashes".encode("latin-1"))
    assert f"--issue {latin}: not UTF-8 text" in _bad(
        capsys, tmp_path / "o.jsonl", *ck, "--issue", str(latin)
    )


def test_budget_above_the_richest_point_routes_at_the_richest_point(grpo_checkpoint, capsys):
    # A budget the router can never spend (up to --budget's bound, 1000) is the calibration's richest
    # point: the best resolved rate on its training tasks; no note (the note is for budgets too small).
    # --no-safe-point: this is the dial's mechanics; whether the margin lets the point ship is
    # test_train_deploy's and the safe-point tests' business (on this tiny fit it does not).
    cal = json.loads(grpo_checkpoint.read_text())["calibration"]
    richest = max(cal["points"], key=lambda p: p["cost_per_task"])
    above = max(cal["model_costs"]) * 10
    for budget in (f"{above:.3f}", "1000"):
        capsys.readouterr()
        assert (
            main(
                [
                    "route",
                    "--quiet",
                    "--no-safe-point",
                    "--checkpoint",
                    str(grpo_checkpoint),
                    "--budget",
                    budget,
                    *INSTANCE,
                ]
            )
            == 0
        )
        captured = capsys.readouterr()
        assert "note:" not in captured.err
        assert f"expected ${richest['cost_per_task']:.3f}/task" in captured.err
        assert f"resolved {100 * richest['resolved']:.1f}%" in captured.err
        assert json.loads(captured.out)["model"] is not None


@pytest.mark.e2e
def test_two_runs_onto_one_output_leave_one_whole_run(grpo_checkpoint, tmp_path):
    # Two processes route different task sets onto the same -o at once: the file is one run's output
    # whole (atomic replace), never the two interleaved or a prefix of one.
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    sets = {}
    for name, n in (("a", 300), ("b", 200)):
        path = tmp_path / f"{name}.jsonl"
        rows = [
            {**GOOD, "instance_id": f"{name}__set-{i}", "problem_statement": f"bug {i} " * 50}
            for i in range(n)
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        sets[name] = path
    for _ in range(3):
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "router_train.cli",
                    "route",
                    "--quiet",
                    "--checkpoint",
                    str(grpo_checkpoint),
                    "--tasks",
                    str(path),
                    "-o",
                    str(out),
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for path in sets.values()
        ]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        prefixes = {d["instance_id"].split("__")[0] for d in lines}
        assert len(prefixes) == 1
        assert len(lines) == {"a": 300, "b": 200}[prefixes.pop()]
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left
