"""`router-train route` / `fit` and `router_train.route`: every local router kind routes bundled and new
tasks exactly as evaluate's code path does for the same fitted router; bad input is one line, exit 2."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bash_only import bash_only_table_path

from router_frontier_rl.split import select_tasks
from router_oracle.table import dumps_table
from router_oracle.table_check import load_table
from router_train.anypool.checkpoint import load_any_pool_router
from router_train.cli import main
from router_train.evaluate.run import Source, _checkpoint
from router_train.route import CheckpointSpec, TaskInput, bundled_tasks, issue_task, load_router
from router_train.route.plan import id_filter
from router_train.scoring import baselines
from router_train.scoring.decisions import Decisions

NEW_ISSUES = [
    ("django/django", "QuerySet.bulk_update() crashes with a TypeError when a field is a JSONField."),
    ("sympy/sympy", "simplify(sin(x)**2 + cos(x)**2) returns the input unchanged for symbols x real."),
    ("acme/widgets", "The widget factory forgets its colour after a reload; no traceback."),
]


@pytest.fixture(scope="module")
def table():
    return load_table(bash_only_table_path())


@pytest.fixture(scope="module")
def eval_ids(table) -> list[str]:
    return sorted(t.instance_id for t in select_tasks(table, "eval"))


def _tasks_file(path: Path, tasks: list[TaskInput]) -> Path:
    # Extra SWE-bench fields are ignored; `difficulty` is kept (bundled tasks carry it).
    rows = [{**t.model_dump(), "patch": "--- gold, never read", "base_commit": "abc"} for t in tasks]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _route(capsys, *argv: str) -> list[dict]:
    capsys.readouterr()
    assert main(["route", "--quiet", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _instances(ids: list[str]) -> list[str]:
    return [arg for i in ids for arg in ("--instance", i)]


def _pool_toml(path: Path, ids: list[str]) -> Path:
    rows = "".join(f'[[models]]\nid = "{m}"\nname = "{m}"\nruns = ["run-{m}"]\n' for m in ids)
    path.write_text(f'name = "mine"\n{rows}', encoding="utf-8")
    return path


def _new_tasks() -> list[TaskInput]:
    return [issue_task(text, repo) for repo, text in NEW_ISSUES]


def test_routing_with_a_checkpoint_imports_neither_verifiers_nor_openai(grpo_checkpoint):
    # `route` and `serve` with a local checkpoint start in ~1.3 s; importing verifiers (~3 s) or openai
    # (~0.5 s) only to build prompts or endpoint clients they never use made every `route` call 5 s.
    script = (
        "import sys\n"
        "import router_train.cli, router_train.serve_app\n"
        "from router_train.route import CheckpointSpec, TaskInput, load_router\n"
        f"router = load_router(CheckpointSpec(checkpoint={str(grpo_checkpoint)!r}))\n"
        "router.route(TaskInput(instance_id='a__b-1', repo='a/b', problem_statement='It breaks.'))\n"
        "print(sorted(m for m in ('verifiers', 'openai') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_grpo_checkpoint_routes_as_evaluate(grpo_checkpoint, table, eval_ids, tmp_path, capsys):
    bundled = bundled_tasks()
    tasks = [bundled[i] for i in eval_ids] + _new_tasks()
    # The native route (the safe default point is test_train_safe_point's): a copy stores none.
    doc = json.loads(grpo_checkpoint.read_text(encoding="utf-8"))
    doc.pop("safe_point", None)
    native = tmp_path / "native.json"
    native.write_text(json.dumps(doc), encoding="utf-8")
    out = _route(
        capsys,
        "--checkpoint",
        str(grpo_checkpoint),
        "--no-safe-point",
        "--tasks",
        str(_tasks_file(tmp_path / "t.jsonl", tasks)),
    )
    got = {d["instance_id"]: d["model"] for d in out}
    assert len(got) == len(tasks) and all(d["router"].startswith("local:") for d in out)
    # evaluate's own code path on the same checkpoint, for the table's eval tasks ...
    records = [t for t in table.tasks if t.instance_id in set(eval_ids)]
    external, _ = _checkpoint(Source(name="grpo", path=native), records, table.pool.ids, "eval", False, False)
    assert {i: got[i] for i in eval_ids} == {i: next(iter(d)) for i, d in external.decisions.choices.items()}
    # ... and the policy's route (what evaluate calls) for new issues.
    from router_train.local.checkpoint import load_policy

    policy = load_policy(grpo_checkpoint)
    for t in _new_tasks():
        assert got[t.instance_id] == policy.route([t])[0]
    # The Python API is the same code: one task at a time gives the same decisions, scores explain them.
    router = load_router(CheckpointSpec(checkpoint=grpo_checkpoint, no_safe_point=True))
    for t in tasks[:5] + _new_tasks():
        d = router.route(t)
        scores = d.scores
        assert d.model == got[t.instance_id] and scores is not None
        assert max(scores, key=lambda m: scores[m]) == d.model and abs(sum(scores.values()) - 1) < 1e-9
    matrix = router.scores(tasks)
    assert matrix is not None and matrix.shape == (len(tasks), 3)


@pytest.fixture(scope="module")
def evaluate_baselines(table) -> dict[str, Decisions]:
    """evaluate's baselines, fitted on the train split sorted by id, routing the eval split (by name)."""
    train = sorted(select_tasks(table, "train"), key=lambda t: t.instance_id)
    test = sorted(select_tasks(table, "eval"), key=lambda t: t.instance_id)
    return {d.name: d for d in baselines.fitted_baselines(train, test, table.pool.ids, 0)}


@pytest.mark.parametrize("name", ["cheapest-on-train", "tfidf-logreg", "tfidf-logreg(balanced)", "tfidf-knn"])
def test_saved_baseline_routes_as_evaluate(name, table, eval_ids, evaluate_baselines, tmp_path, capsys):
    assert (
        main(
            [
                "fit",
                name,
                "--split",
                "train",
                "--table",
                str(bash_only_table_path()),
                "--output-dir",
                str(tmp_path / "fit"),
            ]
        )
        == 0
    )
    ckpt = tmp_path / "fit" / "checkpoint.json"
    # The native route, as evaluate's --no-safe-point rows (the safe point: test_train_safe_point).
    argv = ["--checkpoint", str(ckpt), "--table", str(bash_only_table_path()), "--explain", "--no-safe-point"]
    out = _route(capsys, *argv, *_instances(eval_ids))
    got = {d["instance_id"]: d["model"] for d in out}
    # evaluate fits its baselines on the train split sorted by id and routes the eval split with them.
    rows = evaluate_baselines
    row = next(d for n, d in rows.items() if n.startswith(name) and (n == name or n.startswith("tfidf-knn")))
    assert got == {i: next(iter(c)) for i, c in row.choices.items()}
    assert out[0]["router"].startswith(row.name + ":") and out[0]["scores"]
    # New issues route too (the same fit, read from the saved file).
    new = _route(
        capsys, "--checkpoint", str(ckpt), "--tasks", str(_tasks_file(tmp_path / "n.jsonl", _new_tasks()))
    )
    assert [d["model"] in table.pool.ids for d in new] == [True] * len(NEW_ISSUES)


def test_anypool_checkpoint_routes_any_pool_as_evaluate_anypool(
    anypool_checkpoint, eval_ids, tmp_path, capsys
):
    ids = ["claude-sonnet-4.5", "gpt-5-mini", "kimi-k2.5-high", "o3"]
    pool = _pool_toml(tmp_path / "pool.toml", ids)
    bundled = bundled_tasks()
    tasks = [bundled[i] for i in eval_ids[:40]] + _new_tasks()
    out = _route(
        capsys,
        "--checkpoint",
        str(anypool_checkpoint),
        "--pool",
        str(pool),
        "--tasks",
        str(_tasks_file(tmp_path / "t.jsonl", tasks)),
        "--explain",
    )
    got = {d["instance_id"]: d["model"] for d in out}
    # evaluate-anypool routes a pool with `AnyPoolPolicy.route(tasks, PoolView.build(...))`, as this does.
    ref = load_any_pool_router(anypool_checkpoint)
    routes = ref.route(tasks, ids)
    assert got == {t.instance_id: r for t, r in zip(tasks, routes, strict=True)}
    assert set(out[0]["scores"]) == set(ids)


def test_plan_runs_exactly_each_models_tasks(tmp_path, eval_ids, capsys):
    assert (
        main(
            [
                "fit",
                "tfidf-knn",
                "--table",
                str(bash_only_table_path()),
                "--output-dir",
                str(tmp_path / "fit"),
            ]
        )
        == 0
    )
    model_map = tmp_path / "map.toml"
    model_map.write_text('[models]\n"claude-opus-4.6" = "anthropic/claude-opus-4-6"\n', encoding="utf-8")
    out = tmp_path / "routes.jsonl"
    ids = eval_ids[:30]
    argv = ["route", "--quiet", "--checkpoint", str(tmp_path / "fit" / "checkpoint.json"), "-o", str(out)]
    argv += [
        *_instances(ids),
        "--plan",
        "mini-swe-agent",
        "--model-map",
        str(model_map),
    ]
    capsys.readouterr()
    assert main(argv) == 0
    plan = capsys.readouterr().out
    routes = [json.loads(line) for line in out.read_text().splitlines()]
    commands = [line for line in plan.splitlines() if line.startswith("mini-extra swebench")]
    assert len(commands) == len({r["model"] for r in routes})
    import shlex

    for cmd in commands:
        words = shlex.split(cmd)
        flags = dict(zip(words[2::2], words[3::2], strict=True))
        model_id = Path(flags["--output"]).name
        assert flags["--subset"] == "verified" and flags["--split"] == "test"
        if model_id == "claude-opus-4.6":
            assert flags["--model"] == "anthropic/claude-opus-4-6"
        # mini-swe-agent keeps instances whose id re.match-es --filter: exactly this model's tasks.
        pattern = flags["--filter"]
        all_ids = list(bundled_tasks())
        assert {i for i in all_ids if re.match(pattern, i)} == {
            r["instance_id"] for r in routes if r["model"] == model_id
        }
    assert id_filter(["a.b", "a"]) == r"^(?:a|a\.b)$"


def test_bad_input_is_one_line_exit_2_nothing_written(grpo_checkpoint, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    ck = ["--checkpoint", str(grpo_checkpoint), "-o", str(out)]

    def bad(*argv: str) -> str:
        capsys.readouterr()
        assert main(["route", "--quiet", *argv]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert not out.exists()
        return err

    assert "not a bundled SWE-bench Verified task" in bad(*ck, "--instance", "nope__nope-1")
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"instance_id": "a", "repo": "o/n", "problem_statement": "x"}\n{"instance_id": \n')
    assert "line 2" in bad(*ck, "--tasks", str(lines))
    lines.write_text('{"instance_id": "a", "repo": "o/n"}\n')
    err = bad(*ck, "--tasks", str(lines))
    assert "line 1" in err and "problem_statement" in err
    lines.write_text("")
    assert "no tasks" in bad(*ck, "--tasks", str(lines))
    # A checkpoint for another pool, or another table.
    pool = _pool_toml(tmp_path / "pool.toml", ["o3", "gpt-5-mini"])
    assert "trained for the pool" in bad(*ck, "--pool", str(pool), "--instance", "astropy__astropy-12907")
    other = tmp_path / "table.json"
    other.write_text(dumps_table(load_table(bash_only_table_path()).model_copy(update={"command": "other"})))
    assert "trained on table" in bad(*ck, "--table", str(other), "--instance", "astropy__astropy-12907")
    one = ["-o", str(out), "--instance", "astropy__astropy-12907"]
    assert "not a router checkpoint" in bad("--checkpoint", str(other), *one)
    assert "malformed JSON" in bad("--checkpoint", str(pool), *one)
    assert "exactly one of" in bad(*ck)
    assert "--repo" in bad(*ck, "--issue", str(lines))
    assert "fallback" in bad(*ck, "--fallback", "o3", "--instance", "astropy__astropy-12907")


def test_bad_checkpoint_kind_options(anypool_checkpoint, tmp_path, capsys):
    capsys.readouterr()
    assert (
        main(["route", "--checkpoint", str(anypool_checkpoint), "--instance", "astropy__astropy-12907"]) == 2
    )
    assert "needs --pool" in capsys.readouterr().err
    pool = _pool_toml(tmp_path / "pool.toml", ["not-a-candidate", "o3"])
    assert (
        main(
            [
                "route",
                "--checkpoint",
                str(anypool_checkpoint),
                "--pool",
                str(pool),
                "--instance",
                "astropy__astropy-12907",
            ]
        )
        == 2
    )
    assert "unknown candidate model" in capsys.readouterr().err


def test_plan_every_model_runs_every_task_per_pool_model(tmp_path, eval_ids, capsys):
    assert (
        main(
            [
                "fit",
                "cheapest-on-train",
                "--table",
                str(bash_only_table_path()),
                "--output-dir",
                str(tmp_path / "fit"),
            ]
        )
        == 0
    )
    ids = eval_ids[:3]
    argv = [
        "route",
        "--quiet",
        "--checkpoint",
        str(tmp_path / "fit" / "checkpoint.json"),
        "-o",
        str(tmp_path / "o"),
    ]
    capsys.readouterr()
    assert main([*argv, *_instances(ids), "--plan", "mini-swe-agent", "--plan-every-model"]) == 0
    plan = capsys.readouterr().out
    commands = [line for line in plan.splitlines() if line.startswith("mini-extra swebench")]
    assert [c.split("--output ")[1] for c in commands] == [
        f"runs/route/{m}" for m in ("claude-opus-4.6", "gpt-5.2-high", "kimi-k2.5-high")
    ]
    assert all(f"--filter '{id_filter(ids)}'" in c for c in commands)
    assert "no --model-map entry" in plan
