"""Build an oracle table from a pool, a task file and result sources — deterministically.

Same inputs -> byte-identical table: tasks sorted by id, `per_model` in pool order, runs in the
pool's run order, means via `math.fsum`, provenance paths as `data_files.display_path` gives them, and
the command line rebuilt canonically (and re-runnably) from the arguments.
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from router_oracle.data_files import display_path, is_bundled, leaderboard_path, tasks_path
from router_oracle.errors import OracleInputError
from router_oracle.merge import Cell, merge_sources
from router_oracle.pool_file import load_pool, pool_label
from router_oracle.run_labels import report_label, report_run, trajectories_run
from router_oracle.sources.harness_report import read_harness_report
from router_oracle.sources.leaderboard import read_leaderboard
from router_oracle.sources.long_table import read_long_table
from router_oracle.sources.rows import LoadedSource
from router_oracle.sources.trajectories import read_trajectories
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
from router_oracle.tasks_file import read_tasks
from router_oracle.tie_rule import pick_for_task, tie_costs

PathLike = str | os.PathLike[str]
BUNDLED = "bundled"
"""`--leaderboard bundled` (or `leaderboards=["bundled"]`) names the bundled leaderboard."""


def _leaderboard_file(spec: PathLike) -> Path:
    return leaderboard_path() if str(spec) == BUNDLED else Path(spec)


def canonical_command(
    pool_spec: str,
    *,
    leaderboards: Sequence[PathLike],
    harness_reports: Sequence[tuple[PathLike, str]],
    trajectories: Sequence[tuple[PathLike, str]],
    long_tables: Sequence[PathLike],
    tasks: PathLike | None,
    tie_cost: str,
    output: PathLike | None,
) -> str:
    """The `router-oracle build` command line these arguments amount to, re-runnable as written.

    Paths are written as `display_path` names them (so from the directory the build ran in, the same
    files are read); bundled files by the options that select them (`--leaderboard bundled`, no
    `--tasks`), never by their package-relative name. Every run is written out, inferred ones too.
    """
    parts = ["router-oracle", "build", "--pool", pool_spec]
    for lb in leaderboards:
        parts += ["--leaderboard", BUNDLED if str(lb) == BUNDLED or is_bundled(lb) else display_path(lb)]
    for path, run in harness_reports:
        parts += ["--harness-report", display_path(path), "--run", run]
    for path, run in trajectories:
        parts += ["--trajectories", display_path(path), "--run", run]
    for lt in long_tables:
        parts += ["--long-table", display_path(lt)]
    if tasks is not None and not is_bundled(tasks):
        parts += ["--tasks", display_path(tasks)]
    parts += ["--tie-cost", tie_cost]
    if output is not None:
        parts += ["-o", display_path(output)]
    return shlex.join(parts)


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


def build_table(
    pool: Pool | PathLike = "default",
    *,
    leaderboards: Sequence[PathLike] | None = None,
    harness_reports: Sequence[tuple[PathLike, str | None]] = (),
    trajectories: Sequence[tuple[PathLike, str | None]] = (),
    long_tables: Sequence[PathLike] = (),
    tasks: PathLike | None = None,
    tie_cost: Literal["measured", "price"] = "measured",
    output: PathLike | None = None,
    progress: bool = False,
) -> OracleTable:
    """Build (and, with `output`, atomically write) an oracle table.

    `pool`: a bundled pool name (`default`, `multi_run`), a pool TOML path, or a `Pool`.
    `leaderboards`: leaderboard JSON files (`"bundled"` = the bundled one); None means the bundled
    leaderboard when no other source is given, else none. `harness_reports` / `trajectories`:
    `(path, run)` pairs, `run` a run of the pool, or None to take the run the file says (see
    `router_oracle.run_labels`; a `run` the file contradicts is refused). `tasks`: task JSONL
    (default: bundled). The table passes `table_check.check_table` before it is written.
    Raises `OracleInputError` (or `TableError`) on any bad input; then nothing is written.
    """
    pool_obj = pool if isinstance(pool, Pool) else load_pool(pool)
    pool_spec = pool.name if isinstance(pool, Pool) else pool_label(pool)
    if leaderboards is None:
        leaderboards = [] if (harness_reports or trajectories or long_tables) else [BUNDLED]
    rule = OracleRule(tie_cost=tie_cost)
    pool_runs = {run for m in pool_obj.models for run in m.runs}
    for flag, pairs in (("--harness-report", harness_reports), ("--trajectories", trajectories)):
        for path, run in pairs:
            if run is not None and run not in pool_runs:
                raise OracleInputError(f"{path}: {flag} --run {run!r} is not a run of pool {pool_obj.name!r}")
    reports = [(p, report_run(p, r, pool_runs)) for p, r in harness_reports]
    if not (leaderboards or harness_reports or trajectories or long_tables):
        raise OracleInputError("no result sources given")
    if tie_cost == "price":
        tie_costs(pool_obj, rule, {})  # fail early when a price is missing
    task_rows, task_source = read_tasks(tasks if tasks is not None else tasks_path())
    loaded: list[LoadedSource] = [
        read_leaderboard(_leaderboard_file(lb), runs=pool_runs) for lb in leaderboards
    ]
    loaded += [read_harness_report(p, run=r) for p, r in reports]
    labels = [lab for lab in (report_label(p, pool_runs) for p, _ in reports) if lab is not None]
    trajs: list[tuple[PathLike, str]] = []
    for p, given in trajectories:
        source = read_trajectories(p, run=given or "", progress=progress)
        run = trajectories_run(p, given, source.model, labels)
        loaded.append(source if run == given else source.with_run(run))
        trajs.append((p, run))
    loaded += [read_long_table(p) for p in long_tables]
    task_ids = [t.instance_id for t in task_rows]
    merged = merge_sources(loaded, pool_obj, task_ids)
    records = [
        task_record(
            t, pool_obj, rule, {m.id: _outcome(m.runs, merged, t.instance_id) for m in pool_obj.models}
        )
        for t in task_rows
    ]
    command = canonical_command(
        pool_spec,
        leaderboards=leaderboards,
        harness_reports=reports,
        trajectories=trajs,
        long_tables=long_tables,
        tasks=tasks,
        tie_cost=tie_cost,
        output=output,
    )
    table = OracleTable(
        pool=pool_obj,
        rule=rule,
        sources=[task_source, *(s.source for s in loaded)],
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
