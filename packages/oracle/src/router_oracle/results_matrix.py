"""The full results matrix: every run's per-task outcome (resolved, cost), tasks x runs, as arrays.

The candidates table (`router_oracle.candidates`) holds every usable leaderboard run's outcome on every
task; pools read a few of its columns through `derive`. Models of task difficulty (the IRT router in
`router_train.irt`) read all of them at once: `ResultsMatrix` is that view, with task ids, run ids and the
candidate model each run belongs to. Built from a loaded table or a file (`bundled` or a path, e.g. an
ingested leaderboard's candidates table); every check raises one `ResultsMatrixError` line naming the file.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.candidates import (
    BUNDLED_CANDIDATES,
    OPENHANDS_CANDIDATES,
    CandidatesError,
    CandidatesTable,
    load_candidates,
)
from router_oracle.infra.errors import OracleInputError
from router_oracle.table import Pool


class ResultsMatrixError(OracleInputError):
    """A results matrix that cannot be used (duplicate ids, NaN or negative cost, missing task): the message
    names the file."""


@dataclass(frozen=True)
class ResultsMatrix:
    """Every run's outcome on every task (rows: tasks, sorted by id; columns: runs, in the table's order)."""

    task_ids: tuple[str, ...]
    """Row labels: SWE-bench instance ids."""
    run_ids: tuple[str, ...]
    """Column labels: leaderboard run ids."""
    run_models: tuple[str, ...]
    """The candidate model id of each run (a model may have several runs)."""
    resolved: np.ndarray
    """(tasks, runs) bool: did the run resolve the task."""
    cost: np.ndarray
    """(tasks, runs) float: the run's cost on the task, USD."""
    origin: str = "<in memory>"
    """Where it was read from (named in errors)."""

    def __post_init__(self) -> None:
        check_matrix(self)

    def rows(self, task_ids: Sequence[str]) -> np.ndarray:
        """Row indices of `task_ids`, in that order; an unknown id is a `ResultsMatrixError`."""
        index = {t: i for i, t in enumerate(self.task_ids)}
        missing = [t for t in task_ids if t not in index]
        if missing:
            raise ResultsMatrixError(
                f"{self.origin}: task {missing[0]!r} is not in the results matrix ({len(missing)} missing)"
            )
        return np.asarray([index[t] for t in task_ids], dtype=np.int64)

    def columns(self, run_ids: Sequence[str]) -> np.ndarray:
        """Column indices of `run_ids`, in that order; an unknown run is a `ResultsMatrixError`."""
        index = {r: j for j, r in enumerate(self.run_ids)}
        missing = [r for r in run_ids if r not in index]
        if missing:
            raise ResultsMatrixError(f"{self.origin}: run {missing[0]!r} is not in the results matrix")
        return np.asarray([index[r] for r in run_ids], dtype=np.int64)


def _dups(ids: Sequence[str]) -> list[str]:
    counts: dict[str, int] = {}
    for i in ids:
        counts[i] = counts.get(i, 0) + 1
    return sorted(i for i, c in counts.items() if c > 1)


def check_matrix(m: ResultsMatrix) -> None:
    """Refuse a malformed matrix with one line naming its origin (shapes, ids, costs)."""
    where = m.origin
    n, r = len(m.task_ids), len(m.run_ids)
    if n == 0 or r == 0:
        raise ResultsMatrixError(f"{where}: the results matrix is empty ({n} tasks x {r} runs)")
    if len(m.run_models) != r:
        raise ResultsMatrixError(f"{where}: {len(m.run_models)} run models for {r} runs")
    for name, ids in (("task", m.task_ids), ("run", m.run_ids)):
        dup = _dups(ids)
        if dup:
            raise ResultsMatrixError(f"{where}: duplicate {name} id {dup[0]!r}")
    for name, arr in (("resolved", m.resolved), ("cost", m.cost)):
        if arr.shape != (n, r):
            raise ResultsMatrixError(f"{where}: {name} has shape {arr.shape}, expected ({n}, {r})")
    if m.resolved.dtype != np.bool_:
        raise ResultsMatrixError(f"{where}: resolved must be booleans, got {m.resolved.dtype}")
    bad = ~np.isfinite(m.cost) | (m.cost < 0)
    if bad.any():
        i, j = (int(x) for x in np.argwhere(bad)[0])
        raise ResultsMatrixError(
            f"{where}: cost of run {m.run_ids[j]!r} on task {m.task_ids[i]!r} is {float(m.cost[i, j])!r} "
            f"(must be finite and >= 0; {int(bad.sum())} bad cells)"
        )


def matrix_of(table: CandidatesTable, *, origin: str = "<in memory>") -> ResultsMatrix:
    """The results matrix of a loaded candidates table (every run, every task)."""
    run_models = tuple(m.id for m in table.models for _ in m.runs)
    n_runs = len(table.runs)
    short = [t.instance_id for t in table.tasks if len(t.resolved) != n_runs or len(t.cost) != n_runs]
    if short:
        raise ResultsMatrixError(f"{origin}: task {short[0]!r} lacks outcomes of some of the {n_runs} runs")
    return ResultsMatrix(
        task_ids=tuple(t.instance_id for t in table.tasks),
        run_ids=tuple(table.runs),
        run_models=run_models,
        resolved=np.asarray([t.resolved for t in table.tasks], dtype=bool).reshape(-1, n_runs),
        cost=np.asarray([t.cost for t in table.tasks], dtype=np.float64).reshape(-1, n_runs),
        origin=origin,
    )


def load_results_matrix(spec: str | os.PathLike[str] = BUNDLED_CANDIDATES) -> ResultsMatrix:
    """The results matrix of a candidates file (`bundled` or a path); every error names the file."""
    try:
        table = load_candidates(spec)
    except CandidatesError as exc:
        raise ResultsMatrixError(str(exc)) from exc
    return matrix_of(table, origin=str(spec))


BUNDLED_RESULTS: tuple[str, ...] = (BUNDLED_CANDIDATES, OPENHANDS_CANDIDATES)
"""The bundled candidates tables a pool's results matrix is taken from, in the order they are tried: the
bash-only leaderboard's (mini-SWE-agent runs), then the OpenHands Index's (every other harness)."""


@functools.cache
def _bundled_matrix(spec: str) -> ResultsMatrix:
    return load_results_matrix(spec)


def bundled_results_for(pool: Pool) -> tuple[str, ResultsMatrix]:
    """The first bundled candidates table (`BUNDLED_RESULTS`) holding every run of `pool`, by name, and its
    results matrix (read once per process). None holds them all: one `ResultsMatrixError` line."""
    runs = [r for m in pool.models for r in m.runs]
    for spec in BUNDLED_RESULTS:
        matrix = _bundled_matrix(spec)
        if set(runs) <= set(matrix.run_ids):
            return spec, matrix
    raise ResultsMatrixError(
        f"pool {pool.name!r}: no bundled candidates table ({', '.join(BUNDLED_RESULTS)}) holds all its runs "
        f"({', '.join(runs)}); the IRT fit needs every pool run in one results matrix"
    )
