"""`evaluate --test-table` (cross-harness judging) and `--calibrate N` (re-estimation on the first N held-out
tasks): judged on TEST's outcomes, trained on TRAIN's train-fold outcomes only, mismatches refused."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evaluate_tables import IDS, make_table

from router_oracle.table import OracleTable, TaskRecord, write_table
from router_train.cli import main
from router_train.evaluate import EvaluateError, evaluate
from router_train.evaluate import cross_harness as cross_harness_module
from router_train.evaluate.calibrated_routes import Measured, ability_shift, calibrated_columns, measured_on
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.cross_harness import calibration_ids
from router_train.evaluate.design import fold_partitions
from router_train.evaluate.report import EvalReport, TableInfo
from router_train.scoring.decisions import Decisions, from_labels
from router_train.scoring.default_point import SafePoint
from router_train.scoring.dial import RouterScores


def _info(table: OracleTable, name: str) -> TableInfo:
    return TableInfo(file=name, sha256="0" * 64, pool=table.pool.ids, n_tasks=len(table.tasks))


TRAIN = make_table(n=80, seed=1)
TEST = make_table(n=80, seed=2)  # same ids, pool and texts; other outcomes (another "harness")


class Spy:
    """Records what it was trained on and what it was handed to route; routes each test task to the model
    of its repository's most common oracle label on the train tasks (a statistic of train tasks only)."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[TaskRecord], list[TaskRecord]]] = []

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        self.calls.append((list(train), list(test)))
        top = Counter(t.oracle for t in train).most_common(1)[0][0]
        return [from_labels("spy", "baseline", {t.instance_id: [top] for t in test})]


def _cross(test: OracleTable, fitters: Sequence[Any] = (), **kw: Any) -> EvalReport:
    return evaluate(
        TRAIN,
        _info(TRAIN, "train.json"),
        EvaluateConfig(folds=4, fold_seeds=[0, 1], local_routers=[], **kw),
        fitters=list(fitters),
        test_table=(test, _info(test, "test.json")),
    )


def test_training_sees_train_outcomes_of_train_fold_tasks_only() -> None:
    spy = Spy()
    report = _cross(TEST, [spy], include_baselines=False)
    train_by_id = {t.instance_id: t for t in TRAIN.tasks}
    everything = set(train_by_id)
    assert len(spy.calls) == 8
    for train, test in spy.calls:
        held = {t.instance_id for t in test}
        assert not held & {t.instance_id for t in train}
        assert {t.instance_id for t in train} | held == everything
        # the train records are TRAIN's own, never TEST's
        assert all(t == train_by_id[t.instance_id] for t in train)
        for t in test:  # the held-out tasks come with their text and no outcome of either table
            assert t.problem_statement == train_by_id[t.instance_id].problem_statement
            assert t.oracle == "" and not t.best
            assert all(o.resolve_rate == 0 and o.cost == 0 and not o.runs for o in t.per_model.values())
    assert report.cross_harness is not None
    assert [r.name for r in report.cross_harness.routers] == ["spy"]


def test_cross_harness_judges_on_test_outcomes() -> None:
    same = _cross(TRAIN, include_baselines=True)
    other = _cross(TEST, include_baselines=True)
    assert same.cross_harness is not None and other.cross_harness is not None
    # judged on its own outcomes, the cross-harness gap is the in-harness gap
    assert same.cross_harness.label_agreement == 1.0
    for r in same.cross_harness.routers:
        assert r.cross_harness.mean == r.in_harness.mean and r.cross_harness.low == r.in_harness.low
    # the same fitted decisions (TRAIN is the table in both), judged on other outcomes: other scores
    assert [r.in_harness for r in same.cross_harness.routers] == [
        r.in_harness for r in other.cross_harness.routers
    ]
    test_by_id = {t.instance_id: t for t in TEST.tasks}
    agree = sum(t.oracle == test_by_id[t.instance_id].oracle for t in TRAIN.tasks) / len(TRAIN.tasks)
    assert other.cross_harness.label_agreement == pytest.approx(agree) and agree < 1.0
    assert [p.resolved for p in other.cross_harness.single_models] != [
        p.resolved for p in same.cross_harness.single_models
    ]
    assert any(
        a.cross_harness.mean != b.cross_harness.mean
        for a, b in zip(same.cross_harness.routers, other.cross_harness.routers, strict=True)
    )
    # the in-harness evaluation is what evaluate reports without --test-table
    plain = evaluate(
        TRAIN, _info(TRAIN, "train.json"), EvaluateConfig(folds=4, fold_seeds=[0, 1], local_routers=[])
    )
    assert [r.gap_vs_mix for r in plain.main.routers] == [r.gap_vs_mix for r in other.main.routers]


def test_mismatched_pools_or_tasks_are_refused_in_one_line() -> None:
    fewer = TEST.model_copy(update={"tasks": TEST.tasks[1:]})
    with pytest.raises(EvaluateError, match=r"train\.json and --test-table test\.json cover different tasks"):
        _cross(fewer)
    renamed = TEST.model_copy(
        update={"pool": TEST.pool.model_copy(update={"models": list(reversed(TEST.pool.models))})}
    )
    with pytest.raises(EvaluateError, match="different pools"):
        _cross(renamed)
    with pytest.raises(EvaluateError, match="--test-table needs --folds"):
        evaluate(
            TRAIN,
            _info(TRAIN, "t.json"),
            EvaluateConfig(local_routers=[]),
            test_table=(TEST, _info(TEST, "u.json")),
        )
    with pytest.raises(EvaluateError, match="--calibrate needs --test-table"):
        evaluate(TRAIN, _info(TRAIN, "t.json"), EvaluateConfig(folds=4, calibrate=[5], local_routers=[]))
    with pytest.raises(EvaluateError, match=r"--calibrate 20: .* N must be below 20"):
        _cross(TEST, calibrate=[5, 20])


def test_cli_mismatch_exit_2_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_table(TRAIN, tmp_path / "a.json")
    write_table(TEST.model_copy(update={"tasks": TEST.tasks[:-1]}), tmp_path / "b.json")
    code = main(
        ["evaluate", "--folds", "4", "--fold-seeds", "0", "--table", str(tmp_path / "a.json"),
         "--test-table", str(tmp_path / "b.json"), "-o", str(tmp_path / "out")]
    )  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "a.json" in err and "b.json" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_calibration_uses_exactly_the_first_n_held_out_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def spy(tasks: Sequence[TaskRecord], pool: Sequence[str]) -> Measured:
        seen.append([t.instance_id for t in tasks])
        return measured_on(tasks, pool)

    monkeypatch.setattr(cross_harness_module, "measured_on", spy)
    report = _cross(TEST, include_baselines=True, calibrate=[0, 6])
    parts = fold_partitions(TRAIN, "train.json", 4, [0, 1])
    first = [calibration_ids(p, [0, 1][p.repeat], 6) for p in parts]
    # one re-estimation per fit, on exactly its first 6 held-out tasks
    assert [set(s) for s in seen] == [set(f) for f in first]
    test_by_id = {t.instance_id: t for t in TEST.tasks}
    for p, ids in zip(parts, first, strict=True):
        held = [t.instance_id for t in p.test]
        assert set(ids) <= set(held) and len(ids) == 6
        assert ids != sorted(held)[:6]  # seeded order, not one repository's first ids
    assert report.cross_harness is not None
    zero, six = report.cross_harness.calibration
    assert zero.n == 0 and zero.n_scored == 80
    # a task is scored unless it calibrated under both fold seeds
    both = set(first[0] + first[1] + first[2] + first[3]) & set(first[4] + first[5] + first[6] + first[7])
    assert six.n == 6 and six.n_scored == 80 - len(both)
    for r0 in zero.routers:  # N = 0 is the cross-harness judgement itself
        cross = next(r for r in report.cross_harness.routers if r.name == r0.name)
        gaps = (r0.gap_vs_mix, cross.cross_harness, r0.uncalibrated)
        assert len({(g.mean, g.low, g.high) for g in gaps}) == 1  # steps give no per-fold-seed spread
    # cheapest-on-train re-estimated: the cheapest model on TEST's outcomes of the calibration tasks
    cheap = {r.name: r for r in six.routers}["cheapest-on-train"]
    assert cheap.cost_per_task > 0
    assert {measured_on([test_by_id[i] for i in ids], IDS).mean_cost.argmin() for ids in first} == {
        IDS.index("small")
    }


def test_each_rule_re_estimates_what_it_reads() -> None:
    pool = IDS  # big, mid, small: dearest first
    train = TRAIN.tasks[:30]
    cal = [t.model_copy(update={"oracle": "big"}) for t in TEST.tasks[:10]]
    measured = measured_on(cal, pool)
    rest = [10, 11]
    cal_rows = list(range(10))
    # a classifier a little surer of `small`: TEST's label shares (all `big`) shift it to `big`
    logp = np.log(np.tile([0.3, 0.3, 0.4], (12, 1)))
    clf = RouterScores("tfidf-logreg(balanced)", pool, logp[:5], logp)
    assert [pool[c] for c in calibrated_columns(clf, train, cal_rows, rest, measured)] == ["big", "big"]
    # the same scores from a router without a prior (local-grpo): only the costs move, nothing changes
    local = RouterScores("local-grpo", pool, logp[:5], logp)
    assert [pool[c] for c in calibrated_columns(local, train, cal_rows, rest, measured)] == ["small", "small"]
    # ...and a tie goes to the model cheapest on the calibration tasks
    tied = RouterScores("local-grpo", pool, logp[:5], np.zeros((12, 3)))
    cheapest = pool[int(measured.mean_cost.argmin())]
    assert [pool[c] for c in calibrated_columns(tied, train, cal_rows, rest, measured)] == [cheapest] * 2
    # IRT: predicted `small` 0.2 everywhere, `big` 0.6; TEST shows `small` resolving every calibration task
    p = np.tile([0.6, 0.5, 0.2], (12, 1))
    resolved = [t.model_copy(update={"per_model": {**t.per_model, "small": t.per_model["small"].model_copy(
        update={"resolve_rate": 1.0})}}) for t in cal]  # fmt: skip
    m2 = measured_on(resolved, pool)
    irt = RouterScores("irt", pool, p[:5], p, probabilities=p, tolerance=0.05)
    assert [pool[c] for c in calibrated_columns(irt, train, cal_rows, rest, m2)] == ["small", "small"]
    shift = ability_shift(p[:10], m2.resolve_rate, 10)
    assert (
        shift[2] > 0 and abs(float(np.mean(1 / (1 + np.exp(-(np.log(0.2 / 0.8) + shift[2]))))) - 0.95) < 1e-6
    )


def test_always_the_cheapest_is_re_estimated_by_the_measured_costs() -> None:
    pool = IDS  # big, mid, small
    train = TRAIN.tasks[:30]
    cal_rows, rest = list(range(10)), [10, 11]
    # On the calibration tasks `big` costs least: the measured cheapest, whatever the train tasks said.
    cal = [
        t.model_copy(
            update={
                "per_model": {**t.per_model, "big": t.per_model["big"].model_copy(update={"cost": 0.001})}
            }
        )
        for t in TEST.tasks[:10]
    ]
    measured = measured_on(cal, pool)
    assert pool[int(measured.mean_cost.argmin())] == "big"
    logp = np.log(np.tile([0.2, 0.3, 0.5], (12, 1)))
    native = RouterScores("local-grpo", pool, logp[:5], logp)
    assert [pool[c] for c in calibrated_columns(native, train, cal_rows, rest, measured)] == [
        "small",
        "small",
    ]
    # "always the cheapest model": the cheapest by the measured costs, not by the train tasks'
    cheapest = replace(native, safe_point=SafePoint(choice="cheapest", model="small", inner_folds=5))
    assert [pool[c] for c in calibrated_columns(cheapest, train, cal_rows, rest, measured)] == ["big", "big"]
    # the native route or a dial point: the re-estimated scores, as without a point (a dial's lambda
    # priced the train harness's costs)
    for point in (
        SafePoint(choice="router", inner_folds=5),
        SafePoint(choice="dial", dial=50.0, share=0.5, inner_folds=5),
    ):
        kept = replace(native, safe_point=point)
        assert [pool[c] for c in calibrated_columns(kept, train, cal_rows, rest, measured)] == ["small"] * 2
