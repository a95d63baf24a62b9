"""The one definition of every evaluation metric.

Conventions, shared by all metrics:
- Tasks weigh equally. A task's decisions form a distribution (see `decisions.py`); with k samples per
  task each sample carries weight 1/k, so a rate is the mean over tasks of the per-task mean over samples.
- Choosing model m on task t yields t's measured outcome for m, as the env's `score_route` reports it
  (never re-derived here): resolved = `per_model[m].resolve_rate` (the fraction of m's runs that
  resolved t, so an expectation when m has several runs), cost = `per_model[m].cost` (mean USD).
- Unparseable (no valid `<route>`) and missing (no decision for a task of the split) decisions resolve
  nothing and cost nothing: no model is run. They are reported separately (`unparseable_rate`,
  `tasks_missing`) so a router cannot look cheap by failing to answer without it showing.
- Accuracy: weight on the task's oracle label (the table's rule: best resolve rate, then cheapest).
- Opt.Sel: accuracy restricted to tasks some model resolved (not `all_failed`). There the oracle is,
  by the table's rule, the cheapest model among those with the best resolve rate; with one run per
  model that is exactly "the cheapest model that resolved the task".
- Label distributions include `<unparseable>` as a label of its own; the oracle never uses it.
- Cohen's kappa: (p_o - p_e) / (1 - p_e), with p_o the accuracy and p_e = sum_l p_router(l) p_oracle(l);
  when p_e = 1 both routers always pick the same single label, and kappa is defined as 1.
- TVD: 1/2 sum_l |p_router(l) - p_oracle(l)|.
- Frontier: `vs_mix.py`; `gap_vs_mix` = resolved rate minus the best random mix of single models
  at the same mean cost (negative: a mix dominates the router).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from router_frontier_rl.rewards import score_route
from router_oracle.frontier import ModelPoint
from router_oracle.infra.report_numbers import rounded
from router_oracle.table import TaskRecord
from router_train.scoring.bootstrap import TaskResample
from router_train.scoring.decisions import UNPARSEABLE, Decisions
from router_train.scoring.vs_mix import FrontierPosition, frontier_position, gap_interval


class RouterMetrics(BaseModel):
    """Every metric of one router on one set of tasks."""

    model_config = ConfigDict(frozen=True)

    n_tasks: int
    """Tasks evaluated (the split's tasks)."""
    n_decisions: int
    """Decisions behind the metrics (samples summed over tasks)."""
    tasks_missing: int
    """Tasks of the split with no decision at all (counted as unparseable)."""
    resolved_rate: float
    """Mean resolve rate of the chosen models."""
    resolved_tasks: float
    """Expected number of resolved tasks (resolved_rate x n_tasks)."""
    mean_cost: float
    """Mean cost per task of the chosen models, USD."""
    total_cost: float
    """Expected total cost over the tasks, USD."""
    resolved_per_dollar: float | None
    """Resolved tasks per USD spent; None when nothing was spent."""
    mean_reward: float
    """Mean of the environment's `routed_reward` (the training reward), for comparison with training logs."""
    accuracy: float
    """Share of decisions equal to the oracle label."""
    in_best_rate: float
    """Share of decisions on a model with the task's best resolve rate (ignores cost)."""
    opt_sel: float | None
    """Accuracy on tasks some model resolved; None when there are none."""
    opt_sel_tasks: int
    """Tasks some model resolved (the denominator of Opt.Sel)."""
    kappa: float
    """Cohen's kappa between router and oracle labels."""
    tvd: float
    """Total variation distance between the router's and the oracle's label distributions."""
    unparseable_rate: float
    """Share of decisions that named no valid model (missing tasks included)."""
    label_distribution: dict[str, float]
    """Router label -> share of decisions."""
    confusion: dict[str, dict[str, float]]
    """Oracle label -> router label -> decisions weighted so each task counts 1 (only non-zero cells)."""
    frontier: FrontierPosition | None
    """Position against the mix frontier; None for the single models themselves."""


def task_outcome(task: TaskRecord, label: str) -> tuple[float, float, float]:
    """(resolved, cost, env reward) of routing `task` to `label`, from the environment's own scoring.

    `<unparseable>` resolves nothing and costs nothing (and earns the env's no-route reward).
    """
    s = score_route(task, None if label == UNPARSEABLE else label)
    return s.resolved_if_chosen, s.cost_if_chosen, s.routed_reward


def _distribution(decisions: Decisions, task: TaskRecord) -> dict[str, float]:
    return decisions.choices.get(task.instance_id) or {UNPARSEABLE: 1.0}


def label_distribution(decisions: Decisions, tasks: Sequence[TaskRecord]) -> dict[str, float]:
    """Router label -> mean weight over tasks."""
    totals: dict[str, float] = {}
    for t in tasks:
        for label, w in _distribution(decisions, t).items():
            totals[label] = totals.get(label, 0.0) + w
    n = max(len(tasks), 1)
    return {k: totals[k] / n for k in sorted(totals)}


def oracle_distribution(tasks: Sequence[TaskRecord]) -> dict[str, float]:
    """Oracle label -> share of tasks."""
    totals: dict[str, float] = {}
    for t in tasks:
        totals[t.oracle] = totals.get(t.oracle, 0.0) + 1.0
    n = max(len(tasks), 1)
    return {k: totals[k] / n for k in sorted(totals)}


def cohen_kappa(p_observed: float, router: dict[str, float], oracle: dict[str, float]) -> float:
    """Cohen's kappa from the observed agreement and the two marginal label distributions."""
    p_expected = sum(w * oracle.get(label, 0.0) for label, w in router.items())
    if 1.0 - p_expected <= 1e-12:
        return 1.0  # both always give the same single label: perfect agreement
    return (p_observed - p_expected) / (1.0 - p_expected)


def total_variation(p: dict[str, float], q: dict[str, float]) -> float:
    """1/2 sum |p - q| over the union of labels."""
    # Sorted: a set's order varies between runs (hash seed), and float sums depend on order.
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in sorted(set(p) | set(q)))


def per_task_outcomes(decisions: Decisions, tasks: Sequence[TaskRecord]) -> tuple[list[float], list[float]]:
    """Per task, the expected (resolved, cost) of `decisions`: the values `compute_metrics` averages and
    bootstraps (a missing task resolves nothing and costs nothing)."""
    resolved, cost = [], []
    for t in tasks:
        task_r = task_c = 0.0
        for label, w in _distribution(decisions, t).items():
            r, c, _ = task_outcome(t, label)
            task_r += w * r
            task_c += w * c
        resolved.append(task_r)
        cost.append(task_c)
    return resolved, cost


def compute_metrics(
    decisions: Decisions,
    tasks: Sequence[TaskRecord],
    single_models: Sequence[ModelPoint] | None = None,
    resample: TaskResample | None = None,
) -> RouterMetrics:
    """All metrics of `decisions` on `tasks`; `single_models` (if given) places it on the mix frontier."""
    n = len(tasks)
    resolved = cost = reward = acc = in_best = unparse = 0.0
    solvable = 0
    solvable_acc = 0.0
    missing = 0
    n_decisions = 0
    confusion: dict[str, dict[str, float]] = {}
    per_task_resolved: list[float] = []
    per_task_cost: list[float] = []
    for t in tasks:
        if t.instance_id not in decisions.choices:
            missing += 1
        n_decisions += decisions.samples.get(t.instance_id, 0)
        dist = _distribution(decisions, t)
        row = confusion.setdefault(t.oracle, {})
        task_r = task_c = 0.0
        for label, w in dist.items():
            r, c, rew = task_outcome(t, label)
            task_r += w * r
            task_c += w * c
            reward += w * rew
            acc += w * (label == t.oracle)
            in_best += w * (label in t.best)
            unparse += w * (label == UNPARSEABLE)
            row[label] = row.get(label, 0.0) + w
        resolved += task_r
        cost += task_c
        per_task_resolved.append(task_r)
        per_task_cost.append(task_c)
        if not t.all_failed:
            solvable += 1
            solvable_acc += dist.get(t.oracle, 0.0)
    denom = max(n, 1)
    accuracy = acc / denom
    router_dist = label_distribution(decisions, tasks)
    oracle_dist = oracle_distribution(tasks)
    position = None
    if single_models is not None:
        ci = None if resample is None else gap_interval(resample, per_task_resolved, per_task_cost)
        position = frontier_position(cost / denom, resolved / denom, single_models, ci)
    return RouterMetrics(
        n_tasks=n,
        n_decisions=n_decisions,
        tasks_missing=missing,
        resolved_rate=rounded(resolved / denom),
        resolved_tasks=rounded(resolved),
        mean_cost=rounded(cost / denom),
        total_cost=rounded(cost),
        resolved_per_dollar=rounded(resolved / cost) if cost > 0 else None,
        mean_reward=rounded(reward / denom),
        accuracy=rounded(accuracy),
        in_best_rate=rounded(in_best / denom),
        opt_sel=rounded(solvable_acc / solvable) if solvable else None,
        opt_sel_tasks=solvable,
        kappa=rounded(cohen_kappa(accuracy, router_dist, oracle_dist)),
        tvd=rounded(total_variation(router_dist, oracle_dist)),
        unparseable_rate=rounded(unparse / denom),
        label_distribution={k: rounded(v) for k, v in router_dist.items()},
        confusion={
            o: {k: rounded(v) for k, v in sorted(row.items()) if v > 0}
            for o, row in sorted(confusion.items())
        },
        frontier=position,
    )


def single_model_points(tasks: Sequence[TaskRecord], model_ids: Sequence[str]) -> list[ModelPoint]:
    """Each pool model as an always-this-model router on `tasks`."""
    n = max(len(tasks), 1)
    points = []
    for m in model_ids:
        outcomes = [task_outcome(t, m) for t in tasks]
        r = sum(o[0] for o in outcomes) / n
        c = sum(o[1] for o in outcomes) / n
        points.append(ModelPoint(model=m, cost=rounded(c), resolved=rounded(r)))
    return points


def task_resample(tasks: Sequence[TaskRecord], model_ids: Sequence[str], seed: int) -> TaskResample:
    """The bootstrap resamples of `tasks` (indices fixed by `seed` and the task count), with each pool
    model's outcome on every task: the same seed and task count give the same resamples in any pool."""
    outcomes = [[task_outcome(t, m) for t in tasks] for m in model_ids]
    return TaskResample(
        np.array([[o[0] for o in row] for row in outcomes]),
        np.array([[o[1] for o in row] for row in outcomes]),
        seed,
    )
