"""Evaluate routers on a split of a table and write the report files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from router_frontier_rl.split import SplitName, select_tasks
from router_oracle.atomic_file import publish_directory
from router_oracle.file_hash import sha256_file
from router_oracle.table import OracleTable, TaskRecord, load_table
from router_train.evaluate import baselines
from router_train.evaluate.bootstrap import TaskResample
from router_train.evaluate.decisions import Decisions, EvaluateError, from_labels
from router_train.evaluate.frontier import frontier_vertices
from router_train.evaluate.metrics import (
    compute_metrics,
    oracle_distribution,
    single_model_points,
    task_outcome,
)
from router_train.evaluate.plot import render_png
from router_train.evaluate.report import (
    PLOT_PNG,
    EvalReport,
    RouterRow,
    SplitInfo,
    TableInfo,
    dumps_report,
    render_markdown,
)
from router_train.evaluate.traces import read_traces

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


def checkpoint_decisions(source: Source, tasks: Sequence[TaskRecord], pool: Sequence[str]) -> Decisions:
    """Greedy routes of a local-trainer checkpoint."""
    from router_train.local import load_policy  # the local trainer owns its checkpoint format

    try:
        policy = load_policy(source.path)
    except (OSError, ValueError) as exc:
        raise EvaluateError(f"{source.path}: cannot load checkpoint: {exc}") from exc
    routes = policy.route(list(tasks))
    bad = sorted({r for r in routes if r not in pool})
    if bad:
        raise EvaluateError(f"{source.path}: checkpoint routes to models not in the table's pool: {bad}")
    picks: dict[str, list[str | None]] = {t.instance_id: [r] for t, r in zip(tasks, routes, strict=True)}
    return from_labels(source.name, "checkpoint", picks, source=source.path.name)


def baseline_decisions(
    tasks: Sequence[TaskRecord], train_tasks: Sequence[TaskRecord], pool: Sequence[str], seed: int
) -> list[Decisions]:
    """Every built-in baseline, in report order."""
    out = [baselines.always(m, tasks) for m in pool]
    out.append(baselines.oracle(tasks))
    out.append(baselines.uniform_random(tasks, pool, seed))
    out.append(baselines.uniform_random_expected(tasks, pool))
    out.append(baselines.always_cheapest(train_tasks, tasks, pool))
    out.append(baselines.tfidf_logreg(train_tasks, tasks, seed))
    out.append(baselines.tfidf_logreg(train_tasks, tasks, seed, balanced=True))
    out.append(baselines.tfidf_knn(train_tasks, tasks))
    return out


def evaluate(
    table: OracleTable,
    table_info: TableInfo,
    *,
    split: SplitName = "eval",
    eval_fraction: float = 0.2,
    split_seed: int = 0,
    seed: int = 0,
    checkpoints: Sequence[Source] = (),
    traces: Sequence[Source] = (),
    include_baselines: bool = True,
    only_covered: bool = False,
) -> EvalReport:
    """Evaluate the baselines and every given router on the same tasks of the env's split.

    `only_covered` narrows the tasks to those every traces file has a decision for (a `vf-eval -n N`
    run covers a prefix of the split); the learned baselines are still fitted on the whole train split.
    """
    try:
        tasks = select_tasks(table, split, eval_fraction=eval_fraction, split_seed=split_seed)
        train_tasks = select_tasks(table, "train", eval_fraction=eval_fraction, split_seed=split_seed)
    except ValueError as exc:
        raise EvaluateError(f"{table_info.file}: cannot split the table: {exc}") from exc
    if not tasks:
        raise EvaluateError(f"split {split!r} of {table_info.file} has no tasks")
    tasks = sorted(tasks, key=lambda t: t.instance_id)  # report order never depends on split order
    pool = table.pool.ids
    known = {t.instance_id for t in tasks}
    from_traces = [read_traces(s.path, pool, known, name=s.name) for s in traces]
    notes: list[str] = []
    if only_covered and from_traces:
        covered = [t for t in tasks if all(t.instance_id in d.choices for d in from_traces)]
        if not covered:
            raise EvaluateError("no task of the split is covered by every --traces file")
        notes.append(f"only the {len(covered)} of {len(tasks)} split tasks covered by every traces file")
        tasks = covered
    sources: list[Decisions] = []
    if include_baselines:
        sources += baseline_decisions(tasks, train_tasks, pool, seed)
    sources += [checkpoint_decisions(s, tasks, pool) for s in checkpoints]
    sources += from_traces
    names = [d.name for d in sources]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise EvaluateError(f"two routers share the name(s) {dup}: give each --checkpoint/--traces a NAME=")
    singles = single_model_points(tasks, pool)
    outcomes = [[task_outcome(t, m) for t in tasks] for m in pool]
    resample = TaskResample(
        np.array([[o[0] for o in row] for row in outcomes]),
        np.array([[o[1] for o in row] for row in outcomes]),
        seed,
    )
    rows = []
    for d in sources:
        single = d.name.startswith("always:")
        metrics = compute_metrics(d, tasks, None if single else singles, None if single else resample)
        rows.append(
            RouterRow(name=d.name, kind=d.kind, source=d.source, metrics=metrics, recorded=d.recorded)
        )
        if metrics.tasks_missing:
            notes.append(
                f"{d.name}: {metrics.tasks_missing} of {len(tasks)} tasks have no decision "
                "(counted as unparseable)"
            )
    if split != "eval" and include_baselines:
        notes.append(
            f"split {split!r} overlaps the train split: tfidf baselines (and any router trained on train) "
            "are scored in-sample here"
        )
    return EvalReport(
        table=table_info,
        split=SplitInfo(
            name=split,
            eval_fraction=eval_fraction,
            split_seed=split_seed,
            n_tasks=len(tasks),
            n_train_tasks=len(train_tasks),
            oracle_distribution={k: round(v, 6) for k, v in oracle_distribution(tasks).items()},
            solvable_tasks=sum(not t.all_failed for t in tasks),
        ),
        seed=seed,
        single_models=singles,
        frontier=frontier_vertices(singles),
        rows=rows,
        notes=notes,
    )


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
    with publish_directory(out, owned=(REPORT_JSON, REPORT_MD, PLOT_PNG)) as staged:
        for name, data in files.items():
            (staged / name).write_bytes(data)
    return [out / name for name in files]
