"""Evaluate routers on held-out tasks (the env's split, or cross-validation) and write the report files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from router_frontier_rl.split import SplitName
from router_oracle.analysis.noise import NoiseEstimate, default_measured, estimate_noise
from router_oracle.infra.file_hash import sha256_file
from router_oracle.table import OracleTable, TaskRecord
from router_oracle.table_check import load_table
from router_train.evaluate import curves, objectives
from router_train.evaluate.config import EvaluateConfig, Source
from router_train.evaluate.cross_harness import (
    blinded_partitions,
    check_calibration_sizes,
    check_same_tasks,
    cross_harness,
)
from router_train.evaluate.cross_harness_plot import render_calibration_png
from router_train.evaluate.cross_harness_text import CALIBRATION_PNG
from router_train.evaluate.curves_plot import render_curves_png
from router_train.evaluate.design import Partition, fold_partitions, split_partition
from router_train.evaluate.dial import RouterScores
from router_train.evaluate.evaluation import build_evaluation
from router_train.evaluate.fitted import LOCAL_ROUTER_NAME, FittedDecisions, Fitter, fit_partitions
from router_train.evaluate.plot import render_png
from router_train.evaluate.report import (
    CURVES_PNG,
    PLOT_PNG,
    Design,
    EvalReport,
    Evaluation,
    TableInfo,
    dumps_report,
    render_markdown,
)
from router_train.evaluate.traces import read_traces
from router_train.fitting import FitRequest, fitters_for
from router_train.irt.router import IrtConfig, check_enough_tasks
from router_train.local.config import LocalTrainConfig
from router_train.report_files import publish_files
from router_train.route.kinds import baseline as baseline_kind
from router_train.route.kinds import irt as irt_kind
from router_train.route.kinds import kind_of
from router_train.route.kinds import local as local_kind
from router_train.scoring import baselines
from router_train.scoring.calibration import held_out_calibration
from router_train.scoring.decisions import Decisions, EvaluateError, from_labels
from router_train.scoring.safe_point import safe_point_notes
from router_train.task_features import load_task_features

REPORT_JSON = "report.json"
REPORT_MD = "report.md"


def read_table(path: str | os.PathLike[str]) -> tuple[OracleTable, TableInfo]:
    """Load a table and describe it by file name and sha256 (so the report names exactly what it judged)."""
    table = load_table(path)
    info = TableInfo(
        file=Path(path).name,
        sha256=sha256_file(path),
        pool=table.pool.ids,
        n_tasks=len(table.tasks),
        path=os.fspath(path),
    )
    return table, info


@dataclass
class _External:
    """A router evaluate did not fit: its decisions, the tasks it may be scored on, and whether they
    include tasks it learned from."""

    decisions: Decisions
    tasks: list[TaskRecord]
    in_sample: bool


def _checkpoint(
    source: Source, tasks: list[TaskRecord], pool: Sequence[str], scope: str, cv: bool, allow_in_sample: bool
) -> tuple[_External, str | None]:
    """Route `tasks` (or, under cross-validation, those it never trained on) with a checkpoint of any
    kind (`route.kinds`: local, any-pool on the table's pool, a saved baseline).

    Refuses a checkpoint trained on any task it would be scored on, unless `allow_in_sample`."""
    try:
        judged = kind_of(source.path).judge(source.path, pool)
    except (OSError, ValueError) as exc:
        raise EvaluateError(f"{source.path}: cannot load checkpoint: {exc}") from exc
    trained = set(judged.train_task_ids)
    seen = [t for t in tasks if t.instance_id in trained]
    note = None
    if seen and not allow_in_sample:
        if not cv:
            raise EvaluateError(
                f"{source.path}: trained on {len(seen)} of the {len(tasks)} tasks of {scope} it would be "
                "scored on; a router is never judged on its training tasks (evaluate its held-out split, "
                "or pass --allow-in-sample to score it anyway, marked in-sample)"
            )
        tasks = [t for t in tasks if t.instance_id not in trained]
        if not tasks:
            raise EvaluateError(
                f"{source.path}: trained on every task of the table; nothing held out to score"
            )
        note = (
            f"{source.name}: scored on the {len(tasks)} tasks it never trained on (it trained on {len(seen)})"
        )
    elif seen:
        note = f"{source.name}: IN-SAMPLE, trained on {len(seen)} of the {len(tasks)} tasks it is scored on"
    routed = judged.router.route_many([t for t in tasks], explain=False)
    routes = [d.model for d in routed]
    bad = sorted({str(r) for r in routes if r not in pool})
    if bad:
        raise EvaluateError(f"{source.path}: checkpoint routes to models not in the table's pool: {bad}")
    picks: dict[str, list[str | None]] = {t.instance_id: [r] for t, r in zip(tasks, routes, strict=True)}
    decisions = from_labels(source.name, "checkpoint", picks, source=source.path.name)
    return _External(decisions, tasks, bool(seen) and allow_in_sample), note


def _traces(
    source: Source, tasks: list[TaskRecord], pool: Sequence[str], allow_in_sample: bool
) -> tuple[_External, str | None]:
    """A vf-eval run's decisions on the tasks it covers; refuses traces served from the train split."""
    d = read_traces(source.path, pool, {t.instance_id for t in tasks}, name=source.name)
    trained = "train" in d.served_splits
    if trained and not allow_in_sample:
        raise EvaluateError(
            f"{source.path}: its episodes were served from the env's train split (split=train), the tasks "
            "a router trains on; run vf-eval with --env.taskset.split eval, or pass --allow-in-sample"
        )
    note = None
    if not d.served_splits:
        note = f"{d.name}: its traces do not record which split served them, so in-sample use is not checked"
    elif trained:
        note = f"{d.name}: IN-SAMPLE, its episodes were served from the train split"
    covered = [t for t in tasks if t.instance_id in d.choices]
    return _External(d, covered, trained), note


def with_curves(
    ev: Evaluation,
    partitions: Sequence[Partition],
    scores: Sequence[Sequence[RouterScores]],
    tasks: list[TaskRecord],
    pool: list[str],
    seed: int,
) -> Evaluation:
    """`ev` with each scoring router's cost dial curve and the reference curves (`curves.build_curves`),
    and what each serves at every objective (`objectives.served_objectives`)."""
    by_name, summary = curves.build_curves(partitions, scores, tasks, pool, seed)
    rows = [
        r.model_copy(update={"curve": by_name[r.name].points, "curve_metrics": by_name[r.name].metrics})
        if r.name in by_name
        else r
        for r in ev.routers
    ]
    served = objectives.served_objectives(partitions, scores, tasks, pool, seed)
    return ev.model_copy(update={"routers": rows, "curves": summary, "objectives": served or None})


def default_local_routers() -> list[tuple[str, LocalTrainConfig]]:
    """`local-grpo`: the local trainer with its default settings."""
    return [(LOCAL_ROUTER_NAME, LocalTrainConfig())]


@dataclass
class _Design:
    """What the cross-validation and the split path hand to the shared steps of `evaluate`."""

    design: Design
    tasks: list[TaskRecord]
    """The tasks every router is scored on."""
    partitions: list[Partition]
    """Each fit's train tasks and the tasks it routes."""
    scope: str
    """The tasks, in words (for checkpoint refusals)."""
    n_train: int | None
    """Train tasks of the one split; None under cross-validation."""
    repeats: int
    """Fold seeds (each task routed once per seed); 0 on a split."""
    cv: bool
    """Cross-validation (else the env's one split)."""


def _cross_validation(table: OracleTable, origin: str, folds: int, fold_seeds: Sequence[int]) -> _Design:
    """Every task of the table, K folds per fold seed."""
    return _Design(
        design=Design(mode="cross-validation", folds=folds, fold_seeds=list(fold_seeds)),
        tasks=sorted(table.tasks, key=lambda t: t.instance_id),
        partitions=fold_partitions(table, origin, folds, fold_seeds),
        scope=f"the {len(table.tasks)} tasks of the table",
        n_train=None,
        repeats=len(fold_seeds),
        cv=True,
    )


def _split(
    table: OracleTable, origin: str, split: SplitName, eval_fraction: float, split_seed: int
) -> _Design:
    """The env's one split."""
    tasks, part = split_partition(table, origin, split, eval_fraction, split_seed)
    return _Design(
        design=Design(mode="split", split=split, eval_fraction=eval_fraction, split_seed=split_seed),
        tasks=tasks,
        partitions=[part],
        scope=f"split {split} (eval_fraction {eval_fraction}, split_seed {split_seed})",
        n_train=len(part.train),
        repeats=0,
        cv=False,
    )


def _only_covered(d: _Design, externals: list[_External]) -> str:
    """Split mode, `--only-covered`: narrow `d` to the tasks every traces file covers; the note."""
    covered = [t for t in d.tasks if all(t.instance_id in e.decisions.choices for e in externals)]
    if not covered:
        raise EvaluateError("no task of the split is covered by every --traces file")
    note = f"only the {len(covered)} of {len(d.tasks)} split tasks covered by every traces file"
    part = d.partitions[0]
    d.tasks, d.partitions = covered, [Partition(0, part.label, part.train, covered, part.in_sample)]
    return note


def _external_groups(d: _Design, externals: list[_External]) -> tuple[list[_External], list[list[_External]]]:
    """External routers scored on every evaluated task (the main table), and the others grouped by task
    set (each compared with every built-in router on exactly its own tasks). On a split every external
    router is scored on the split (missing tasks count unparseable)."""
    if not d.cv:
        return externals, []
    groups: dict[tuple[str, ...], list[_External]] = {}
    for e in externals:
        groups.setdefault(tuple(t.instance_id for t in e.tasks), []).append(e)
    main = groups.pop(tuple(t.instance_id for t in d.tasks), [])
    return main, list(groups.values())


def _evaluations(
    table: OracleTable,
    d: _Design,
    seed: int,
    base_rows: list[tuple[Decisions, list[Decisions], bool]],
    externals: list[_External],
) -> list[Evaluation]:
    """`all` (every built-in router and the external ones scored on every task), then one evaluation per
    other task set of external routers."""
    pool = table.pool.ids
    main_ext, groups = _external_groups(d, externals)
    # Which models were run twice and how much they disagree: measured once, on all the table's tasks.
    measured = default_measured(table)

    def noise(sub: list[TaskRecord]) -> NoiseEstimate:
        return estimate_noise(table, [t.instance_id for t in sub], measured=measured)

    evaluations = [
        build_evaluation(
            "all",
            d.tasks,
            pool,
            seed,
            base_rows + [(e.decisions, [], e.in_sample) for e in main_ext],
            d.n_train,
            noise(d.tasks),
        )
    ]
    for group in groups:
        ids = {t.instance_id for t in group[0].tasks}
        sub = [t for t in d.tasks if t.instance_id in ids]
        label = ", ".join(e.decisions.name for e in group)
        evaluations.append(
            build_evaluation(
                f"the {len(sub)} tasks of {label}",
                sub,
                pool,
                seed,
                base_rows + [(e.decisions, [], e.in_sample) for e in group],
                None,
                noise(sub),
            )
        )
    return evaluations


def evaluate(
    table: OracleTable,
    table_info: TableInfo,
    config: EvaluateConfig | None = None,
    *,
    fitters: Sequence[Fitter] = (),
    test_table: tuple[OracleTable, TableInfo] | None = None,
    progress: bool = False,
) -> EvalReport:
    """Evaluate the baselines and every router `config` names on tasks none of the learned ones trained on.

    Split mode (`config.folds` None): the env's split; learned routers are fitted on its train split.
    Cross-validation (`folds` = K): every task of the table, K folds per fold seed; in each fold every
    learned router is fitted on the other folds only. `fitters` adds any other learned router.
    `test_table` (cross-validation only; same pool and tasks): the fitted routers, which then route
    blinded records, are judged on its outcomes too (`cross_harness`), re-estimated on the first N
    held-out tasks of each fold for each N of `config.calibrate` (which needs it).
    """
    config = config or EvaluateConfig()
    d = _design(table, table_info, config, test_table)
    notes: list[str] = []
    externals = _externals(d, table.pool.ids, config, notes)
    fixed = (
        baselines.fixed_baselines(d.tasks, table.pool.ids, config.seed) if config.include_baselines else []
    )
    all_fitters = _fitters(table, table_info.path or table_info.file, d, config, notes) + list(fitters)
    # The per-model scores: the curves' (cross-validation), and the predicted probabilities' calibration.
    part_scores: list[list[RouterScores]] | None = [] if d.cv or config.irt else None
    # Cross-harness: the fits route records that carry neither table's outcomes.
    fit_parts = d.partitions if test_table is None else blinded_partitions(d.partitions)
    fitted = fit_partitions(
        fit_parts, all_fitters, config.seed, jobs=config.jobs, progress=progress, scores=part_scores
    )
    _check_names([x.name for x in fixed] + list(fitted.kinds) + [e.decisions.name for e in externals])
    in_sample_fitted = d.partitions[0].in_sample
    base_rows: list[tuple[Decisions, list[Decisions], bool]] = [(x, [x] * d.repeats, False) for x in fixed]
    base_rows += [
        (fitted.pooled(n), fitted.by_repeat(n) if d.cv else [], in_sample_fitted) for n in fitted.kinds
    ]
    evaluations = _evaluations(table, d, config.seed, base_rows, externals)
    if part_scores and d.cv:
        evaluations[0] = with_curves(
            evaluations[0], d.partitions, part_scores, d.tasks, table.pool.ids, config.seed
        )
    if part_scores:
        calibration = held_out_calibration([p.test for p in d.partitions], part_scores)
        evaluations[0] = evaluations[0].model_copy(update={"calibration": calibration})
    notes = _notes(d, config, evaluations, fitted, part_scores, notes)
    cross = None
    if test_table is not None:
        assert part_scores is not None
        cross = cross_harness(
            table,
            *test_table,
            evaluations[0],
            d.partitions,
            d.design.fold_seeds,
            fitted,
            part_scores,
            config.seed,
            config.calibrate,
        )
        if externals:
            notes.append(
                "--test-table judges the routers evaluate fits; checkpoints and traces only in-harness"
            )
    return EvalReport(
        table=table_info,
        design=d.design,
        seed=config.seed,
        evaluations=evaluations,
        notes=notes,
        cross_harness=cross,
    )


def _design(
    table: OracleTable,
    table_info: TableInfo,
    config: EvaluateConfig,
    test_table: tuple[OracleTable, TableInfo] | None,
) -> _Design:
    """The split or the folds, and the cross-harness options checked against them."""
    origin = table_info.file
    d = (
        _cross_validation(table, origin, config.folds, config.fold_seeds)
        if config.folds is not None
        else _split(table, origin, config.split, config.eval_fraction, config.split_seed)
    )
    if test_table is not None:
        if not d.cv:
            raise EvaluateError("--test-table needs --folds: routers are judged on another harness per fold")
        check_same_tasks(table, table_info, *test_table)
        check_calibration_sizes(d.partitions, config.calibrate)
    elif config.calibrate:
        raise EvaluateError("--calibrate needs --test-table: it re-estimates on the other harness's outcomes")
    return d


def _externals(d: _Design, pool: Sequence[str], config: EvaluateConfig, notes: list[str]) -> list[_External]:
    """The traces' and checkpoints' decisions (in that order), each one's note added to `notes`."""
    externals: list[_External] = []
    for s in config.traces:
        ext, note = _traces(s, d.tasks, pool, config.allow_in_sample)
        externals.append(ext)
        notes += [note] if note else []
    if config.only_covered and config.traces and not d.cv:
        notes.append(_only_covered(d, externals))
    for s in config.checkpoints:
        ext, note = _checkpoint(s, d.tasks, pool, d.scope, d.cv, config.allow_in_sample)
        externals.append(ext)
        notes += [note] if note else []
    return externals


def _fitters(
    table: OracleTable, shown: str, d: _Design, config: EvaluateConfig, notes: list[str]
) -> list[Fitter]:
    """The learned routers fitted in every partition: each kind's entry of the fitting registry
    (`fitting.FITS`). `shown`: the table's path as given (the user finds the file by it), for a
    too-few-tasks refusal."""
    local_routers = config.local_routers
    if local_routers is None:
        local_routers = default_local_routers() if config.include_baselines else []
    if config.irt:  # too few train tasks for its inner cross-validation: said now, in the user's numbers
        how = (
            f"--folds {config.folds}"
            if config.folds is not None
            else f"--split {config.split}, --eval-fraction {config.eval_fraction}"
        )
        smallest = min(len(p.train) for p in d.partitions)
        check_enough_tasks(smallest, IrtConfig(), f"{shown} ({len(d.tasks)} tasks, --irt with {how})")
    options = {
        baseline_kind.KIND_NAME: config.include_baselines,
        local_kind.KIND_NAME: list(local_routers),
        irt_kind.KIND_NAME: config.irt,
    }
    request = FitRequest(table, d.tasks, options, config.task_features, config.safe_point)
    if config.task_features is not None:
        notes.append(_task_features_note(config.task_features, d.tasks))
    return fitters_for(request)


def _check_names(names: list[str]) -> None:
    """Every row's name is its own, and there is a row."""
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise EvaluateError(
            f"two routers share the name(s) {dup}: give each --checkpoint/--traces/--local a NAME="
        )
    if not names:
        raise EvaluateError(
            "nothing to evaluate: give --checkpoint, --traces or --local, or keep the baselines"
        )


def _notes(
    d: _Design,
    config: EvaluateConfig,
    evaluations: list[Evaluation],
    fitted: FittedDecisions,
    part_scores: list[list[RouterScores]] | None,
    notes: list[str],
) -> list[str]:
    """The report's notes: the externals' (`notes`, given), then the rows' missing tasks, the design's,
    the safe points' and the cheapest baseline's choice."""
    for ev in evaluations:
        for r in ev.routers:
            if r.metrics.tasks_missing:
                notes.append(
                    f"{r.name}: {r.metrics.tasks_missing} of {ev.n_tasks} tasks have no decision "
                    "(counted as unparseable)"
                )
    if d.cv:
        sizes = sorted({len(p.train) for p in d.partitions})
        notes.insert(
            0,
            f"learned routers were fitted {len(d.partitions)} times ({config.folds} folds x {d.repeats} fold "
            f"seeds), each time on the {sizes[0]}-{sizes[-1]} tasks outside the fold they route",
        )
    elif d.partitions[0].in_sample and (fitted.kinds):
        notes.append(
            f"split {config.split!r} overlaps the train split: the learned routers are scored in-sample here"
        )
    if part_scores:
        notes += safe_point_notes(part_scores)
    cheapest = fitted.chosen.get(baselines.CHEAPEST_NAME)
    if cheapest:
        notes.append(f"{baselines.CHEAPEST_NAME} routed to {', '.join(sorted(cheapest))}")
    return notes


def _task_features_note(spec: str, tasks: Sequence[TaskRecord]) -> str:
    """Check (before any fit) that every evaluated task has the features; the report's note on them."""
    features = load_task_features(spec)
    features.check_covers([t.instance_id for t in tasks])
    return (
        f"task features {spec} ({len(features.columns)} columns, standardised on each fit's train tasks) "
        "are inputs of the TF-IDF logistic regressions and the local GRPO routers"
    )


def write_report(report: EvalReport, outdir: str | os.PathLike[str], *, plot: bool = True) -> list[Path]:
    """Write report.json, report.md and the PNG into `outdir`, all together or none.

    Everything is rendered first, then the files are published as one set (`publish_directory`): a
    reader sees the previous report or the new one, never a mix; other files in `outdir` are kept,
    and a PNG of an earlier run is dropped when `plot` is off.
    """
    files: dict[str, bytes] = {
        REPORT_JSON: dumps_report(report).encode("utf-8"),
        REPORT_MD: render_markdown(report, PLOT_PNG if plot else None).encode("utf-8"),
    }
    if plot:
        files[PLOT_PNG] = render_png(report)
        if report.main.curves is not None:
            files[CURVES_PNG] = render_curves_png(report)
        if report.cross_harness is not None and report.cross_harness.calibration:
            files[CALIBRATION_PNG] = render_calibration_png(report.cross_harness)
    return publish_files(outdir, files, owned=(REPORT_JSON, REPORT_MD, PLOT_PNG, CURVES_PNG, CALIBRATION_PNG))
