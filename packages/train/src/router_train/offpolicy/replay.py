"""Deployment replayed on real outcomes: a prior IRT router serves another harness's traffic of the same
models, task by task in a seeded order, exploring as `serve`'s `[explore]` does (`serve.explore`), learning
each served task's outcome and cost, and refitting every M tasks with `feedback --refit`'s refit
(`irt.refit`). The traffic table holds every model's outcome on every task, so the replay also knows
what the static prior, the best fixed model in hindsight and the oracle would have got on the same
stream, and the true value of every policy that the off-policy estimators guess from the log at the end.

Pure numpy in one process: the prior's per-run logits of every traffic task are computed once from the
texts; a refit moves only per-model intercepts and costs, so routing after it is a vector operation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.frontier import ModelPoint, best_mix_at_cost
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import OracleTable, TaskRecord
from router_train.irt.checkpoint import IrtCheckpoint
from router_train.irt.refit import fit_costs, fit_shifts, model_probabilities, model_run_columns
from router_train.irt.router import FittedIrtRouter, near_tie_routes
from router_train.offpolicy.estimators import Logged, PolicyEstimate, always, estimate_policy
from router_train.route.kinds.irt import deployed
from router_train.scoring.dial import outcome_matrices
from router_train.serve.explore import serve_choice


class ReplayError(ValueError):
    """A prior and a traffic table that do not make a replay (one line)."""


@dataclass(frozen=True)
class Setup:
    """What every stream of a replay shares: the traffic's outcomes and the prior's view of its tasks."""

    models: list[str]
    """Pool model ids, sorted (the columns; ties of cost go to the first, as the IRT router's)."""
    instance_ids: list[str]
    """Traffic tasks."""
    resolved: np.ndarray
    """(tasks, models) each model's outcome on each task (the traffic table's)."""
    cost: np.ndarray
    """(tasks, models) its cost, USD."""
    oracle: np.ndarray
    """(tasks,) the table's oracle pick (column)."""
    z: np.ndarray
    """(tasks, runs) the prior's logits, from each task's text."""
    model_runs: list[np.ndarray]
    """Per model, its run columns of `z`."""
    temperature: float
    """The prior's logit temperature."""
    tolerance: float
    """The prior's near-tie tolerance."""
    public_costs: np.ndarray
    """(models,) the prior's predicted mean cost per model."""
    static: np.ndarray
    """(tasks,) the static prior's pick (column): the checkpoint deployed as `route` and `serve` deploy it,
    at its stored default point (`route.deploy`)."""


def setup(prior: IrtCheckpoint, traffic: OracleTable, where: str) -> Setup:
    """The replay's shared arrays; the traffic's pool must be the prior's models (same ids)."""
    models = sorted(prior.pool.ids)
    if sorted(traffic.pool.ids) != models:
        raise ReplayError(
            f"{where}: the traffic's pool {sorted(traffic.pool.ids)} is not the prior's models {models}"
        )
    if not traffic.tasks:
        raise ReplayError(f"{where}: the traffic table has no task")
    tasks = sorted(traffic.tasks, key=lambda t: t.instance_id)
    resolved, cost = outcome_matrices(tasks, models)
    if not (np.isfinite(resolved).all() and np.isfinite(cost).all()):
        raise ReplayError(f"{where}: the traffic table has a non-finite outcome or cost")
    col = {m: j for j, m in enumerate(models)}
    router = FittedIrtRouter.from_fit(prior.fit)
    by_id = {m.id: m for m in prior.pool.models}
    runs = model_run_columns(prior.fit, [by_id[m].runs for m in models])
    ordered = prior.pool.model_copy(update={"models": [by_id[m] for m in models]})
    return Setup(
        models=models,
        instance_ids=[t.instance_id for t in tasks],
        resolved=resolved,
        cost=cost,
        oracle=np.asarray([col[t.oracle] for t in tasks], dtype=np.int64),
        z=router.predictor.logits(tasks),
        model_runs=runs,
        temperature=prior.fit.temperature,
        tolerance=prior.fit.tolerance,
        public_costs=router.pool_costs(ordered),
        static=static_picks(prior, tasks, models),
    )


def static_picks(prior: IrtCheckpoint, tasks: Sequence[TaskRecord], models: Sequence[str]) -> np.ndarray:
    """The prior's route of every task (columns of `models`), by the one deploy rule `route` uses."""
    routed = [t for t in tasks]
    decisions = deployed(prior, "irt:prior").route_many(routed, explain=False)
    col = {m: j for j, m in enumerate(models)}
    return np.asarray([col[d.model] for d in decisions if d.model is not None], dtype=np.int64)


def routes(s: Setup, shifts: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """(tasks,) the IRT router's pick on every traffic task with these shifts and costs."""
    p = model_probabilities(s.z, shifts, s.model_runs, s.temperature)
    return near_tie_routes(p, costs, s.tolerance)


@dataclass(frozen=True)
class Stream:
    """One replayed stream: tasks in order and what the learning policy did on each."""

    order: np.ndarray
    """Task rows in arrival order."""
    served: np.ndarray
    """Model column served, per arrival."""
    propensity: np.ndarray
    """Its propensity."""
    explored: np.ndarray
    """Whether an exploration draw served it."""
    final_shifts: np.ndarray
    """The last refit's ability shifts."""
    final_costs: np.ndarray
    """The last refit's costs."""


def simulate(s: Setup, seed: int, rate: float, refit_every: int) -> Stream:
    """One stream: tasks in the order `seed` draws, each routed by the current fit (exploring at `rate`
    with serve's draw, seeded by `seed`), its outcome logged; every `refit_every` tasks the fit is refitted
    on everything logged so far."""
    n = len(s.instance_ids)
    order = np.random.default_rng(seed).permutation(n)
    shifts, costs = np.zeros(len(s.models)), s.public_costs.copy()
    picks = routes(s, shifts, costs)
    served = np.zeros(n, dtype=np.int64)
    prop, explored = np.zeros(n), np.zeros(n, dtype=bool)
    for t, i in enumerate(order):
        if t and t % refit_every == 0:
            seen = order[:t]
            y, c = s.resolved[seen, served[:t]], s.cost[seen, served[:t]]
            shifts = fit_shifts(s.z[seen], served[:t], y, s.model_runs, s.temperature)
            costs = fit_costs(served[:t], c, s.public_costs)
            picks = routes(s, shifts, costs)
        choice = serve_choice(s.instance_ids[i], s.models[picks[i]], s.models, rate, seed)
        assert choice.model is not None and choice.propensity is not None
        served[t] = s.models.index(choice.model)
        prop[t], explored[t] = choice.propensity, choice.explored
    return Stream(order, served, prop, explored, shifts, costs)


class Point(FrozenModel):
    """A policy's outcome on a stream's first tasks."""

    resolved: float
    """Resolved rate."""
    cost: float
    """Mean cost per task, USD."""
    gap_vs_mix: float | None
    """Resolved rate minus the best random mix of single models at this cost, on the same tasks (None:
    cheaper than every model)."""


def point(s: Setup, rows: np.ndarray, cols: np.ndarray) -> Point:
    """The policy serving task `rows[k]` with model `cols[k]`, on those tasks."""
    r, c = float(s.resolved[rows, cols].mean()), float(s.cost[rows, cols].mean())
    singles = [
        ModelPoint(model=m, cost=float(s.cost[rows, j].mean()), resolved=float(s.resolved[rows, j].mean()))
        for j, m in enumerate(s.models)
    ]
    mix = best_mix_at_cost(singles, c)
    return Point(resolved=r, cost=c, gap_vs_mix=None if mix is None else r - mix.resolved)


class Estimated(FrozenModel):
    """One policy's off-policy estimates at the end of a stream, and its true value on the stream."""

    estimate: PolicyEstimate
    """What the estimators make of the log."""
    true_resolved: float
    """The policy's resolved rate on every task of the stream (the replay knows every outcome)."""
    true_cost: float
    """Its cost per task."""


class SeedResult(FrozenModel):
    """One stream seed."""

    seed: int
    """The stream seed (task order and exploration draws)."""
    explored: int
    """Tasks served by an exploration draw."""
    at_horizon: dict[str, Point]
    """After the first `horizon` tasks: `learning`, `static prior`, `best fixed` (in hindsight on those
    tasks), `oracle`."""
    curves: dict[str, list[float]]
    """Per policy, cumulative resolved and cost after each task (`<policy> resolved`, `<policy> cost`)."""
    estimates: list[Estimated]
    """Off-policy estimates from the whole stream's log."""


def replay_seed(
    s: Setup, seed: int, rate: float, refit_every: int, horizon: int, bootstrap: int, min_tried: int
) -> SeedResult:
    """One stream, its points at the horizon, its curves and the end-of-stream estimates."""
    st = simulate(s, seed, rate, refit_every)
    o = st.order
    prior = s.static
    h = min(horizon, len(o))
    head = o[:h]
    best_h = int(np.argmax(s.resolved[head].mean(axis=0)))
    best_all = int(np.argmax(s.resolved.mean(axis=0)))
    cols = {
        "learning": st.served,
        "static prior": prior[o],
        "best fixed": np.full(len(o), best_all),
        "oracle": s.oracle[o],
    }
    at = {name: point(s, head, c[:h]) for name, c in cols.items()}
    at["best fixed"] = point(s, head, np.full(h, best_h))
    curves: dict[str, list[float]] = {}
    for name, c in cols.items():
        curves[f"{name} resolved"] = np.cumsum(s.resolved[o, c]).tolist()
        curves[f"{name} cost"] = np.cumsum(s.cost[o, c]).tolist()
    logged = Logged(
        models=s.models,
        served=st.served,
        propensity=st.propensity,
        resolved=s.resolved[o, st.served],
        cost=s.cost[o, st.served],
    )
    final = routes(s, st.final_shifts, st.final_costs)
    policies: list[tuple[str, np.ndarray]] = [
        (f"always:{m}", always(j, len(o))) for j, m in enumerate(s.models)
    ]
    policies += [("static prior", prior[o]), ("learned (final)", final[o])]
    estimates = []
    for name, picks in policies:
        e = estimate_policy(name, picks, logged, bootstrap=bootstrap, seed=seed, min_tried=min_tried)
        truth_r, truth_c = float(s.resolved[o, picks].mean()), float(s.cost[o, picks].mean())
        estimates.append(Estimated(estimate=e, true_resolved=truth_r, true_cost=truth_c))
    return SeedResult(
        seed=seed, explored=int(st.explored.sum()), at_horizon=at, curves=curves, estimates=estimates
    )


def coverage(results: Sequence[SeedResult]) -> dict[str, tuple[int, int]]:
    """Per `<estimator> <metric>`: (intervals covering the true value, intervals given) over every seed
    and policy that got numbers."""
    out: dict[str, list[int]] = {}
    for r in results:
        for e in r.estimates:
            for metric, est, truth in (
                ("resolved", e.estimate.resolved, e.true_resolved),
                ("cost", e.estimate.cost, e.true_cost),
            ):
                if est is None:
                    continue
                for name in ("ips", "snips", "dr"):
                    iv = getattr(est, name)
                    tally = out.setdefault(f"{name} {metric}", [0, 0])
                    tally[0] += int(iv.low - 1e-12 <= truth <= iv.high + 1e-12)
                    tally[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}
