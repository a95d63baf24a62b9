"""Summary statistics of an oracle table (what `router-oracle stats` prints).

Runs the table check every reader runs (`table_check`: each stored pick against the rule, the pool's
models in every task, ...), so a hand-edited or stale table is caught rather than summarised.
"""

from __future__ import annotations

import json
import math

from pydantic import BaseModel, ConfigDict

from router_oracle.table import OracleTable
from router_oracle.table_check import check_table


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelStats(_Frozen):
    """One pool model, as if the router always chose it."""

    id: str
    """Pool model id."""
    name: str
    """Display name."""
    resolve_rate: float
    """Mean over tasks of the model's per-task resolve rate."""
    resolved: float
    """Expected number of tasks resolved (sum of per-task resolve rates)."""
    total_cost: float
    """Sum over tasks of the model's mean cost, USD."""
    oracle_count: int
    """Tasks on which this model is the oracle."""


class OracleStats(_Frozen):
    """The oracle router: always the table's `oracle` model."""

    resolve_rate: float
    """Mean over tasks of the oracle model's resolve rate."""
    resolved: float
    """Expected number of tasks resolved."""
    total_cost: float
    """Sum over tasks of the oracle model's mean cost, USD."""


class TableStats(_Frozen):
    """Everything `router-oracle stats` reports; its JSON is stable (fixed key order)."""

    pool: str
    """Pool name."""
    tie_cost: str
    """The rule's tie cost option (`measured` or `price`)."""
    tasks: int
    """Number of tasks."""
    models: list[ModelStats]
    """Per model, in pool order."""
    oracle: OracleStats
    """The oracle's numbers."""
    ties: int
    """Picks where more than one model shared the best resolve rate (cost decided)."""
    id_tiebreaks: int
    """Picks where resolve rate and cost both tied (the smallest model id decided)."""
    all_failed: int
    """Tasks no model resolved in any run (the cheapest model is the oracle)."""


def compute_stats(table: OracleTable, *, origin: str = "<table>") -> TableStats:
    """Stats of `table`; raises `TableError` when the table fails `table_check.check_table` (the check
    every table reader runs: a stored pick that disagrees with the rule, a missing model, ...)."""
    id_tiebreaks = sum(p.id_tiebreak for p in check_table(table, origin=origin))
    n = len(table.tasks)
    models = []
    for m in table.pool.models:
        resolved = math.fsum(t.per_model[m.id].resolve_rate for t in table.tasks)
        models.append(
            ModelStats(
                id=m.id,
                name=m.name,
                resolve_rate=resolved / n if n else 0.0,
                resolved=resolved,
                total_cost=math.fsum(t.per_model[m.id].cost for t in table.tasks),
                oracle_count=sum(t.oracle == m.id for t in table.tasks),
            )
        )
    o_resolved = math.fsum(t.per_model[t.oracle].resolve_rate for t in table.tasks)
    return TableStats(
        pool=table.pool.name,
        tie_cost=table.rule.tie_cost,
        tasks=n,
        models=models,
        oracle=OracleStats(
            resolve_rate=o_resolved / n if n else 0.0,
            resolved=o_resolved,
            total_cost=math.fsum(t.per_model[t.oracle].cost for t in table.tasks),
        ),
        ties=sum(len(t.best) > 1 for t in table.tasks),
        id_tiebreaks=id_tiebreaks,
        all_failed=sum(t.all_failed for t in table.tasks),
    )


def stats_json(stats: TableStats) -> str:
    """Stable JSON text of the stats."""
    return json.dumps(stats.model_dump(mode="json"), indent=1) + "\n"


def _pct(x: float, n: int) -> str:
    return f"{100 * x / n:5.1f}%" if n else "  n/a"


def format_stats(stats: TableStats) -> str:
    """A readable table for humans."""
    n = stats.tasks
    width = max([len("model"), len("oracle"), *(len(m.id) for m in stats.models)])
    lines = [
        f"pool {stats.pool}: {len(stats.models)} models, {n} tasks, ties broken by {stats.tie_cost} cost",
        "",
        f"{'model':<{width}}  {'resolved':>14}  {'total cost $':>12}  {'oracle picks':>13}",
    ]
    for m in stats.models:
        lines.append(
            f"{m.id:<{width}}  {m.resolved:7.1f} {_pct(m.resolved, n)}  {m.total_cost:12.2f}  "
            f"{m.oracle_count:6d} {_pct(m.oracle_count, n)}"
        )
    o = stats.oracle
    lines.append(f"{'oracle':<{width}}  {o.resolved:7.1f} {_pct(o.resolved, n)}  {o.total_cost:12.2f}")
    lines += [
        "",
        f"ties on resolve rate (cheapest chosen): {stats.ties} of {n} picks ({_pct(stats.ties, n).strip()})",
        f"  of which also tied on cost (smallest id chosen): {stats.id_tiebreaks}",
        f"all-fail tasks (cheapest chosen): {stats.all_failed} ({_pct(stats.all_failed, n).strip()})",
    ]
    return "\n".join(lines) + "\n"
