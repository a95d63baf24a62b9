"""Merging the long rows of several sources into one (resolved, cost) cell per pool run and task.

Explicit and strict: each field of each (run, task) cell must come from exactly one row. Two rows
giving the same field is a duplicate (an error naming both); a leaderboard row gives both fields, a
harness report only `resolved`, trajectories only `cost`. Every pool run needs both fields for every
task, else an error names the model, the run, the missing field and the tasks. Rows for runs no pool
model lists are ignored (a leaderboard holds many runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from router_oracle.infra.errors import OracleInputError
from router_oracle.sources.rows import LoadedSource, LongRow
from router_oracle.table import Pool


@dataclass(frozen=True, slots=True)
class Cell:
    """One run's merged result on one task."""

    resolved: bool
    """Did the run resolve the task."""
    cost: float
    """Cost of the run on the task, USD."""


T = TypeVar("T")


def _claim(store: dict[tuple[str, str], tuple[T, str]], field: str, value: T, row: LongRow) -> None:
    """Record `row`'s `field` for its (run, task) cell; a second row giving it is a duplicate."""
    key = (row.run, row.task_id)
    if key in store:
        raise OracleInputError(
            f"{row.where}: duplicate row: {field} for {row.task_id!r} in run {row.run!r} "
            f"already given by {store[key][1]}"
        )
    store[key] = (value, row.where)


def _examples(ids: Sequence[str], n: int = 3) -> str:
    more = f" and {len(ids) - n} more" if len(ids) > n else ""
    return ", ".join(ids[:n]) + more


def merge_sources(
    sources: Sequence[LoadedSource],
    pool: Pool,
    task_ids: Sequence[str],
    *,
    drop_missing: bool = False,
    other_tasks: bool = False,
) -> dict[str, dict[str, Cell]]:
    """`{run: {task_id: Cell}}` for every run of the pool and every task (with `drop_missing`: every task
    where each pool run has both fields; a run with no row at all is still refused). `other_tasks`: rows
    of tasks outside `task_ids` are ignored (the tasks are a chosen subset) instead of refused."""
    owner = {run: m.id for m in pool.models for run in m.runs}
    known = set(task_ids)
    resolved: dict[tuple[str, str], tuple[bool, str]] = {}
    cost: dict[tuple[str, str], tuple[float, str]] = {}
    seen_in: dict[str, list[str]] = {run: [] for run in owner}
    for src in sources:
        for row in src.rows:
            if row.run not in owner:
                continue
            if row.model is not None and row.model != owner[row.run]:
                raise OracleInputError(
                    f"{row.where}: model {row.model!r} does not own run {row.run!r} "
                    f"(pool {pool.name!r} lists it under {owner[row.run]!r})"
                )
            if row.task_id not in known:
                if other_tasks:
                    continue
                raise OracleInputError(f"{row.where}: unknown task id {row.task_id!r} (not in the task file)")
            if not seen_in[row.run] or seen_in[row.run][-1] != src.name:
                seen_in[row.run].append(src.name)
            if row.resolved is not None:
                _claim(resolved, "resolved", row.resolved, row)
            if row.cost is not None:
                _claim(cost, "cost", row.cost, row)
    names = ", ".join(s.name for s in sources) or "none"
    if drop_missing:
        runs = list(owner)
        task_ids = [t for t in task_ids if all((r, t) in resolved and (r, t) in cost for r in runs)]
        if not task_ids:
            raise OracleInputError(f"pool {pool.name!r}: no task has a result from every pool run")
    merged: dict[str, dict[str, Cell]] = {}
    for model in pool.models:
        for run in model.runs:
            if not seen_in[run]:
                raise OracleInputError(
                    f"pool {pool.name!r}: model {model.id!r} names run {run!r} that no source has "
                    f"(sources: {names})"
                )
            for field, store in (("resolved", resolved), ("cost", cost)):
                missing = [t for t in task_ids if (run, t) not in store]
                if missing:
                    raise OracleInputError(
                        f"model {model.id!r} run {run!r}: no {field} for {len(missing)} of {len(task_ids)} "
                        f"tasks ({_examples(missing)}); sources with this run: {', '.join(seen_in[run])} "
                        "(`--drop-missing` leaves such tasks out)"
                    )
            merged[run] = {t: Cell(resolved[(run, t)][0], cost[(run, t)][0]) for t in task_ids}
    return merged
