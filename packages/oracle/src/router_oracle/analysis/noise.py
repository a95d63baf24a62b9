"""How much of an oracle's headroom rollout noise alone would produce.

An agent run is a draw: rerun a model on a task and it may fail where it passed. The oracle takes, per
task, the best of the pool's recorded rollouts, so it also collects every success that was luck, which
no router can win: a router sees the task, not the dice. This module estimates those points exactly
(no sampling) from measured run-to-run disagreement (`run_agreement`). The method, as `METHOD` states
for `router-oracle stats --help` and the README:

1. Disagreement per pool model, from same-harness re-runs when the table has any to draw on (its own
   multi-run models; for tables built from the bundled leaderboard, also the bundled twice-run
   models): its own runs when it has two or more in the table; else the bundled twice-run model that
   includes its run; else the measured model with the closest resolve rate. A table with no
   same-harness re-runs uses the same model under another harness in the bundled data
   (`harness_agreement`): its own cross-harness pairs, else the cross-harness model with the closest
   resolve rate. Tables with neither get no estimate.
2. Each model's per-task success probability p takes three values, fitted to its resolve rate r on the
   tasks and its disagreement d (the chance two independent runs differ): never (p = 0, share 1-r-d),
   coin flip (p = 1/2, share 2d), always (p = 1, share r-d). When d exceeds r (or 1-r) there are no
   always (never) tasks and the coin flip's p moves off 1/2 to fit; d is capped at 2r(1-r), the
   disagreement of independent runs with the same p on every task.
3. Noise-only pool: the models share each task's difficulty (one uniform draw u per task; each model's
   p is nondecreasing in u), so no model is better than another on particular tasks: any headroom
   this pool shows is noise. A model's label on a task is the mean of as many independent rollouts as
   it has runs in the table.
4. Noise points = 100 x (expected resolve rate of the oracle on those labels - resolve rate of routing
   each task to the model with the highest p). Exact: the integral over u is a sum over the intervals
   between the class boundaries, and the oracle's expectation there a product of binomial CDFs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from router_oracle.analysis.harness_agreement import CROSS_HARNESS, CrossHarnessModel, measure_cross_harness
from router_oracle.analysis.run_agreement import (
    MeasuredModel,
    MeasuredSource,
    built_from_bundled_leaderboard,
    measure_bundled,
    measure_models,
)
from router_oracle.frontier import ModelPoint, best_mix_at_cost
from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.report_numbers import rounded
from router_oracle.table import OracleTable, TaskRecord

METHOD = """\
Rollout noise: the oracle takes each task's best recorded rollout, so it also collects successes that
were luck, which no router can win. `stats` measures run-to-run disagreement (the share of tasks where
two runs of one model differ) for every model with two or more runs: the table's own (multi_run pool)
and, for tables built from the bundled leaderboard, the five models it ran twice (twice_run pool).
Each pool model takes the disagreement of its own runs, else of the twice-run model sharing its run,
else of the measured model with the closest resolve rate. A second measure, for tables built from the
bundled data: each pool run against the same base model under another harness there (OpenHands vs
mini-SWE-agent, Claude Code or Codex CLI), on the tasks both ran. A table with no same-harness re-runs
to draw on (e.g. the reference pool) uses it: each pool model its own cross-harness pairs, else the
cross-harness model with the closest resolve rate. From its resolve rate r and disagreement d, each
model's per-task success probability is fitted as never (share 1-r-d), a coin flip (2d) or always (r-d).
In a noise-only pool the models share each task's difficulty, so none is better than another on
particular tasks; its oracle gains, over routing each task to the model most likely to solve it, only
the lucky rollouts. Those points, computed exactly, are the noise estimate. The leaderboard's pairs
also differ in scaffold version (cross-harness pairs in harness), so the estimate leaves out the part
of a pair's disagreement a level shift between its runs explains (|rate A - rate B|); the figure in
brackets counts all of it.
Assumed: rollouts independent given the task; the three-class shape (exact for an oracle over two
single-run copies of one model, an extrapolation beyond); a single-run model as noisy as its closest
measured one; a harness change, once its level shift is out, as noisy as a re-run. Tables of other
data with no model run twice, nor under another harness in the bundled data, get no estimate: add a
second run of a model to measure it.
"""
"""What `router-oracle stats --help` and the README say about the noise estimate."""

Match = Literal["own runs", "same run", "other harness", "closest resolve rate"]

Measure = Literal["same_harness", "cross_harness"]
"""Which measure a noise estimate uses: same-harness re-runs, or the same model under two harnesses."""

Measured = MeasuredModel | CrossHarnessModel
"""A measured model of either measure."""

UNMEASURED = (
    "no model of this table has two runs, it was not built from the bundled leaderboard and none of its "
    "runs has a run of the same model under another harness in the bundled data, so rollout noise is "
    "not measured (add a second run of a model to measure it)"
)
"""What `NoiseEstimate.unavailable` says when no model was measured twice."""


@dataclass(frozen=True, slots=True)
class SuccessClasses:
    """A model's per-task success probability as three classes of tasks (shares sum to 1)."""

    never: float
    """Share of tasks with success probability 0."""
    coin_flip: float
    """Share of tasks with success probability `coin_flip_p`."""
    coin_flip_p: float
    """Success probability on coin-flip tasks (1/2 unless the resolve rate forbids it)."""

    @property
    def always(self) -> float:
        """Share of tasks with success probability 1."""
        return max(0.0, 1.0 - self.never - self.coin_flip)


def fit_classes(resolve_rate: float, disagreement: float) -> SuccessClasses:
    """Three classes with mean `resolve_rate` on which two independent runs disagree with `disagreement`.

    `disagreement` is capped at `2 r (1 - r)`: two runs with the same p on every task disagree that
    often, and no three-class model disagrees more.
    """
    r = min(max(resolve_rate, 0.0), 1.0)
    d = min(max(disagreement, 0.0), 2 * r * (1 - r))
    if d <= min(r, 1 - r):
        return SuccessClasses(never=max(0.0, 1 - r - d), coin_flip=2 * d, coin_flip_p=0.5)
    if d > r:  # few successes: every success is a coin flip, p below 1/2
        p = max(r, 1 - d / (2 * r))  # >= r because d <= 2r(1-r); max() keeps rounding from breaking it
        return SuccessClasses(never=max(0.0, 1 - r / p), coin_flip=min(1.0, r / p), coin_flip_p=p)
    q = max(1 - r, 1 - d / (2 * (1 - r)))  # few failures: every failure is a coin flip, failing with q < 1/2
    return SuccessClasses(never=0.0, coin_flip=min(1.0, (1 - r) / q), coin_flip_p=1 - q)


def _label_cdf(p: float, runs: int, v: Fraction) -> float:
    """P(mean of `runs` Bernoulli(p) rollouts <= v)."""
    k_max = math.floor(v * runs)
    return math.fsum(math.comb(runs, k) * p**k * (1 - p) ** (runs - k) for k in range(min(k_max, runs) + 1))


def noise_only_pool(classes: Sequence[SuccessClasses], runs: Sequence[int]) -> tuple[float, float]:
    """(expected oracle resolve rate on the labels, resolve rate of the best-p model per task) of the
    noise-only pool: models with these classes sharing each task's difficulty, labels the mean of
    `runs[i]` rollouts. Exact."""
    if len(classes) != len(runs) or not classes or min(runs) < 1:
        raise ValueError("one run count (>= 1) per model, at least one model")
    ends = [min(1.0, c.never + c.coin_flip) for c in classes]
    cuts = sorted({0.0, 1.0, *(c.never for c in classes), *ends})
    values = sorted({Fraction(k, n) for n in runs for k in range(n + 1)})
    oracle: list[float] = []
    best: list[float] = []
    for lo, hi in itertools.pairwise(cuts):
        if hi <= lo:
            continue
        u = (lo + hi) / 2  # every model is in one class on the whole interval
        ps = [0.0 if u < c.never else c.coin_flip_p if u < c.never + c.coin_flip else 1.0 for c in classes]
        below = 0.0
        expected_max = []
        for v in values:
            cdf = math.prod(_label_cdf(p, n, v) for p, n in zip(ps, runs, strict=True))
            expected_max.append(float(v) * (cdf - below))
            below = cdf
        oracle.append((hi - lo) * math.fsum(expected_max))
        best.append((hi - lo) * max(ps))
    return math.fsum(oracle), math.fsum(best)


class PoolModelNoise(FrozenModel):
    """Where one pool model's disagreement comes from, and the values the estimate used."""

    id: str
    """Pool model id."""
    resolve_rate: float
    """Its resolve rate on the estimated tasks."""
    runs: int
    """Rollouts behind each of its labels (its runs in the table)."""
    measured_as: str
    """Id of the measured model whose disagreement it takes."""
    measured_source: MeasuredSource | Literal["cross_harness"]
    """`table` (the table's own runs), `bundled` (the bundled leaderboard's twice-run pool) or
    `cross_harness` (the same model under two harnesses, `harness_agreement`)."""
    match: Match
    """`own runs`; `same run` (a twice-run model that includes its run); `other harness` (its own
    cross-harness pairs); `closest resolve rate`."""
    noise_disagreement: float
    """Disagreement used for the estimate: the measured model's, level shift left out, capped at 2r(1-r)."""
    disagreement: float
    """Disagreement used for the upper figure: the measured model's whole disagreement, capped."""


class NoiseFigures(FrozenModel):
    """The noise-only pool under one reading of the disagreement."""

    noise_points: float
    """Points of resolve rate its oracle collects from lucky rollouts (x 100)."""
    oracle_resolve_rate: float
    """Expected resolve rate of its oracle on rollout labels."""
    best_resolve_rate: float
    """Resolve rate of routing each task to its model most likely to solve it (no luck)."""


class NoiseEstimate(FrozenModel):
    """The oracle's headroom above the mix on some tasks, and the part rollout noise alone would give."""

    tasks: int
    """Tasks estimated on."""
    oracle_resolve_rate: float
    """The table's oracle on these tasks: mean of its pick's resolve rate."""
    oracle_cost: float
    """Its mean cost per task, USD."""
    mix_resolve_rate: float | None
    """The best random mix of single models costing at most `oracle_cost` (None: every model costs more)."""
    headroom_points: float | None
    """100 x (oracle - mix) resolve rate: the oracle's headroom above the mix."""
    unavailable: str | None
    """Why there is no noise estimate (no model measured twice); None when there is one."""
    measured: list[MeasuredModel]
    """Every model measured on two or more runs under one harness that the estimate could draw on."""
    cross_harness: list[CrossHarnessModel]
    """The pool models measured against the same model under other harnesses (`harness_agreement`)."""
    measure: Measure | None
    """The measure the estimate uses: `same_harness` (`measured`) whenever there is one, else
    `cross_harness`; None without an estimate."""
    models: list[PoolModelNoise]
    """Per pool model, in pool order (empty when unavailable)."""
    noise: NoiseFigures | None
    """The estimate (level shifts between runs left out of the disagreement)."""
    upper: NoiseFigures | None
    """The same with each measured model's whole disagreement read as noise."""


def _rate(tasks: Sequence[TaskRecord], model: str) -> float:
    return math.fsum(t.per_model[model].resolve_rate for t in tasks) / len(tasks)


def _select(table: OracleTable, task_ids: Collection[str] | None) -> list[TaskRecord]:
    if task_ids is None:
        return list(table.tasks)
    wanted = set(task_ids)
    tasks = [t for t in table.tasks if t.instance_id in wanted]
    if len(tasks) != len(wanted):
        missing = sorted(wanted - {t.instance_id for t in tasks})
        raise OracleInputError(f"task {missing[0]!r} is not in the table ({len(missing)} such tasks)")
    return tasks


def default_measured(table: OracleTable) -> list[Measured]:
    """The table's own multi-run models, then (tables built from the bundled leaderboard only) the
    bundled twice-run models not already among them, then the pool models' cross-harness pairs in the
    bundled data (`harness_agreement`), all measured on the table's tasks."""
    own = measure_models(table, "table")
    cross = measure_cross_harness(table)
    if not built_from_bundled_leaderboard(table):
        return [*own, *cross]
    seen = [set(m.runs) for m in own]
    bundled = measure_bundled([t.instance_id for t in table.tasks])
    return [*own, *(m for m in bundled if set(m.runs) not in seen), *cross]


def _match_cross(
    model: str, rate: float, measured: Sequence[CrossHarnessModel]
) -> tuple[CrossHarnessModel, Match]:
    for m in measured:
        if m.id == model:
            return m, "other harness"
    # Closest resolve rate; ties keep pool order.
    return min(measured, key=lambda m: abs(m.resolve_rate - rate)), "closest resolve rate"


def _match(runs: list[str], rate: float, measured: Sequence[MeasuredModel]) -> tuple[MeasuredModel, Match]:
    for m in measured:
        if len(runs) >= 2 and set(m.runs) == set(runs):
            return m, "own runs"
    for m in measured:
        if set(m.runs) & set(runs):
            return m, "same run"
    # Closest resolve rate; ties keep list order (own models first).
    return min(measured, key=lambda m: abs(m.resolve_rate - rate)), "closest resolve rate"


def _figures(rates: Sequence[float], ds: Sequence[float], runs: Sequence[int]) -> NoiseFigures:
    oracle, best = noise_only_pool([fit_classes(r, d) for r, d in zip(rates, ds, strict=True)], runs)
    return NoiseFigures(
        noise_points=rounded(100 * (oracle - best)),
        oracle_resolve_rate=rounded(oracle),
        best_resolve_rate=rounded(best),
    )


def _cap(d: float, r: float) -> float:
    return rounded(min(d, 2 * r * (1 - r)))


def estimate_noise(
    table: OracleTable,
    task_ids: Collection[str] | None = None,
    *,
    measured: Sequence[Measured] | None = None,
) -> NoiseEstimate:
    """The oracle's headroom above the mix on `task_ids` (default: every task) and the part rollout noise
    alone would produce (see `METHOD`). `measured`: the measured models to draw on (default:
    `default_measured(table)`, measured on all the table's tasks); same-harness ones are used whenever
    there are any, else the cross-harness ones. Deterministic: no sampling."""
    tasks = _select(table, task_ids)
    if not tasks:
        raise OracleInputError("no tasks to estimate the oracle's headroom on")
    n = len(tasks)
    ids = table.pool.ids
    oracle_rate = math.fsum(t.per_model[t.oracle].resolve_rate for t in tasks) / n
    oracle_cost = math.fsum(t.per_model[t.oracle].cost for t in tasks) / n
    points = [
        ModelPoint(model=m, cost=math.fsum(t.per_model[m].cost for t in tasks) / n, resolved=_rate(tasks, m))
        for m in ids
    ]
    mix = best_mix_at_cost(points, oracle_cost)
    every = default_measured(table) if measured is None else list(measured)
    same = [m for m in every if isinstance(m, MeasuredModel)]
    cross = [m for m in every if isinstance(m, CrossHarnessModel)]
    measure: Measure | None = "same_harness" if same else "cross_harness" if cross else None
    models: list[PoolModelNoise] = []
    for pm, p in zip(table.pool.models, points, strict=True):
        if measure is None:
            break
        rate = _rate(table.tasks, pm.id)
        ref: Measured
        ref, how = _match(pm.runs, rate, same) if same else _match_cross(pm.id, rate, cross)
        models.append(
            PoolModelNoise(
                id=pm.id,
                resolve_rate=rounded(p.resolved),
                runs=len(pm.runs),
                measured_as=ref.id,
                measured_source=ref.source,
                match=how,
                noise_disagreement=_cap(ref.noise_disagreement, p.resolved),
                disagreement=_cap(ref.disagreement, p.resolved),
            )
        )
    rates = [p.resolved for p in points]
    runs = [m.runs for m in models]
    return NoiseEstimate(
        tasks=n,
        oracle_resolve_rate=rounded(oracle_rate),
        oracle_cost=rounded(oracle_cost),
        mix_resolve_rate=None if mix is None else rounded(mix.resolved),
        headroom_points=None if mix is None else rounded(100 * (oracle_rate - mix.resolved)),
        unavailable=None if measure else UNMEASURED,
        measured=same,
        cross_harness=cross,
        measure=measure,
        models=models,
        noise=_figures(rates, [m.noise_disagreement for m in models], runs) if models else None,
        upper=_figures(rates, [m.disagreement for m in models], runs) if models else None,
    )


def with_rollouts(est: NoiseEstimate, rollouts: int) -> tuple[NoiseFigures, NoiseFigures]:
    """(estimate, upper) for the same pool if every model's labels averaged `rollouts` rollouts: how much
    cleaner the oracle's labels would get from collecting more runs per model."""
    if est.noise is None or rollouts < 1:
        raise ValueError("needs an estimate (a measured disagreement) and rollouts >= 1")
    rates = [m.resolve_rate for m in est.models]
    runs = [rollouts] * len(est.models)
    return (
        _figures(rates, [m.noise_disagreement for m in est.models], runs),
        _figures(rates, [m.disagreement for m in est.models], runs),
    )


def _points(x: float) -> str:
    return f"{x:.1f}"


def noise_range(est: NoiseEstimate) -> str:
    """`5.7 (7.1 counting all run-to-run disagreement)` (`... all disagreement between harnesses` for the
    cross-harness measure), or one number when both readings agree."""
    if est.noise is None or est.upper is None:
        return "n/a"
    low, high = _points(est.noise.noise_points), _points(est.upper.noise_points)
    what = "disagreement between harnesses" if est.measure == CROSS_HARNESS else "run-to-run disagreement"
    return low if low == high else f"{low} ({high} counting all {what})"


def headroom_sentence(est: NoiseEstimate, *, show_mix: bool = False) -> str:
    """One line for reports, e.g. `oracle +11.3 points above the mix, of which about 5.7 (...) expected
    from rollout noise alone`; `show_mix` adds the mix's resolve rate."""
    if est.headroom_points is None or est.mix_resolve_rate is None:
        lead = "oracle cheaper than every single model (no mix to compare with)"
    else:
        mix = f" ({100 * est.mix_resolve_rate:.1f}% at the oracle's cost)" if show_mix else ""
        lead = f"oracle {est.headroom_points:+.1f} points above the mix{mix}"
    if est.noise is None:
        return f"{lead}; rollout noise not measured (no model run twice)"
    joint = ", of which about" if est.headroom_points is not None else "; about"
    return f"{lead}{joint} {noise_range(est)} expected from rollout noise alone"
