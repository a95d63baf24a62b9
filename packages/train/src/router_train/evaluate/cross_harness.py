"""`evaluate --test-table TEST [--calibrate N,...]`: routers fitted on one harness's outcomes, judged on
another's.

The folds are the table's (TRAIN's) as always; every learned router is fitted on TRAIN's outcomes of the
train-fold tasks and routes the held-out tasks, seeing only their text (`blinded`: the records it is handed
to route carry no outcome of either table). Its decisions are judged twice: on TRAIN's held-out outcomes
(the first evaluation, as without `--test-table`) and on TEST's (`cross_harness`), each against the
oracle, single models and mix frontier of the outcomes it is judged on. `--calibrate N` re-routes each
fold's held-out tasks after re-estimating the router's figures on TEST's outcomes of the first N of them
(`calibrated_routes`), which are then not scored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from router_frontier_rl.split import seeded_order
from router_oracle.analysis.noise import default_measured, estimate_noise
from router_oracle.table import ModelOutcome, OracleTable, TaskRecord
from router_train.evaluate.calibrated_routes import (
    CALIBRATED_FIXED,
    calibrated_cheapest,
    calibrated_columns,
    measured_on,
)
from router_train.evaluate.cross_harness_model import (
    CalibratedRouter,
    CalibrationStep,
    CrossHarness,
    HarnessGap,
)
from router_train.evaluate.design import Partition
from router_train.evaluate.evaluation import build_evaluation
from router_train.evaluate.fitted import FittedDecisions
from router_train.evaluate.report import Evaluation, TableInfo
from router_train.scoring import baselines
from router_train.scoring.decisions import UNPARSEABLE, Decisions, EvaluateError, from_labels
from router_train.scoring.dial import RouterScores

Rows = list[tuple[Decisions, list[Decisions], bool]]
"""Routers of one evaluation: (pooled decisions, per fold seed, in-sample), as `build_evaluation` takes."""
EvaluationOf = Callable[[str, list[TaskRecord], Rows], Evaluation]
"""Builds an evaluation on TEST's outcomes of the given tasks."""

UNCALIBRATED = " (uncalibrated)"
"""Suffix of a router's row without re-estimation inside a calibration step's evaluation."""


def check_same_tasks(
    train: OracleTable, train_info: TableInfo, test: OracleTable, test_info: TableInfo
) -> None:
    """One `EvaluateError` line naming both files when their pools or task sets differ."""
    files = f"--table {train_info.file} and --test-table {test_info.file}"
    if train.pool.ids != test.pool.ids:
        raise EvaluateError(f"{files} have different pools: {train.pool.ids} vs {test.pool.ids}")
    a, b = {t.instance_id for t in train.tasks}, {t.instance_id for t in test.tasks}
    if a != b:
        only_a, only_b = sorted(a - b), sorted(b - a)
        raise EvaluateError(
            f"{files} cover different tasks: {len(only_a)} only in {train_info.file}"
            f"{f' (e.g. {only_a[0]})' if only_a else ''}, {len(only_b)} only in {test_info.file}"
            f"{f' (e.g. {only_b[0]})' if only_b else ''}"
        )


def check_calibration_sizes(partitions: Sequence[Partition], sizes: Sequence[int]) -> None:
    """Every `--calibrate N` must leave tasks to score in every fold."""
    smallest = min(len(p.test) for p in partitions)
    too_big = [n for n in sizes if n >= smallest]
    if too_big:
        raise EvaluateError(
            f"--calibrate {max(too_big)}: every fold holds out at least {smallest} tasks and N of them "
            f"calibrate, so N must be below {smallest} (fewer --folds hold out more tasks per fold)"
        )


def blinded(task: TaskRecord) -> TaskRecord:
    """`task` as a router routing it may see: its text, no outcome (every model 0 resolved at $0, no oracle
    label). Built without validation: it exists only to be routed."""
    nothing = ModelOutcome.model_construct(resolve_rate=0.0, cost=0.0, runs=[])
    return task.model_copy(
        update={
            "per_model": dict.fromkeys(task.per_model, nothing),
            "oracle": "",
            "best": [],
            "all_failed": False,
        }
    )


def blinded_partitions(partitions: Sequence[Partition]) -> list[Partition]:
    """The same fits, each routing its test tasks `blinded`."""
    return [
        Partition(p.repeat, p.label, p.train, [blinded(t) for t in p.test], p.in_sample) for p in partitions
    ]


def label_agreement(train: OracleTable, test: OracleTable) -> float:
    """Share of tasks whose oracle label is the same in both tables."""
    by_id = {t.instance_id: t.oracle for t in test.tasks}
    return round(sum(t.oracle == by_id[t.instance_id] for t in train.tasks) / len(train.tasks), 6)


def calibration_ids(partition: Partition, fold_seed: int, n: int) -> list[str]:
    """The first `n` held-out tasks of a fit: its test ids in the fold seed's seeded-hash order (a fold's
    ids are sorted, so the first by id would be one repository's)."""
    return seeded_order([t.instance_id for t in partition.test], fold_seed)[:n]


def _pick(label: str) -> str | None:
    return None if label == UNPARSEABLE else label


def cross_harness(
    train: OracleTable,
    test: OracleTable,
    test_info: TableInfo,
    main: Evaluation,
    partitions: Sequence[Partition],
    fold_seeds: Sequence[int],
    fitted: FittedDecisions,
    scores: Sequence[Sequence[RouterScores]],
    seed: int,
    calibrate: Sequence[int] = (),
) -> CrossHarness:
    """The fitted routers' decisions judged on `test`'s outcomes, beside their in-harness gaps (`main`'s),
    and the `calibrate` steps."""
    pool = train.pool.ids
    test_by_id = {t.instance_id: t for t in test.tasks}
    measured_noise = default_measured(test)

    def evaluation(name: str, tasks: list[TaskRecord], rows: Rows) -> Evaluation:
        noise = estimate_noise(test, [t.instance_id for t in tasks], measured=measured_noise)
        return build_evaluation(name, tasks, pool, seed, rows, None, noise)

    tasks = sorted(test.tasks, key=lambda t: t.instance_id)
    rows = [(fitted.pooled(n), fitted.by_repeat(n), False) for n in fitted.kinds]
    oracle = baselines.oracle(tasks)
    ev = evaluation("cross-harness", tasks, [*rows, (oracle, [oracle] * len(fold_seeds), False)])
    cross = {r.name: r for r in ev.routers}
    in_harness = {r.name: r for r in main.routers}
    gaps = [
        HarnessGap(
            name=n,
            kind=cross[n].kind,
            in_harness=in_harness[n].gap_vs_mix,
            cross_harness=cross[n].gap_vs_mix,
            cross_resolved=cross[n].metrics.resolved_rate,
            cross_cost=cross[n].metrics.mean_cost,
        )
        for n in fitted.kinds
    ]
    steps = [
        _calibration_step(n, test_by_id, pool, partitions, fold_seeds, fitted, scores, evaluation)
        for n in sorted(set(calibrate))
    ]
    return CrossHarness(
        test_table=test_info.file,
        test_sha256=test_info.sha256,
        n_tasks=len(tasks),
        label_agreement=label_agreement(train, test),
        single_models=ev.single_models,
        frontier=ev.frontier,
        oracle_gap=cross["oracle"].gap_vs_mix,
        routers=gaps,
        calibration=steps,
    )


def _calibration_step(
    n: int,
    test_by_id: dict[str, TaskRecord],
    pool: list[str],
    partitions: Sequence[Partition],
    fold_seeds: Sequence[int],
    fitted: FittedDecisions,
    scores: Sequence[Sequence[RouterScores]],
    evaluation: EvaluationOf,
) -> CalibrationStep:
    """`--calibrate n`: per fit, re-estimate on TEST's outcomes of its first n held-out tasks, route the
    rest."""
    scored_names = {s.name for per in scores for s in per}
    names = [k for k in fitted.kinds if k in scored_names or k in CALIBRATED_FIXED]
    calibrated: dict[str, dict[str, list[str | None]]] = {k: {} for k in names}
    plain: dict[str, dict[str, list[str | None]]] = {k: {} for k in names}
    for p, per in zip(partitions, scores, strict=True):
        cal = set(calibration_ids(p, fold_seeds[p.repeat], n))
        cal_rows = [i for i, t in enumerate(p.test) if t.instance_id in cal]
        rest_rows = [i for i, t in enumerate(p.test) if t.instance_id not in cal]
        rest_ids = [p.test[i].instance_id for i in rest_rows]
        by_name = {s.name: s for s in per}
        measured = measured_on([test_by_id[p.test[i].instance_id] for i in cal_rows], pool) if n else None
        for k in names:
            for tid in rest_ids:
                plain[k].setdefault(tid, []).append(_pick(fitted.picks[k][p.repeat][tid]))
            if measured is None:
                labels: list[str | None] = [_pick(fitted.picks[k][p.repeat][tid]) for tid in rest_ids]
            elif k in by_name:
                s = by_name[k]
                cols = calibrated_columns(s, p.train, cal_rows, rest_rows, measured)
                labels = [s.model_ids[int(c)] for c in cols]
            else:  # cheapest-on-train
                labels = [calibrated_cheapest(measured, pool)] * len(rest_ids)
            for tid, label in zip(rest_ids, labels, strict=True):
                calibrated[k].setdefault(tid, []).append(label)
    tasks = [test_by_id[t] for t in sorted(next(iter(plain.values()), {}))] if names else []
    if not tasks:  # no learned router to calibrate: the scored tasks are every task left
        left = {t.instance_id for p in partitions for t in p.test} - {
            i for p in partitions for i in calibration_ids(p, fold_seeds[p.repeat], n)
        }
        tasks = [test_by_id[t] for t in sorted(left)]
    oracle = baselines.oracle(tasks)
    rows: Rows = [(oracle, [], False)]
    for k in names:
        rows.append((from_labels(k, fitted.kinds[k], calibrated[k]), [], False))
        rows.append((from_labels(k + UNCALIBRATED, fitted.kinds[k], plain[k]), [], False))
    ev = evaluation(f"calibrate {n}", tasks, rows)
    by_row = {r.name: r for r in ev.routers}
    return CalibrationStep(
        n=n,
        n_scored=len(tasks),
        oracle_gap=by_row["oracle"].gap_vs_mix,
        routers=[
            CalibratedRouter(
                name=k,
                gap_vs_mix=by_row[k].gap_vs_mix,
                uncalibrated=by_row[k + UNCALIBRATED].gap_vs_mix,
                resolved=by_row[k].metrics.resolved_rate,
                cost_per_task=by_row[k].metrics.mean_cost,
            )
            for k in names
        ],
    )
