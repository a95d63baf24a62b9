"""A refitted checkpoint's default operating point, chosen on the traffic it was refitted to (issue 53).

The prior's safe point was chosen on its train tasks; the refit's is re-derived from the logged outcomes,
never copied: the refitted router's native route is kept (`router`) only where its doubly robust estimate
of the resolved rate on the logged tasks beats the fallback's (always the pool's cheapest model by the
refit's costs, `cheapest`) by the kind's default margin, with the paired bootstrap interval of the
difference above zero; else the fallback. Where a policy picks a model the log holds too few outcomes of
(`estimators.under_explored`) there is no estimate, and the fallback is kept, saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_train.offpolicy.estimators import (
    LEVEL,
    Interval,
    Logged,
    always,
    columns,
    estimate_policy,
    under_explored,
)
from router_train.scoring.default_point import SafePoint, TrafficEstimate, TrafficPoint
from router_train.scoring.safe_point import Margins


@dataclass(frozen=True)
class TrafficSettings:
    """How the estimates are drawn (`feedback`'s `--bootstrap`, `--seed`, `--min-tried`)."""

    bootstrap: int
    """Bootstrap resamples of the logged tasks."""
    seed: int
    """Their seed."""
    min_tried: int
    """A policy picking a model with fewer logged outcomes than this has no estimate."""


def _contributions(picks: np.ndarray, logged: Logged) -> np.ndarray:
    """Per logged task, the DR term of the policy routing it to `picks` (the log's per-model means as the
    reward model, as `estimate_policy`): their mean is its DR estimate."""
    rate, _ = logged.reward_models()
    w = (picks == logged.served) / logged.propensity
    return rate[picks] + w * (logged.resolved - rate[logged.served])


def paired_difference(a: np.ndarray, b: np.ndarray, logged: Logged, settings: TrafficSettings) -> Interval:
    """DR estimate of policy `a`'s resolved rate minus policy `b`'s, its interval from bootstrap resamples
    of the logged tasks shared by both (the difference's own spread, not two intervals side by side)."""
    d = _contributions(a, logged) - _contributions(b, logged)
    n = len(d)
    resamples = np.random.default_rng(settings.seed).integers(0, n, size=(settings.bootstrap, n))
    tail = (1 - LEVEL) / 2 * 100
    lo, hi = np.percentile(d[resamples].mean(axis=1), [tail, 100 - tail])
    return Interval(value=float(d.mean()), low=float(lo), high=float(hi))


def _dr(picks: np.ndarray, name: str, logged: Logged, settings: TrafficSettings) -> TrafficEstimate:
    est = estimate_policy(name, picks, logged, bootstrap=settings.bootstrap, seed=settings.seed, min_tried=0)
    assert est.resolved is not None
    return TrafficEstimate.model_validate(est.resolved.dr.model_dump())


def _points(iv: TrafficEstimate) -> str:
    return f"{100 * iv.value:+.1f} points [{100 * iv.low:+.1f}, {100 * iv.high:+.1f}]"


def _rate(iv: TrafficEstimate) -> str:
    return f"{iv.value:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def traffic_point(
    logged: Logged,
    router_picks: np.ndarray,
    fallback: int,
    margins: Margins,
    settings: TrafficSettings,
    log: str,
    prior: SafePoint | None,
) -> SafePoint:
    """The refitted checkpoint's default point on `logged` (columns of `logged.models`): its native route
    (`router_picks`) or always `fallback`, with the estimates it was chosen by (`SafePoint.traffic`). The
    `prior`'s dial points and dial margin are kept (the traffic estimates no dial point)."""
    n = len(logged.served)
    name = logged.models[fallback]
    base = always(fallback, n)
    warning = under_explored(router_picks, logged, settings.min_tried) or under_explored(
        base, logged, settings.min_tried
    )
    common = {"log": log, "tasks": n, "fallback": name, "margin": margins.default}
    common |= {"bootstrap": settings.bootstrap, "seed": settings.seed}
    dials = [c for c in prior.candidates if c.dial is not None] if prior is not None else []
    rule = {"inner_folds": 0, "margin": margins.default, "candidates": dials}
    rule["dial_margin"] = prior.dial_margin if prior is not None else margins.dial
    fallback_point = {"choice": "cheapest", "model": name, **rule}
    if warning is not None or n == 0:
        why = warning or "no logged outcomes"
        reason = f"always {name}: no estimate of the refitted router on the {n} logged outcomes: {why}"
        traffic = TrafficPoint.model_validate(
            {**common, "router": None, "fallback_resolved": None, "difference": None, "reason": reason}
        )
        return SafePoint.model_validate({**fallback_point, "traffic": traffic})
    router = _dr(router_picks, "router", logged, settings)
    floor = _dr(base, f"always:{name}", logged, settings)
    paired = paired_difference(router_picks, base, logged, settings)
    diff = TrafficEstimate.model_validate(paired.model_dump())
    kept = diff.value > margins.default and diff.low > 0
    numbers = (
        f"on {n} logged outcomes (DR, 95% bootstrap) the refitted router resolves {_rate(router)}, always "
        f"{name} {_rate(floor)}: {_points(diff)}"
    )
    if kept:
        reason = f"native route: {numbers}, above the margin of {100 * margins.default:.1f} points"
    elif diff.value > margins.default:
        reason = (
            f"always {name}: {numbers}, above the margin of {100 * margins.default:.1f} points but its "
            "interval not above zero"
        )
    else:
        reason = f"always {name}: {numbers}, not above the margin of {100 * margins.default:.1f} points"
    traffic = TrafficPoint.model_validate(
        {**common, "router": router, "fallback_resolved": floor, "difference": diff, "reason": reason}
    )
    chosen = {"choice": "router", **rule} if kept else fallback_point
    return SafePoint.model_validate({**chosen, "traffic": traffic})


def point_on_traffic(
    logged: Logged,
    native: Sequence[str],
    cheapest: str,
    margins: Margins,
    settings: TrafficSettings,
    log: str,
    prior: SafePoint | None,
) -> SafePoint:
    """`traffic_point` for a refit's `native` route (model ids, one per logged task) against always
    `cheapest`: the log's pool widened by the models only the refit picks (no outcome of them: no
    estimate)."""
    pool = sorted({*logged.models, *native, cheapest})
    served = columns(pool, [logged.models[j] for j in logged.served], log)
    wide = Logged(pool, served, logged.propensity, logged.resolved, logged.cost)
    picks = columns(pool, list(native), log)
    return traffic_point(wide, picks, pool.index(cheapest), margins, settings, log, prior)
