"""The floor: the best random mix of single models at the user's objective, deployed task by task.

An objective is a budget (mean USD per task) or a quality target (a resolve rate, absolute like `0.78`
or below the best single model like `best-0.02`). The mix that meets it is a point of the cost frontier
(`router_oracle.frontier`: `best_mix_at_cost`, `cheapest_mix_at_resolved`, the one definition of the mix
the vs-mix gap reads too): at most two adjacent frontier models with the shares the objective fixes.
A learned router is worth routing with only where it beats that mix, so the mix is what a router falls
back to (`route.operating_point`), never the cheapest model alone.

A task's model is a deterministic function of its key (`floor_pick`: a hash of the instance id or serve's
task key), so a task keeps its model across turns, replicas and restarts, and the realised share is the
mix's share up to sampling noise. The hash is compared with the dearer model's share, so raising a
budget only ever moves a task to a dearer model: spend is monotone in the budget task by task.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from pydantic import Field

from router_oracle.frontier import ModelPoint, best_mix_at_cost, cheapest_mix_at_resolved
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.report_numbers import EPS, rounded

QUALITY_PATTERN = re.compile(r"^\s*(?:(best)(?:\s*-\s*(\d+(?:\.\d*)?|\.\d+))?|(\d+(?:\.\d*)?|\.\d+))\s*$")
"""`--quality`: a rate (`0.78`), `best` or `best-D` (D below the best single model's rate)."""

MAX_BELOW_BEST = 1.0
"""`best-D`: D is a fraction of resolve rate, at most 1."""


def parse_quality(text: str) -> tuple[float | None, float | None]:
    """(absolute rate, below best) of a `--quality` value, exactly one set; ValueError naming the form
    expected otherwise."""
    m = QUALITY_PATTERN.match(text)
    if m is None:
        raise ValueError(
            f"quality {text!r}: expected a resolve rate in (0, 1] (e.g. 0.78), best "
            "or best-D (e.g. best-0.02)"
        )
    if m.group(1):
        value = float(m.group(2) or 0.0)
        if value > MAX_BELOW_BEST:
            raise ValueError(f"quality {text!r}: best-D takes D in [0, 1] (a fraction of resolve rate)")
        return None, value
    value = float(m.group(3))
    if not 0 < value <= 1:
        raise ValueError(f"quality {text!r}: a resolve rate is in (0, 1] (e.g. 0.78 for 78%)")
    return value, None


class Objective(FrozenModel):
    """What the user asks a router for: a budget or a quality target (exactly one)."""

    budget: float | None = None
    """Mean cost per task to spend, USD (`--budget`)."""
    quality: str | None = None
    """Resolve-rate target as given (`--quality`): `0.78` or `best-0.02` (`parse_quality`)."""

    def describe(self) -> str:
        """The flag as the user gave it: `--budget 1.1` or `--quality best-0.02`."""
        return f"--budget {self.budget:g}" if self.budget is not None else f"--quality {self.quality}"

    def target_rate(self, points: Sequence[ModelPoint]) -> float:
        """A quality objective's resolve rate on `points` (`best-D`: the best model's rate minus D)."""
        assert self.quality is not None
        rate, below = parse_quality(self.quality)
        return rate if rate is not None else max(p.resolved for p in points) - (below or 0.0)


class FloorMix(FrozenModel):
    """The mix at an objective on a set of single models: what every task is assigned by (`floor_pick`)."""

    models: list[str]
    """One or two pool model ids, cheapest first."""
    shares: list[float] = Field(min_length=1, max_length=2)
    """Each model's share of tasks, in `models` order (sums to 1)."""
    cost: float
    """The mix's expected mean cost per task, USD, on the tasks its points were measured on."""
    resolved: float
    """The mix's expected resolved rate there."""
    note: str | None = None
    """Where the objective lies outside the frontier (a budget below the cheapest model, a quality no
    model reaches): what the floor does instead, in words; else None."""

    def describe(self) -> str:
        """`mix of a 22% / b 78% ($1.100/task, 77.4% resolved)` or `always a ($0.466/task, 62.0%
        resolved)`."""
        what = (
            f"always {self.models[0]}"
            if len(self.models) == 1
            else "mix of "
            + " / ".join(f"{m} {100 * s:.0f}%" for m, s in zip(self.models, self.shares, strict=True))
        )
        return f"{what} (${self.cost:.3f}/task, {100 * self.resolved:.1f}% resolved)"


def _cheapest(points: Sequence[ModelPoint]) -> ModelPoint:
    return min(points, key=lambda p: (p.cost, -p.resolved, p.model))


def _best(points: Sequence[ModelPoint]) -> ModelPoint:
    return max(points, key=lambda p: (p.resolved, -p.cost, p.model))


def _single(point: ModelPoint, note: str | None) -> FloorMix:
    return FloorMix(models=[point.model], shares=[1.0], cost=point.cost, resolved=point.resolved, note=note)


def floor_mix(points: Sequence[ModelPoint], objective: Objective) -> FloorMix:
    """The frontier mix of `points` at `objective`: at a budget the best mix costing at most it (below
    the cheapest model: the cheapest, saying so); at a quality the cheapest mix resolving at least it (no
    model reaching it: the best, saying so)."""
    if not points:
        raise ValueError("the floor needs at least one model's cost and resolve rate")
    if objective.budget is not None:
        cheapest = _cheapest(points)
        if objective.budget < cheapest.cost - EPS:
            note = (
                f"{objective.describe()} is below the cheapest model's cost ({cheapest.model}, "
                f"${cheapest.cost:.3f}/task): every task to it"
            )
            return _single(cheapest, note)
        mix = best_mix_at_cost(points, objective.budget)
    else:
        rate = objective.target_rate(points)
        mix = cheapest_mix_at_resolved(points, rate)
        if mix is None:
            best = _best(points)
            note = (
                f"{objective.describe()} ({100 * rate:.1f}%) is above the best model's rate ({best.model}, "
                f"{100 * best.resolved:.1f}%): every task to it"
            )
            return _single(best, note)
    assert mix is not None
    cost = {p.model: p.cost for p in points}
    models = sorted(mix.weights, key=lambda m: (cost[m], m))
    return FloorMix(
        models=models,
        shares=[rounded(mix.weights[m]) for m in models],
        cost=rounded(mix.cost),
        resolved=rounded(mix.resolved),
    )


def task_unit(key: str) -> float:
    """A task key's fixed point in [0, 1): the first 64 bits of sha256 of the key (UTF-8)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def floor_pick(mix: FloorMix, key: str) -> str:
    """The model the floor assigns the task `key` (the same model on every call, replica and restart)."""
    return pick_at(mix, task_unit(key))


def pick_at(mix: FloorMix, u: float) -> str:
    """The mix's model at the fixed point `u` in [0, 1): the dearer model when `u` is below its share,
    else the cheaper one."""
    if len(mix.models) == 1:
        return mix.models[0]
    return mix.models[1] if u < mix.shares[1] else mix.models[0]
