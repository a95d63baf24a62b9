"""Evaluate routers on held-out tasks (the env's split, or cross-validation) and write the report files."""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from router_frontier_rl.split import SplitName
from router_oracle.atomic_file import publish_directory
from router_oracle.file_hash import sha256_file
from router_oracle.frontier import frontier_vertices
from router_oracle.noise import NoiseEstimate, default_measured, estimate_noise
from router_oracle.table import OracleTable, TaskRecord, load_table
from router_train.evaluate import baselines, curves
from router_train.evaluate.curves_plot import render_curves_png
from router_train.evaluate.decisions import Decisions, EvaluateError, from_labels
from router_train.evaluate.design import Partition, fold_partitions, split_partition
from router_train.evaluate.dial import RouterScores
from router_train.evaluate.fitted import (
    LOCAL_ROUTER_NAME,
    BaselineFitter,
    Fitter,
    LocalFitter,
    fit_partitions,
)
from router_train.evaluate.metrics import (
    compute_metrics,
    oracle_distribution,
    single_model_points,
    task_resample,
)
from router_train.evaluate.plot import render_png
from router_train.evaluate.report import (
    CURVES_PNG,
    PLOT_PNG,
    Design,
    EvalReport,
    Evaluation,
    Gap,
    RouterRow,
    TableInfo,
    dumps_report,
    render_markdown,
)
from router_train.evaluate.traces import read_traces

if TYPE_CHECKING:  # the local trainer is imported where it runs: it imports evaluate's metrics back
    from router_train.local import LocalTrainConfig

REPORT_JSON = "report.json"
REPORT_MD = "report.md"


class Source(BaseModel):
    """A router to evaluate from a file: a local checkpoint or a vf-eval traces.jsonl."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Row label."""
    path: Path
    """The file."""


def read_table(path: str | os.PathLike[str]) -> tuple[OracleTable, TableInfo]:
    """Load a table and describe it by file name and sha256 (so the report names exactly what it judged)."""
    table = load_table(path)
    info = TableInfo(
        file=Path(path).name, sha256=sha256_file(path), pool=table.pool.ids, n_tasks=len(table.tasks)
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
    """Route `tasks` (or, under cross-validation, those it never trained on) with a local checkpoint.

    Refuses a checkpoint trained on any task it would be scored on, unless `allow_in_sample`."""
    from router_train.local.checkpoint import policy_of, read_checkpoint  # the trainer owns its format

    try:
        ckpt = read_checkpoint(source.path)
        policy = policy_of(ckpt)
    except (OSError, ValueError) as exc:
        raise EvaluateError(f"{source.path}: cannot load checkpoint: {exc}") from exc
    trained = set(ckpt.train_task_ids)
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
    routes = policy.route(tasks)
    bad = sorted({r for r in routes if r not in pool})
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


def _pts(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 4) + 0.0


def gap_in_points(
    metrics_gap: float | None, ci: tuple[float, float] | None, by_repeat: list[float | None]
) -> Gap:
    """A gap, its interval and its value per fold seed (fractions, as the metrics give them) in points."""
    per_seed = [_pts(g) for g in by_repeat]
    known = [g for g in per_seed if g is not None]
    return Gap(
        mean=_pts(metrics_gap),
        low=_pts(ci[0]) if ci else None,
        high=_pts(ci[1]) if ci else None,
        by_fold_seed=per_seed,
        sd=round(statistics.stdev(known), 4) + 0.0 if len(known) >= 2 else None,
    )


def build_evaluation(
    name: str,
    tasks: list[TaskRecord],
    pool: list[str],
    seed: int,
    routers: Sequence[tuple[Decisions, list[Decisions], bool]],
    n_train_tasks: int | None,
    oracle_noise: NoiseEstimate,
) -> Evaluation:
    """Every router on `tasks`, against the single models measured on the same tasks.

    `routers`: (pooled decisions, decisions per fold seed (empty outside cross-validation), in-sample);
    `oracle_noise`: the rollout-noise estimate on `tasks`."""
    singles = single_model_points(tasks, pool)
    resample = task_resample(tasks, pool, seed)
    rows = []
    for d, repeats, in_sample in routers:
        m = compute_metrics(d, tasks, singles, resample)
        assert m.frontier is not None
        per_seed = [compute_metrics(r, tasks, singles).frontier for r in repeats]
        gap = gap_in_points(
            m.frontier.gap_vs_mix, m.frontier.gap_ci, [f.gap_vs_mix if f else None for f in per_seed]
        )
        rows.append(
            RouterRow(
                name=d.name,
                kind=d.kind,
                source=d.source,
                n_tasks=len(tasks),
                in_sample=in_sample,
                gap_vs_mix=gap,
                metrics=m,
                recorded=d.recorded,
            )
        )
    return Evaluation(
        name=name,
        n_tasks=len(tasks),
        n_train_tasks=n_train_tasks,
        oracle_distribution={k: round(v, 6) for k, v in oracle_distribution(tasks).items()},
        solvable_tasks=sum(not t.all_failed for t in tasks),
        single_models=singles,
        frontier=frontier_vertices(singles),
        routers=rows,
        oracle_noise=oracle_noise,
    )


def with_curves(
    ev: Evaluation,
    partitions: Sequence[Partition],
    scores: Sequence[Sequence[RouterScores]],
    tasks: list[TaskRecord],
    pool: list[str],
    seed: int,
) -> Evaluation:
    """`ev` with each scoring router's cost dial curve and the reference curves (`curves.build_curves`)."""
    by_name, summary = curves.build_curves(partitions, scores, tasks, pool, seed)
    rows = [
        r.model_copy(update={"curve": by_name[r.name].points, "curve_metrics": by_name[r.name].metrics})
        if r.name in by_name
        else r
        for r in ev.routers
    ]
    return ev.model_copy(update={"routers": rows, "curves": summary})


def default_local_routers() -> list[tuple[str, LocalTrainConfig]]:
    """`local-grpo`: the local trainer with its default settings."""
    from router_train.local import LocalTrainConfig

    return [(LOCAL_ROUTER_NAME, LocalTrainConfig())]


def evaluate(
    table: OracleTable,
    table_info: TableInfo,
    *,
    split: SplitName = "eval",
    eval_fraction: float = 0.2,
    split_seed: int = 0,
    folds: int | None = None,
    fold_seeds: Sequence[int] = (0,),
    seed: int = 0,
    checkpoints: Sequence[Source] = (),
    traces: Sequence[Source] = (),
    local_routers: Sequence[tuple[str, LocalTrainConfig]] | None = None,
    include_baselines: bool = True,
    only_covered: bool = False,
    allow_in_sample: bool = False,
    fitters: Sequence[Fitter] = (),
    jobs: int = 1,
    progress: bool = False,
) -> EvalReport:
    """Evaluate the baselines and every given router on tasks none of the learned ones trained on.

    Split mode (`folds` None): the env's `split`; learned routers are fitted on its train split.
    Cross-validation (`folds` = K): every task of the table, K folds per fold seed; in each fold every
    learned router is fitted on the other folds only. `local_routers` are (row name, LocalTrainConfig)
    pairs trained per fit (None: `local-grpo` with the defaults, a built-in like the baselines);
    `fitters` adds any other learned router. Checkpoints and traces are scored only on tasks they did
    not train on (refused in split mode, narrowed under cross-validation) unless `allow_in_sample`.
    `only_covered` (split mode) narrows the tasks to those every traces file covers.
    """
    pool = table.pool.ids
    origin = table_info.file
    cv = folds is not None
    notes: list[str] = []
    partitions: list[Partition]
    if cv:
        assert folds is not None
        partitions = fold_partitions(table, origin, folds, fold_seeds)
        tasks = sorted(table.tasks, key=lambda t: t.instance_id)
        design = Design(mode="cross-validation", folds=folds, fold_seeds=list(fold_seeds))
        scope = f"the {len(tasks)} tasks of the table"
        n_train: int | None = None
    else:
        tasks, part = split_partition(table, origin, split, eval_fraction, split_seed)
        partitions = [part]
        design = Design(mode="split", split=split, eval_fraction=eval_fraction, split_seed=split_seed)
        scope = f"split {split} (eval_fraction {eval_fraction}, split_seed {split_seed})"
        n_train = len(part.train)

    externals: list[_External] = []
    for s in traces:
        ext, note = _traces(s, tasks, pool, allow_in_sample)
        externals.append(ext)
        notes += [note] if note else []
    if only_covered and traces and not cv:
        covered = [t for t in tasks if all(t.instance_id in e.decisions.choices for e in externals)]
        if not covered:
            raise EvaluateError("no task of the split is covered by every --traces file")
        notes.append(f"only the {len(covered)} of {len(tasks)} split tasks covered by every traces file")
        tasks = covered
        partitions = [
            Partition(0, partitions[0].label, partitions[0].train, covered, partitions[0].in_sample)
        ]
    for s in checkpoints:
        ext, note = _checkpoint(s, tasks, pool, scope, cv, allow_in_sample)
        externals.append(ext)
        notes += [note] if note else []

    fixed = baselines.fixed_baselines(tasks, pool, seed) if include_baselines else []
    all_fitters: list[Fitter] = [BaselineFitter(pool)] if include_baselines else []
    if local_routers is None:
        local_routers = default_local_routers() if include_baselines else []
    all_fitters += [LocalFitter(name, cfg, pool) for name, cfg in local_routers]
    all_fitters += list(fitters)
    part_scores: list[list[RouterScores]] | None = [] if cv else None  # the curves' per-model scores
    fitted = fit_partitions(partitions, all_fitters, seed, jobs=jobs, progress=progress, scores=part_scores)

    names = [d.name for d in fixed] + list(fitted.kinds) + [e.decisions.name for e in externals]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise EvaluateError(
            f"two routers share the name(s) {dup}: give each --checkpoint/--traces/--local a NAME="
        )
    if not names:
        raise EvaluateError(
            "nothing to evaluate: give --checkpoint, --traces or --local, or keep the baselines"
        )

    repeats = len(fold_seeds) if cv else 0
    in_sample_fitted = partitions[0].in_sample
    base_rows: list[tuple[Decisions, list[Decisions], bool]] = [(d, [d] * repeats, False) for d in fixed]
    base_rows += [
        (fitted.pooled(n), fitted.by_repeat(n) if cv else [], in_sample_fitted) for n in fitted.kinds
    ]

    # External routers scored on every evaluated task join the main table; the others are compared with
    # every built-in router on exactly their own tasks, one evaluation per distinct task set.
    all_ids = [t.instance_id for t in tasks]
    groups: dict[tuple[str, ...], list[_External]] = {}
    for e in externals:
        groups.setdefault(tuple(t.instance_id for t in e.tasks), []).append(e)
    main_ext = groups.pop(tuple(all_ids), [])
    if not cv:  # split mode: every external router is scored on the split (missing tasks count unparseable)
        main_ext += [e for group in groups.values() for e in group]
        groups = {}
    # Which models were run twice and how much they disagree: measured once, on all the table's tasks.
    measured = default_measured(table)

    def noise(sub: list[TaskRecord]) -> NoiseEstimate:
        return estimate_noise(table, [t.instance_id for t in sub], measured=measured)

    evaluations = [
        build_evaluation(
            "all",
            tasks,
            pool,
            seed,
            base_rows + [(e.decisions, [], e.in_sample) for e in main_ext],
            n_train,
            noise(tasks),
        )
    ]
    for ids, group in groups.items():
        sub = [t for t in tasks if t.instance_id in set(ids)]
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

    if part_scores:
        evaluations[0] = with_curves(evaluations[0], partitions, part_scores, tasks, pool, seed)
    for ev in evaluations:
        for r in ev.routers:
            if r.metrics.tasks_missing:
                notes.append(
                    f"{r.name}: {r.metrics.tasks_missing} of {ev.n_tasks} tasks have no decision "
                    "(counted as unparseable)"
                )
    if cv:
        assert folds is not None
        sizes = sorted({len(p.train) for p in partitions})
        notes.insert(
            0,
            f"learned routers were fitted {len(partitions)} times ({folds} folds x {len(fold_seeds)} fold "
            f"seeds), each time on the {sizes[0]}-{sizes[-1]} tasks outside the fold they route",
        )
    elif in_sample_fitted and (fitted.kinds):
        notes.append(
            f"split {split!r} overlaps the train split: the learned routers are scored in-sample here"
        )
    cheapest = fitted.chosen.get(baselines.CHEAPEST_NAME)
    if cheapest:
        notes.append(f"{baselines.CHEAPEST_NAME} routed to {', '.join(sorted(cheapest))}")
    return EvalReport(table=table_info, design=design, seed=seed, evaluations=evaluations, notes=notes)


def write_report(report: EvalReport, outdir: str | os.PathLike[str], *, plot: bool = True) -> list[Path]:
    """Write report.json, report.md and the PNG into `outdir`, all together or none.

    Everything is rendered first, then the files are published as one set (`publish_directory`): a
    reader sees the previous report or the new one, never a mix; other files in `outdir` are kept,
    and a PNG of an earlier run is dropped when `plot` is off.
    """
    out = Path(outdir)
    files: dict[str, bytes] = {
        REPORT_JSON: dumps_report(report).encode("utf-8"),
        REPORT_MD: render_markdown(report, PLOT_PNG if plot else None).encode("utf-8"),
    }
    if plot:
        files[PLOT_PNG] = render_png(report)
        if report.main.curves is not None:
            files[CURVES_PNG] = render_curves_png(report)
    with publish_directory(out, owned=(REPORT_JSON, REPORT_MD, PLOT_PNG, CURVES_PNG)) as staged:
        for name, data in files.items():
            (staged / name).write_bytes(data)
    return [out / name for name in files]
