"""The floor learned on the team's own traffic: per-model posteriors over resolve rate and cost that start
at the table's values, a cost scale shared by the pool's models, pacing on the realised spend, and the
frontier mix at the objective recomputed as outcomes arrive (issue 53 item 3). Serve-independent: `serve`
and `replay` drive the same object, so replay's learning arm deploys exactly what serve would.

- Resolve rate: per model a Beta posterior, prior mean the table's rate with `strength` pseudo-tasks
  (`prior_strength` measures it from the shipped twins' cross-harness disagreement), updated with each
  served task's resolved value (a fraction for a multi-run table).
- Cost: a harness moves every model's cost by a similar factor, so one scale `s` is shared by the pool
  (the ratio of the costs seen to the table costs of the models served, with `scale_strength` pseudo-tasks
  at scale 1), and each model's cost shrinks toward `s x` its table cost with `cost_strength` pseudo-tasks:
  a dear model rarely served still moves with the scale.
- Pacing (budgets): the mix is computed at `budget x (1 + (budget x t - spent) / (budget x pacing))`,
  clipped to [0.5, 1.5] x budget: an overspend is paid back over about `pacing` tasks, an underspend spent.
- Exploration: Thompson sampling. Each assignment draws every model's rate from its posterior and its
  cost around its posterior mean (log-normal, `COST_LOG_SD` shrinking with its own outcomes; a generator
  seeded by the task key and the step), computes the mix on the draws, and picks by the task's fixed
  point (`scoring.floor.task_unit`); the propensity logged is the mean share of the picked model over
  `draws` such draws (the probability the policy gave it). As posteriors tighten, draws agree: exploration
  fades where it is not needed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.frontier import ModelPoint
from router_oracle.infra.frozen_model import FrozenModel
from router_train.scoring.floor import FloorMix, Objective, floor_mix, pick_at, task_unit

DEFAULT_STRENGTH = 284.0
"""Resolve-rate prior strength (pseudo-tasks): `prior_strength` on the three shipped twin pairs, both
harnesses' tables (`benchmarks/bench_floor_replay.py` prints 284.2): the twins' rates differ by 2.6 points
rms, about what 500-task sampling noise alone gives, so the table's rate is a strong prior."""
SCALE_STRENGTH = 5.0
"""Pseudo-tasks at cost scale 1: a harness moves costs by up to 4x (the twins), so the table's scale is
a weak prior."""
COST_STRENGTH = 20.0
"""Pseudo-tasks at `scale x` a model's table cost: the twins' per-model cost factors differ from their
pool's shared one by about 0.4 in log, so a model's own costs take over after a few dozen tasks."""
COST_LOG_SD = 0.4
"""Prior spread of a model's cost around the shared scale, in log: the twins' per-model cost factors differ
from their pool's shared one by about this. Thompson draws sample it (shrinking as the model's own costs
arrive), so a model the table prices off the frontier is still tried where this traffic may price it on
(the Claude twins: the cost ranking flips between harnesses)."""
PACING = 50.0
"""Tasks over which an over- or underspend is paid back."""
DRAWS = 16
"""Posterior draws the logged propensity is averaged over."""
PACE_CLIP = (0.5, 1.5)
"""The paced budget stays within these multiples of the budget."""


class PosteriorSummary(FrozenModel):
    """What the learner believed when it assigned a task (recorded with the decision)."""

    models: list[str]
    """Pool model ids, in the learner's order."""
    resolved: list[float]
    """Posterior mean resolve rate per model."""
    cost: list[float]
    """Posterior mean cost per task per model, USD."""
    scale: float
    """The shared cost scale (1: the table's costs)."""
    observed: list[int]
    """Outcomes seen per model."""
    paced_budget: float | None
    """The budget the mix was computed at after pacing (None: a quality objective)."""
    mix: FloorMix
    """The posterior-mean mix at the paced objective."""


@dataclass(frozen=True)
class Assignment:
    """One task's model, the probability the policy gave it, and the posterior it used."""

    model: str
    """The pool model assigned."""
    propensity: float
    """Mean share of `model` in the sampled mixes (in (0, 1])."""
    posterior: PosteriorSummary
    """The learner's state when it assigned."""


def prior_strength(pairs: Sequence[tuple[Sequence[ModelPoint], Sequence[ModelPoint]]]) -> float:
    """Beta prior strength from cross-harness disagreement: per model in both tables of a pair, the
    squared difference of its two resolve rates; strength = mean r(1-r) / mean squared difference - 1
    (a Beta's variance is r(1-r)/(strength+1)). Sampling noise is counted as disagreement: conservative."""
    diffs, spreads = [], []
    for a, b in pairs:
        other = {p.model: p for p in b}
        for p in a:
            if p.model in other:
                q = other[p.model]
                diffs.append((p.resolved - q.resolved) ** 2)
                mean = (p.resolved + q.resolved) / 2
                spreads.append(mean * (1 - mean))
    if not diffs or float(np.mean(diffs)) <= 0:
        raise ValueError("prior_strength needs models measured under two harnesses with some disagreement")
    return float(np.mean(spreads) / np.mean(diffs) - 1)


class FloorLearner:
    """`observe(model, resolved, cost)` after each served task; `assign(key)` for each new task."""

    def __init__(
        self,
        prior: Sequence[ModelPoint],
        objective: Objective,
        *,
        strength: float = DEFAULT_STRENGTH,
        scale_strength: float = SCALE_STRENGTH,
        cost_strength: float = COST_STRENGTH,
        pacing: float = PACING,
        thompson: bool = True,
        draws: int = DRAWS,
    ) -> None:
        if not prior:
            raise ValueError("a floor learner needs at least one model")
        self.models = [p.model for p in prior]
        self.objective = objective
        self.table_rate = np.asarray([p.resolved for p in prior], dtype=float)
        self.table_cost = np.asarray([p.cost for p in prior], dtype=float)
        self.strength, self.scale_strength, self.cost_strength = strength, scale_strength, cost_strength
        self.pacing, self.thompson, self.draws = pacing, thompson, draws
        self.n = np.zeros(len(prior))
        self.successes = np.zeros(len(prior))
        self.cost_sum = np.zeros(len(prior))
        self.tasks = 0
        self.spent = 0.0

    def observe(self, model: str, resolved: float, cost: float) -> None:
        """One served task's outcome (resolved, a fraction in [0, 1]) and cost (USD)."""
        j = self.models.index(model)
        self.n[j] += 1
        self.successes[j] += resolved
        self.cost_sum[j] += cost
        self.tasks += 1
        self.spent += cost

    def scale(self) -> float:
        """The shared cost scale: costs seen over the table costs of the models that incurred them."""
        mean_table = float(self.table_cost.mean())
        seen = float(self.cost_sum.sum()) + self.scale_strength * mean_table
        expected = float((self.n * self.table_cost).sum()) + self.scale_strength * mean_table
        return seen / expected if expected > 0 else 1.0

    def cost_means(self) -> np.ndarray:
        """Posterior mean cost per model: its own costs, shrunk toward the scaled table cost."""
        anchor = self.scale() * self.table_cost
        out: np.ndarray = (self.cost_sum + self.cost_strength * anchor) / (self.n + self.cost_strength)
        return out

    def rate_params(self) -> tuple[np.ndarray, np.ndarray]:
        """Beta posterior (a, b) per model."""
        a = self.strength * self.table_rate + self.successes
        b = self.strength * (1 - self.table_rate) + (self.n - self.successes)
        return np.maximum(a, 1e-9), np.maximum(b, 1e-9)

    def paced(self) -> Objective:
        """The objective the mix is computed at: a budget paced on the realised spend; a quality as is."""
        budget = self.objective.budget
        if budget is None:
            return self.objective
        owed = (budget * self.tasks - self.spent) / (budget * self.pacing)
        return Objective(budget=budget * float(np.clip(1 + owed, *PACE_CLIP)))

    def _mix(self, rates: np.ndarray, costs: np.ndarray, objective: Objective) -> FloorMix:
        points = [
            ModelPoint(model=m, cost=float(c), resolved=float(r))
            for m, r, c in zip(self.models, rates, costs, strict=True)
        ]
        return floor_mix(points, objective)

    def assign(self, key: str) -> Assignment:
        """The model for the task `key` under the current posteriors (Thompson draw seeded by the key and
        the number of outcomes seen), its propensity and the posterior summary."""
        a, b = self.rate_params()
        costs = self.cost_means()
        objective = self.paced()
        mean_mix = self._mix(a / (a + b), costs, objective)
        u = task_unit(key)
        if not self.thompson:
            model = pick_at(mean_mix, u)
            return Assignment(model, _share(mean_mix, model), self._summary(a, b, costs, objective, mean_mix))
        seed = int.from_bytes(hashlib.sha256(f"{key}\0{self.tasks}".encode()).digest()[:8], "big")
        rng = np.random.default_rng(seed)
        spread = COST_LOG_SD * np.sqrt(self.cost_strength / (self.cost_strength + self.n))
        mixes = [
            self._mix(rng.beta(a, b), costs * np.exp(rng.normal(0.0, spread)), objective)
            for _ in range(self.draws)
        ]
        model = pick_at(mixes[0], u)
        propensity = float(np.mean([_share(m, model) for m in mixes]))
        return Assignment(
            model, max(propensity, 1.0 / self.draws), self._summary(a, b, costs, objective, mean_mix)
        )

    def _summary(
        self, a: np.ndarray, b: np.ndarray, costs: np.ndarray, objective: Objective, mix: FloorMix
    ) -> PosteriorSummary:
        return PosteriorSummary(
            models=list(self.models),
            resolved=[round(float(x), 6) for x in a / (a + b)],
            cost=[round(float(x), 6) for x in costs],
            scale=round(self.scale(), 6),
            observed=[int(x) for x in self.n],
            paced_budget=None if objective.budget is None else round(objective.budget, 6),
            mix=mix,
        )


def _share(mix: FloorMix, model: str) -> float:
    return mix.shares[mix.models.index(model)] if model in mix.models else 0.0
