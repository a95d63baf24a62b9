"""`router-train route --budget / --dial` (issue 20 item 3): a budget lands on the router's own training
tasks, the dial moves cost monotonically through the CLI, the dial rule is evaluate's `apply_dial`, older
checkpoints are calibrated at load when their table is at hand, and bad input is one line, exit 2."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from bash_only import bash_only_table_path

from router_frontier_rl.split import select_tasks
from router_oracle.table_check import load_table
from router_train.cli import main
from router_train.evaluate.dial import apply_dial
from router_train.route import CheckpointSpec, bundled_tasks, load_router
from router_train.scoring.metrics import task_outcome
from router_train.serve.config import ServeConfigError, read_config

OPERATING = re.compile(
    r"operating point: dial (\S+), expected \$([0-9.]+)/task, resolved ([0-9.]+)% on the (\d+) training tasks"
)


@pytest.fixture(scope="module")
def table():
    return load_table(bash_only_table_path())


@pytest.fixture(scope="module")
def train_records(table):
    return select_tasks(table, "train")


@pytest.fixture(scope="module")
def logreg_checkpoint(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("logreg")
    argv = ["--split", "train", "--table", str(bash_only_table_path()), "--output-dir", str(out)]
    assert main(["fit", "tfidf-logreg", *argv]) == 0
    return out / "checkpoint.json"


@pytest.fixture(scope="module")
def train_file(tmp_path_factory, train_records) -> Path:
    bundled = bundled_tasks()
    path = tmp_path_factory.mktemp("tasks") / "train.jsonl"
    path.write_text("".join(bundled[t.instance_id].model_dump_json() + "\n" for t in train_records))
    return path


def _route(capsys, *argv: str) -> tuple[list[dict], str]:
    capsys.readouterr()
    assert main(["route", "--quiet", *argv]) == 0
    cap = capsys.readouterr()
    return [json.loads(line) for line in cap.out.splitlines()], cap.err


def _realised(decisions: list[dict], table) -> float:
    by_id = {t.instance_id: t for t in table.tasks}
    return float(np.mean([task_outcome(by_id[d["instance_id"]], d["model"])[1] for d in decisions]))


@pytest.mark.parametrize("kind", ["grpo", "logreg"])
@pytest.mark.parametrize("share", [0.2, 0.5, 0.8])
def test_budget_lands_on_its_own_training_tasks(
    kind, share, grpo_checkpoint, logreg_checkpoint, train_file, table, capsys
):
    ckpt = grpo_checkpoint if kind == "grpo" else logreg_checkpoint
    cal = json.loads(ckpt.read_text())["calibration"]
    costs = [p["cost_per_task"] for p in cal["points"]]
    budget = min(costs) + share * (max(costs) - min(costs))
    out, err = _route(
        capsys,
        "--checkpoint",
        str(ckpt),
        "--budget",
        f"{budget:.6f}",
        "--no-safe-point",
        "--tasks",
        str(train_file),
    )
    m = OPERATING.search(err)
    assert m is not None, err
    assert int(m.group(4)) == len(out) == 400
    realised = _realised(out, table)
    # The routed training tasks spend what the operating point says, within the budget, close to it.
    assert abs(realised - float(m.group(2))) < 6e-4
    assert realised <= budget + 1e-6 and budget - realised < 0.02
    dial = float(m.group(1))
    assert all(d["dial"] == pytest.approx(dial, rel=1e-5, abs=1e-6) for d in out)  # printed to 6 digits


def test_dial_moves_cost_monotonically_through_the_cli(
    grpo_checkpoint, logreg_checkpoint, train_file, capsys
):
    for ckpt in (grpo_checkpoint, logreg_checkpoint):
        cal = json.loads(ckpt.read_text())["calibration"]
        price = dict(zip(cal["model_ids"], cal["model_costs"], strict=True))
        dials = np.linspace(cal["points"][0]["dial"], cal["points"][-1]["dial"], 7)
        spent, expected = [], []
        for d in dials:
            out, err = _route(
                capsys,
                "--checkpoint",
                str(ckpt),
                "--dial",
                repr(float(d)),
                "--no-safe-point",
                "--tasks",
                str(train_file),
            )
            spent.append(float(np.mean([price[x["model"]] for x in out])))
            m = OPERATING.search(err)
            assert m is not None
            expected.append(float(m.group(2)))
        assert all(a >= b - 1e-12 for a, b in itertools.pairwise(spent)), spent
        assert all(a >= b for a, b in itertools.pairwise(expected)), expected
        assert spent[0] > spent[-1]
        # Past the table's cheapest end every task goes to the cheapest model.
        assert spent[-1] == pytest.approx(min(price.values()))


def test_dial_is_evaluates_rule_and_explain_shows_dialled_scores(grpo_checkpoint, train_records, capsys):
    router = load_router(CheckpointSpec(checkpoint=grpo_checkpoint, dial=0.7, no_safe_point=True))
    assert (
        router.point.dial == 0.7 and router.point.calibration is not None and router.point.bought is not None
    )
    bundled = bundled_tasks()
    tasks = [bundled[t.instance_id] for t in train_records[:40]]
    from router_train.local.checkpoint import load_policy

    logits = load_policy(grpo_checkpoint).logits(list(tasks))
    picks = apply_dial(logits, np.asarray(router.point.calibration.model_costs), 0.7)
    decisions = router.route_many(tasks)
    assert [d.model for d in decisions] == [router.pool[i] for i in picks]
    for d, row in zip(decisions, logits, strict=True):
        scores = d.scores
        assert d.dial == 0.7 and scores is not None
        want = row - 0.7 * np.asarray(router.point.calibration.model_costs)
        assert list(scores.values()) == pytest.approx(list(want))
        assert max(scores, key=lambda m: scores[m]) == d.model
    # Dial 0 is the router as trained.
    native = CheckpointSpec(checkpoint=grpo_checkpoint, no_safe_point=True)
    plain = load_router(native).route_many(tasks, explain=False)
    zero = load_router(CheckpointSpec(checkpoint=grpo_checkpoint, dial=0.0, no_safe_point=True)).route_many(
        tasks, explain=False
    )
    assert [d.model for d in plain] == [d.model for d in zero]
    assert "dial" not in plain[0].json_line() and '"dial":0.0' in zero[0].json_line()


def test_older_checkpoint_is_calibrated_from_its_table(grpo_checkpoint, logreg_checkpoint, tmp_path, capsys):
    for ckpt, old_version in ((grpo_checkpoint, 2), (logreg_checkpoint, 1)):
        doc = json.loads(ckpt.read_text())
        stored = doc.pop("calibration")
        doc["version"] = old_version
        old = tmp_path / f"old-{old_version}.json"
        old.write_text(json.dumps(doc))
        router = load_router(CheckpointSpec(checkpoint=old, budget=0.3, no_safe_point=True))
        assert router.point.calibration is not None and router.point.calibration.model_dump() == stored
        # Its table is not at hand (a path that is gone): one line saying what to do.
        doc["table"] = str(tmp_path / "gone.json")
        old.write_text(json.dumps(doc))
        capsys.readouterr()
        assert (
            main(
                ["route", "--checkpoint", str(old), "--budget", "0.3", "--instance", "astropy__astropy-12907"]
            )
            == 2
        )
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "re-train / re-fit to calibrate" in err


def test_anypool_budget_is_calibrated_for_the_given_pool(anypool_checkpoint, tmp_path, capsys):
    out = anypool_checkpoint.parent  # kimi-k2.5-high held out
    pool = tmp_path / "pool.toml"
    ids = ["kimi-k2.5-high", "gpt-5-mini", "claude-opus-4.6"]
    rows = "".join(f'[[models]]\nid = "{m}"\nname = "{m}"\nruns = ["run-{m}"]\n' for m in ids)
    pool.write_text(f'name = "mine"\n{rows}')
    router = load_router(CheckpointSpec(checkpoint=out / "checkpoint.json", pool=pool, budget=0.2))
    cal = router.point.calibration
    assert cal is not None and sorted(cal.model_ids) == sorted(ids)
    ckpt = json.loads((out / "checkpoint.json").read_text())
    assert cal.n_tasks == len(ckpt["train_task_ids"])
    assert router.point.bought is not None and router.point.bought.cost_per_task <= 0.2 + 1e-9
    assert router.point.dial == router.point.bought.dial


def test_bad_dial_input_is_one_line_exit_2(grpo_checkpoint, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    ck = ["--checkpoint", str(grpo_checkpoint), "-o", str(out), "--instance", "astropy__astropy-12907"]

    def bad(*argv: str) -> str:
        capsys.readouterr()
        code: str | int | None
        try:
            code = main(["route", "--quiet", *argv])
        except SystemExit as exc:  # argparse's own flag errors: usage line + one error line
            code = exc.code
        assert code == 2
        err = capsys.readouterr().err
        assert len([x for x in err.strip().splitlines() if not x.startswith(("usage:", " "))]) == 1
        assert "Traceback" not in err
        assert not out.exists()
        return err

    assert "at most one of budget (--budget), quality (--quality) and dial (--dial)" in bad(
        *ck, "--budget", "0.3", "--dial", "1"
    )
    # Numbers go through the project's one numeric-option validator: argparse names the flag.
    for value, why in (
        ("-0.1", "greater than 0"),
        ("0", "greater than 0"),
        ("inf", "finite number"),
        ("nan", "finite number"),
        ("1e9", "less than or equal to 1000"),
    ):
        err = bad(*ck, "--budget", value)
        assert "argument --budget: " in err and why in err
    for value, why in (
        ("inf", "finite number"),
        ("-inf", "finite number"),
        ("nan", "finite number"),
        ("1e12", "less than or equal to 1000000"),
    ):
        err = bad(*ck, f"--dial={value}")
        assert "argument --dial: " in err and why in err
    ep = [
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "-o",
        str(out),
        "--instance",
        "astropy__astropy-12907",
    ]
    assert "endpoint (LLM) router gives no per-model log-probabilities" in bad(*ep, "--budget", "0.3")
    assert "dial (--dial): an endpoint" in bad(*ep, "--dial", "1")
    assert (
        main(
            [
                "fit",
                "cheapest-on-train",
                "--table",
                str(bash_only_table_path()),
                "--output-dir",
                str(tmp_path / "cheap"),
            ]
        )
        == 0
    )
    cheap = ["--checkpoint", str(tmp_path / "cheap" / "checkpoint.json"), "-o", str(out)]
    err = bad(*cheap, "--instance", "astropy__astropy-12907", "--budget", "0.3")
    assert "--budget" in err and "no per-model scores" in err


def test_budget_below_the_cheapest_point_routes_there_with_a_note(grpo_checkpoint, train_file, capsys):
    cal = json.loads(grpo_checkpoint.read_text())["calibration"]
    price = dict(zip(cal["model_ids"], cal["model_costs"], strict=True))
    out, err = _route(
        capsys,
        "--checkpoint",
        str(grpo_checkpoint),
        "--budget",
        "0.001",
        "--no-safe-point",
        "--tasks",
        str(train_file),
    )
    assert "note: budget $0.001/task is below the router's cheapest point" in err
    m = OPERATING.search(err)
    assert m is not None and float(m.group(2)) == pytest.approx(
        min(p["cost_per_task"] for p in cal["points"]), abs=1e-3
    )
    assert {d["model"] for d in out} == {min(price, key=lambda k: price[k])}


def test_serve_config_router_table_takes_budget_and_dial(grpo_checkpoint, tmp_path):
    path = tmp_path / "serve.toml"
    up = '[upstreams.m]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    path.write_text(f'[router]\ncheckpoint = "{grpo_checkpoint}"\nbudget = 0.3\n{up}')
    router = read_config(path).router
    assert isinstance(router, CheckpointSpec) and router.budget == 0.3
    path.write_text(f'[router]\ncheckpoint = "{grpo_checkpoint}"\nbudget = 0.3\ndial = 1.0\n{up}')
    with pytest.raises(
        ServeConfigError, match=r"at most one of budget \(--budget\), quality \(--quality\) and dial"
    ):
        read_config(path)
