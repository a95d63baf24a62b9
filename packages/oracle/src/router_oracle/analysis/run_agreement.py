"""How often two runs of the same model agree, task by task: the measured size of rollout noise.

A model with two or more runs in a table (e.g. the `multi_run` pool) is measured on its own runs; the
bundled pool `twice_run` lists the models the bundled leaderboard ran twice, measured the same way.
Each pair of runs gives the share of tasks where exactly one of them resolved the task (the
disagreement), how many tasks each resolved alone, and the "oracle of the two runs" (tasks either
resolved) against the better run. Part of a disagreement can be a level shift between the runs (the
pairs of the leaderboard also differ in scaffold version): `|rate_a - rate_b|` of it is explained by
one run simply resolving more, so `noise_disagreement` leaves it out.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import Literal

from router_oracle.build import build_table
from router_oracle.data_files import leaderboard_path
from router_oracle.infra.file_hash import sha256_file
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.report_numbers import rounded
from router_oracle.table import OracleTable

TWICE_RUN_POOL = "twice_run"
"""The bundled pool of models with two runs on the bundled leaderboard."""

MeasuredSource = Literal["table", "bundled"]


class RunPair(FrozenModel):
    """Two runs of one model compared on the same tasks."""

    run_a: str
    """First run id (pool order)."""
    run_b: str
    """Second run id."""
    resolved_a: float
    """Share of the tasks run A resolved."""
    resolved_b: float
    """Share of the tasks run B resolved."""
    a_only: int
    """Tasks run A resolved and run B did not."""
    b_only: int
    """Tasks run B resolved and run A did not."""
    disagreement: float
    """Share of the tasks exactly one of the two runs resolved: `(a_only + b_only) / tasks`."""
    either: float
    """Share of the tasks at least one run resolved: the oracle of the two runs."""


class MeasuredModel(FrozenModel):
    """A model with two or more runs on the same tasks, and how much its runs disagree."""

    id: str
    """Model id (in its pool)."""
    name: str
    """Display name."""
    source: MeasuredSource
    """`table`: runs of the table's own pool; `bundled`: the bundled leaderboard's `twice_run` pool."""
    runs: list[str]
    """Its run ids, in pool order."""
    tasks: int
    """Tasks it was measured on."""
    resolve_rate: float
    """Mean over its runs of the share of tasks resolved."""
    pairs: list[RunPair]
    """Every pair of its runs (one pair for two runs)."""
    disagreement: float
    """Mean over pairs of the share of tasks where the two runs disagree."""
    level_shift: float
    """Mean over pairs of `|resolved_a - resolved_b|`: the part of the disagreement a mere difference in
    level between the runs accounts for."""
    noise_disagreement: float
    """`disagreement - level_shift` (for two runs: `2 * min(a_only, b_only) / tasks`): the disagreement
    left once a level shift is taken out, read as rollout noise."""


def compare_runs(run_a: str, run_b: str, a: Sequence[bool], b: Sequence[bool]) -> RunPair:
    """Compare two runs' resolved flags on the same tasks (same order)."""
    if len(a) != len(b) or not a:
        raise ValueError(f"runs {run_a!r} and {run_b!r} need the same, non-empty list of tasks")
    n = len(a)
    a_only = sum(x and not y for x, y in zip(a, b, strict=True))
    b_only = sum(y and not x for x, y in zip(a, b, strict=True))
    return RunPair(
        run_a=run_a,
        run_b=run_b,
        resolved_a=rounded(sum(a) / n),
        resolved_b=rounded(sum(b) / n),
        a_only=a_only,
        b_only=b_only,
        disagreement=rounded((a_only + b_only) / n),
        either=rounded(sum(x or y for x, y in zip(a, b, strict=True)) / n),
    )


def measure_models(
    table: OracleTable, source: MeasuredSource, task_ids: Sequence[str] | None = None
) -> list[MeasuredModel]:
    """Every model of `table` with two or more runs, measured on `task_ids` (default: all its tasks)."""
    tasks = table.tasks if task_ids is None else [table.task(i) for i in task_ids]
    measured = []
    for m in table.pool.models:
        if len(m.runs) < 2 or not tasks:
            continue
        flags = {run: [t.per_model[m.id].runs[k].resolved for t in tasks] for k, run in enumerate(m.runs)}
        pairs = [compare_runs(ra, rb, flags[ra], flags[rb]) for ra, rb in itertools.combinations(m.runs, 2)]
        n = len(tasks)
        disagreement = math.fsum(p.a_only + p.b_only for p in pairs) / (n * len(pairs))
        shift = math.fsum(abs(p.a_only - p.b_only) for p in pairs) / (n * len(pairs))
        measured.append(
            MeasuredModel(
                id=m.id,
                name=m.name,
                source=source,
                runs=list(m.runs),
                tasks=n,
                resolve_rate=rounded(math.fsum(sum(f) for f in flags.values()) / (n * len(m.runs))),
                pairs=pairs,
                disagreement=rounded(disagreement),
                level_shift=rounded(shift),
                noise_disagreement=rounded(disagreement - shift),
            )
        )
    return measured


@functools.cache
def _bundled_leaderboard_sha() -> str:
    return sha256_file(leaderboard_path())


def built_from_bundled_leaderboard(table: OracleTable) -> bool:
    """True when one of the table's sources is the bundled leaderboard (by content, not by name)."""
    return any(s.kind == "leaderboard" and s.sha256 == _bundled_leaderboard_sha() for s in table.sources)


@functools.cache
def twice_run_table() -> OracleTable:
    """The bundled `twice_run` pool built on the bundled data (cached: it is read once per process)."""
    return build_table(TWICE_RUN_POOL)


def measure_bundled(task_ids: Sequence[str]) -> list[MeasuredModel]:
    """The bundled twice-run models measured on those of `task_ids` the bundled data has."""
    ref = twice_run_table()
    known = {t.instance_id for t in ref.tasks}
    return measure_models(ref, "bundled", [i for i in task_ids if i in known])
