"""Build an oracle table from a pool, a task file and result sources — deterministically.

Same inputs -> byte-identical table: tasks sorted by id, `per_model` in pool order, runs in the
pool's run order, means via `math.fsum`, provenance paths as `data_files.display_path` gives them, and
the command line rebuilt canonically (and re-runnably) from the arguments.
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Literal, Protocol

from router_oracle.data_files import display_path, is_bundled, tasks_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.merge import Cell, merge_sources
from router_oracle.pool_file import load_pool, pool_label
from router_oracle.sources.registry import BUNDLED, SOURCE_KINDS, ReadContext, SourceSpec
from router_oracle.sources.rows import LoadedSource
from router_oracle.table import (
    ModelOutcome,
    OracleRule,
    OracleTable,
    Pool,
    RunOutcome,
    TaskRecord,
    write_table,
)
from router_oracle.table_check import check_table
from router_oracle.tasks_file import is_table_tasks, read_tasks
from router_oracle.tie_rule import pick_for_task, tie_costs

PathLike = str | os.PathLike[str]


def canonical_command(
    pool_spec: str,
    *,
    sources: Sequence[SourceSpec],
    tasks: PathLike | None,
    tie_cost: str,
    output: PathLike | None,
    drop_missing: bool = False,
) -> str:
    """The `router-oracle build` command line these arguments amount to, re-runnable as written.

    Paths are written as `display_path` names them (so from the directory the build ran in, the same
    files are read); bundled files by the options that select them (`--leaderboard bundled`, no
    `--tasks`), never by their package-relative name. Sources in `SOURCE_KINDS` order, each kind's in the
    order given; every run of a one-run source is written out, inferred ones too.
    """
    parts = ["router-oracle", "build", "--pool", pool_spec]
    for kind in SOURCE_KINDS:
        for spec in (s for s in sources if s.kind == kind.kind):
            parts += [kind.flag, BUNDLED if kind.is_bundled(spec.path) else display_path(spec.path)]
            if kind.takes_run:
                parts += ["--run", spec.run or ""]
    if tasks is not None and not is_bundled(tasks):
        parts += ["--tasks", display_path(tasks)]
    parts += ["--tie-cost", tie_cost]
    if drop_missing:
        parts += ["--drop-missing"]
    if output is not None:
        parts += ["-o", display_path(output)]
    return shlex.join(parts)


def read_sources(
    sources: Sequence[SourceSpec], pool_runs: Collection[str], *, progress: bool = False
) -> list[tuple[SourceSpec, LoadedSource]]:
    """Read every source, kind by kind in `SOURCE_KINDS` order, each with the run it was assigned
    (a one-run source's `--run`, or the run its file says: `router_oracle.run_labels`)."""
    ctx = ReadContext(pool_runs=pool_runs, progress=progress)
    out = []
    for kind in SOURCE_KINDS:
        for spec in (s for s in sources if s.kind == kind.kind):
            loaded, run = kind.read(kind.path(spec.path), spec.run, ctx)
            licensed = loaded.source.model_copy(update={"license": kind.license_of(spec.path)})
            out.append((SourceSpec(spec.kind, spec.path, run), replace(loaded, source=licensed)))
    return out


def model_outcome(outcomes: Sequence[RunOutcome]) -> ModelOutcome:
    """A model's outcome on one task from its rollouts there: the resolved share and the mean cost.

    The one aggregation of runs: tables built from sources and tables derived from a candidates table
    (`router_oracle.derive`) both call it."""
    return ModelOutcome(
        resolve_rate=sum(o.resolved for o in outcomes) / len(outcomes),
        cost=math.fsum(o.cost for o in outcomes) / len(outcomes),
        runs=list(outcomes),
    )


def _outcome(runs: Sequence[str], merged: dict[str, dict[str, Cell]], task_id: str) -> ModelOutcome:
    return model_outcome(
        [
            RunOutcome(run=run, resolved=merged[run][task_id].resolved, cost=merged[run][task_id].cost)
            for run in runs
        ]
    )


class TaskFields(Protocol):
    """What a table row copies from a task (a task file row or a candidates table's task)."""

    @property
    def instance_id(self) -> str: ...
    @property
    def repo(self) -> str: ...
    @property
    def difficulty(self) -> str | None: ...
    @property
    def problem_statement(self) -> str: ...


def task_record(
    task: TaskFields, pool: Pool, rule: OracleRule, per_model: dict[str, ModelOutcome]
) -> TaskRecord:
    """One table row: the task as the router sees it, the pool's outcomes and the rule's pick."""
    pick = pick_for_task(pool, rule, per_model)
    return TaskRecord(
        instance_id=task.instance_id,
        repo=task.repo,
        difficulty=task.difficulty,
        problem_statement=task.problem_statement,
        per_model=per_model,
        oracle=pick.oracle,
        best=pick.best,
        all_failed=pick.all_failed,
    )


def bundled_sources_for(pool: Pool) -> list[SourceSpec]:
    """The bundled sources that hold the pool's runs (what a build reads when given no source)."""
    runs = {run for m in pool.models for run in m.runs}
    out = []
    for kind in SOURCE_KINDS:
        if (
            kind.bundled is not None
            and kind.entries is not None
            and runs & {e.run for e in kind.entries(kind.bundled())}
        ):
            out.append(SourceSpec(kind.kind, BUNDLED))
    return out


def build_table(
    pool: Pool | PathLike = "default",
    *,
    sources: Sequence[SourceSpec] = (),
    tasks: PathLike | None = None,
    tie_cost: Literal["measured", "price"] = "measured",
    output: PathLike | None = None,
    progress: bool = False,
    drop_missing: bool = False,
) -> OracleTable:
    """Build (and, with `output`, atomically write) an oracle table.

    `pool`: a bundled pool name (`default`, `bash-only`, ...), a pool TOML path, or a `Pool`.
    `sources`: the result files (`SourceSpec`s of the kinds in `router_oracle.sources.registry`); none
    means the bundled sources that hold the pool's runs. A one-run source's `run` is a run of the pool, or
    None to take the run the file says (see `router_oracle.run_labels`; a `run` the file contradicts is
    refused). `tasks`: task JSONL (default: bundled). The table passes `table_check.check_table` before
    it is written. `drop_missing`: leave out the tasks where a pool run has no result (the OpenHands
    Index publishes a few `null`s) instead of refusing them. Raises `OracleInputError` (or `TableError`)
    on any bad input; then nothing is written.
    """
    pool_obj = pool if isinstance(pool, Pool) else load_pool(pool)
    pool_spec = pool.name if isinstance(pool, Pool) else pool_label(pool)
    rule = OracleRule(tie_cost=tie_cost)
    pool_runs = {run for m in pool_obj.models for run in m.runs}
    if not sources:
        sources = bundled_sources_for(pool_obj)
        if not sources:
            raise OracleInputError(
                f"pool {pool_obj.name!r}: no bundled source holds any of its runs "
                f"({', '.join(sorted(pool_runs))}); "
                f"give its results with a source flag ({', '.join(k.flag for k in SOURCE_KINDS)})"
            )
    for spec in sources:
        if spec.run is not None and spec.run not in pool_runs:
            raise OracleInputError(
                f"{spec.path}: {spec.source_kind.flag} --run {spec.run!r} "
                f"is not a run of pool {pool_obj.name!r}"
            )
    if tie_cost == "price":
        tie_costs(pool_obj, rule, {})  # fail early when a price is missing
    task_rows, task_source = read_tasks(tasks if tasks is not None else tasks_path())
    read = read_sources(sources, pool_runs, progress=progress)
    loaded = [source for _, source in read]
    task_ids = [t.instance_id for t in task_rows]
    subset = tasks is not None and is_table_tasks(tasks)
    merged = merge_sources(loaded, pool_obj, task_ids, drop_missing=drop_missing, other_tasks=subset)
    kept = set(next(iter(merged.values()))) if merged else set()
    records = [
        task_record(
            t, pool_obj, rule, {m.id: _outcome(m.runs, merged, t.instance_id) for m in pool_obj.models}
        )
        for t in task_rows
        if t.instance_id in kept
    ]
    command = canonical_command(
        pool_spec,
        sources=[spec for spec, _ in read],
        tasks=tasks,
        tie_cost=tie_cost,
        output=output,
        drop_missing=drop_missing,
    )
    table = OracleTable(
        pool=pool_obj,
        rule=rule,
        sources=[task_source, *(source.source for source in loaded)],
        command=command,
        tasks=records,
    )
    check_table(table, origin=pool_spec)
    if output is not None:
        write_table(table, output)
    return table


def build_default_table() -> OracleTable:
    """The table of the default pool on the bundled data (what the environment ships)."""
    return build_table("default")
