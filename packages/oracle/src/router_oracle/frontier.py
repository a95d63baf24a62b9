"""The cost-quality frontier of random mixes of single models.

A "mix" picks model i with probability p_i on every task, ignoring the task. Its expected point is
the convex combination sum p_i (cost_i, resolved_i), so the best mix at a cost budget lies on the upper
concave hull of the single-model points. A router is only worth its training if it sits above that
hull: otherwise flipping a biased coin between single models does as well for the same money.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from router_oracle.infra.report_numbers import EPS


class ModelPoint(BaseModel):
    """One single model (always-this-model router) in (mean cost per task, resolved rate) space."""

    model_config = ConfigDict(frozen=True)

    model: str
    """Pool model id."""
    cost: float
    """Mean cost per task in USD on the evaluated tasks."""
    resolved: float
    """Resolved rate on the evaluated tasks (mean of per-task resolve rates)."""


class Mix(BaseModel):
    """A random mix of at most two single models, and the point it reaches."""

    model_config = ConfigDict(frozen=True)

    weights: dict[str, float]
    """Model id -> probability of routing every task to it (sums to 1)."""
    cost: float
    """Expected mean cost per task of the mix, USD."""
    resolved: float
    """Expected resolved rate of the mix."""


def _pair(a: ModelPoint, b: ModelPoint, wb: float) -> Mix:
    wb = min(max(wb, 0.0), 1.0)
    if wb <= EPS:
        return Mix(weights={a.model: 1.0}, cost=a.cost, resolved=a.resolved)
    if wb >= 1 - EPS:
        return Mix(weights={b.model: 1.0}, cost=b.cost, resolved=b.resolved)
    weights = {a.model: 1.0 - wb, b.model: wb}
    return Mix(
        weights={k: weights[k] for k in sorted(weights)},
        cost=(1 - wb) * a.cost + wb * b.cost,
        resolved=(1 - wb) * a.resolved + wb * b.resolved,
    )


def _better(new: Mix, old: Mix | None, *, key: str) -> bool:
    """Deterministic choice between equally good mixes: fewer models, then smaller ids."""
    if old is None:
        return True
    nv, ov = (new.resolved, old.resolved) if key == "resolved" else (-new.cost, -old.cost)
    if nv > ov + EPS:
        return True
    if nv < ov - EPS:
        return False
    return (len(new.weights), sorted(new.weights)) < (len(old.weights), sorted(old.weights))


def best_mix_at_cost(points: Sequence[ModelPoint], cost: float) -> Mix | None:
    """The mix with the highest resolved rate whose cost is at most `cost`; None when every model costs more.

    A linear program with two constraints (probabilities sum to 1, cost bound) has an optimum with at most
    two non-zero weights, so single models and pairs cover it.
    """
    best: Mix | None = None
    for a in points:
        if a.cost <= cost + EPS:
            cand = Mix(weights={a.model: 1.0}, cost=a.cost, resolved=a.resolved)
            if _better(cand, best, key="resolved"):
                best = cand
    for a in points:
        for b in points:
            if a.cost < cost < b.cost and b.cost - a.cost > EPS:
                cand = _pair(a, b, (cost - a.cost) / (b.cost - a.cost))
                if _better(cand, best, key="resolved"):
                    best = cand
    return best


def cheapest_mix_at_resolved(points: Sequence[ModelPoint], resolved: float) -> Mix | None:
    """The cheapest mix whose resolved rate is at least `resolved`; None when no model reaches it."""
    best: Mix | None = None
    for a in points:
        if a.resolved >= resolved - EPS:
            cand = Mix(weights={a.model: 1.0}, cost=a.cost, resolved=a.resolved)
            if _better(cand, best, key="cost"):
                best = cand
    for a in points:
        for b in points:
            if a.resolved < resolved < b.resolved and b.resolved - a.resolved > EPS:
                cand = _pair(a, b, (resolved - a.resolved) / (b.resolved - a.resolved))
                if _better(cand, best, key="cost"):
                    best = cand
    return best


def frontier_vertices(points: Sequence[ModelPoint]) -> list[ModelPoint]:
    """The corners of the mix frontier, cheapest first: the upper hull up to the best single model.

    Past its last vertex the frontier is flat (spending more buys nothing), which plots draw themselves.
    """
    if not points:
        return []
    # Leftmost first; among equal cost the higher resolved rate, then the id, for a stable order.
    ordered = sorted(points, key=lambda p: (p.cost, -p.resolved, p.model))
    hull: list[ModelPoint] = []
    for p in ordered:
        if hull and abs(p.cost - hull[-1].cost) <= EPS:
            continue  # same cost, lower or equal rate: never on the upper hull
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            cross = (a.cost - o.cost) * (p.resolved - o.resolved) - (a.resolved - o.resolved) * (
                p.cost - o.cost
            )
            if cross >= -EPS:  # `a` lies on or below the segment o-p
                hull.pop()
            else:
                break
        hull.append(p)
    top = max(range(len(hull)), key=lambda i: (hull[i].resolved, -i))
    return hull[: top + 1]
