"""The headline: each router's gap to the random mix, averaged over evaluation pools, with an interval.

What is resampled: the tasks, and only they. Every pool is scored on the same tasks (all those of the
reference table), so one set of bootstrap indices (`metrics.task_resample` with the report's seed, the
same indices in every pool) redraws the tasks with replacement; on each redraw every router and every
pool's single models are re-measured on the same tasks (paired), each pool's mix frontier is rebuilt
from its single models, and the gaps are averaged over the pools. Not resampled: the pools (fixed by the
protocol), the folds and the fitted routers (nothing is refitted). The interval is therefore about
which tasks were measured; the spread over fold seeds (`sd`) shows training and fold noise, and the
spread over pools (`sd_over_pools`) how much the gap depends on the pool.

A router cheaper than every single model of a pool has no mix at its cost (`evaluate` leaves its gap
undefined). Here it is compared with the cheapest single model instead (the best mix at that model's
cost; `vs_mix.floored_gap`): it gets no credit for the saving, so its gap is if anything too low, and
every gap is defined on all tasks and on every resample. Where a router costs no less than the
cheapest model this is exactly `evaluate`'s gap. Dropping such pools, or such resamples, would change
what is averaged with the routers' own choices.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict

from router_oracle.table import TaskRecord
from router_train.evaluate.report import Evaluation
from router_train.scoring.bootstrap import percentile_interval
from router_train.scoring.decisions import Decisions
from router_train.scoring.metrics import per_task_outcomes, single_model_points, task_resample
from router_train.scoring.vs_mix import Gap, floored_gap, gap_in_points, gap_samples

_TOL = 1e-6
"""Gaps closer than this are equal (report values are rounded to 6 decimals)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _r(x: float) -> float:
    return round(x, 6) + 0.0


@dataclass
class PoolGaps:
    """One pool evaluation's gaps per router (fractions): on all tasks, per fold seed, per resample."""

    point: dict[str, float]
    """Router -> gap to the mix on all tasks, every fold seed's decisions pooled."""
    by_fold_seed: dict[str, list[float]]
    """Router -> the gap of each fold seed's decisions alone."""
    samples: dict[str, np.ndarray]
    """Router -> the gap on each bootstrap resample (the same resampled tasks in every pool)."""
    floored: list[str]
    """Routers cheaper than every single model on all tasks (compared with the cheapest model)."""

    def gap(self, name: str) -> Gap:
        """The router's gap in points, with its 95% interval over resampled tasks and per fold seed."""
        return gap_in_points(
            self.point[name], percentile_interval(self.samples[name]), list(self.by_fold_seed[name])
        )


def pool_gaps(
    tasks: Sequence[TaskRecord],
    pool: Sequence[str],
    routers: dict[str, tuple[Decisions, list[Decisions]]],
    seed: int,
) -> PoolGaps:
    """The floored gaps of each router (name -> (pooled decisions, decisions per fold seed)) on `tasks`,
    measured as `evaluate` measures them (`per_task_outcomes`, the single models' frontier, the
    bootstrap resamples of `task_resample` with `seed`)."""
    singles = single_model_points(tasks, pool)
    resample = task_resample(tasks, pool, seed)
    n = max(len(tasks), 1)

    def gap_of(d: Decisions) -> tuple[float, bool]:
        resolved, cost = per_task_outcomes(d, tasks)
        return floored_gap(sum(resolved) / n, sum(cost) / n, singles)

    out = PoolGaps(point={}, by_fold_seed={}, samples={}, floored=[])
    for name, (pooled, repeats) in routers.items():
        out.point[name], floored = gap_of(pooled)
        if floored:
            out.floored.append(name)
        out.by_fold_seed[name] = [gap_of(r)[0] for r in repeats]
        out.samples[name] = gap_samples(resample, *per_task_outcomes(pooled, tasks), floor_at_cheapest=True)
    return out


class AverageGap(_Frozen):
    """One router's gap to the mix, averaged over pool evaluations (each pool weighs the same)."""

    router: str
    """Row name."""
    n_pools: int
    """Pool evaluations averaged."""
    gap: Gap
    """Mean gap over the pools in points, the 95% bootstrap interval over tasks (module docstring), the
    mean per fold seed and its sd over fold seeds."""
    sd_over_pools: float | None
    """Sample standard deviation of the per-pool gaps, in points (None for fewer than 2 pools)."""
    resolved_rate: float
    """Mean over the pools of its resolved rate (fraction)."""
    mean_cost: float
    """Mean over the pools of its cost per task, USD."""
    held_out_pick_share: float
    """Mean over the pools of the share of its decisions on a held-out model."""
    one_model_pools: int
    """Pools on which it routed every task to the same model (a single model, not a router, there)."""


class GapDifference(_Frozen):
    """`router` minus `reference` in gap to the mix, averaged over the pools."""

    router: str
    """The router compared (the any-pool router)."""
    reference: str
    """What it is compared with (a fixed-pool router)."""
    n_pools: int
    """Pool evaluations averaged."""
    gap: Gap
    """Mean difference of the gaps in points (positive: `router` is further above the mix), its 95%
    paired bootstrap interval (both routers on the same resampled tasks), per fold seed and its sd."""
    pools_at_least: int
    """Pools where `router`'s gap is at least `reference`'s."""


def _average(
    values: list[float], samples: list[np.ndarray], by_seed: list[list[float]]
) -> tuple[Gap, float | None]:
    """Mean over pools, its bootstrap interval and its per-seed means (fractions in, points out), and the
    sd over pools."""
    ci = percentile_interval(np.vstack(samples).mean(axis=0))  # (pools, resamples) -> per resample
    seeds = len(by_seed[0]) if by_seed else 0
    per_seed: list[float | None] = [statistics.fmean(b[s] for b in by_seed) for s in range(seeds)]
    gap = gap_in_points(statistics.fmean(values), ci, per_seed)
    spread = round(100 * statistics.stdev(values), 4) + 0.0 if len(values) >= 2 else None
    return gap, spread


def average_gaps(
    pools: Sequence[PoolGaps],
    evaluations: Sequence[Evaluation],
    held_out_shares: Sequence[dict[str, float]],
    routers: Sequence[str],
) -> list[AverageGap]:
    """Each router's gap averaged over the pools (`evaluations[i]` holds pool i's metrics)."""
    if not pools:
        return []
    out = []
    for name in routers:
        gap, spread = _average(
            [p.point[name] for p in pools],
            [p.samples[name] for p in pools],
            [p.by_fold_seed[name] for p in pools],
        )
        metrics = [next(r.metrics for r in ev.routers if r.name == name) for ev in evaluations]
        out.append(
            AverageGap(
                router=name,
                n_pools=len(pools),
                gap=gap,
                sd_over_pools=spread,
                resolved_rate=_r(statistics.fmean(m.resolved_rate for m in metrics)),
                mean_cost=_r(statistics.fmean(m.mean_cost for m in metrics)),
                held_out_pick_share=_r(statistics.fmean(s[name] for s in held_out_shares)),
                one_model_pools=sum(sum(v > 0 for v in m.label_distribution.values()) == 1 for m in metrics),
            )
        )
    return out


def gap_differences(pools: Sequence[PoolGaps], router: str, references: Sequence[str]) -> list[GapDifference]:
    """`router` minus each reference, averaged over the pools (paired: the same resamples)."""
    if not pools:
        return []
    out = []
    for ref in references:
        diffs = [p.point[router] - p.point[ref] for p in pools]
        by_seed = [
            [a - b for a, b in zip(p.by_fold_seed[router], p.by_fold_seed[ref], strict=True)] for p in pools
        ]
        gap, _ = _average(diffs, [p.samples[router] - p.samples[ref] for p in pools], by_seed)
        out.append(
            GapDifference(
                router=router,
                reference=ref,
                n_pools=len(pools),
                gap=gap,
                pools_at_least=sum(d >= -_TOL for d in diffs),
            )
        )
    return out
