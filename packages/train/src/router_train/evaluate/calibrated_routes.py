"""`evaluate --calibrate N`: a fitted router re-estimates, on a few tasks of the user's own harness, what a
user can measure cheaply there, then routes the rest.

What is measured on the calibration tasks' outcomes (`measured_on`): each model's mean cost, its resolve
rate, and the share of tasks each model is the oracle label of (add-one smoothed). What each router does
with it, from the per-model scores it was fitted to give (`scoring.dial.RouterScores`):

- every scoring router: the cost figures its tie-breaking (and dial) read become the measured mean costs
  (ties of the best score go to the cheapest model there);
- the classifiers of the oracle label (`tfidf-logreg`, its balanced variant, `tfidf-knn`): their prior too,
  the standard prior-shift correction: log-scores + log(measured label share / train label share);
- the IRT router (scores with a near-tie `tolerance`): each pool model's ability, a shift of its predicted
  resolve probabilities' logit so that their mean on the calibration tasks is the measured resolve rate
  (task difficulties kept), then its own rule, near-ties to the cheapest by the measured costs;
- `cheapest-on-train`: the cheapest model by the measured mean costs.
The local GRPO router has no prior or base rate apart from its logits: only its costs are re-estimated.

A router whose fit chose "always the cheapest model" as its safe default point (`scoring.safe_point`,
evaluate's default) routes every task to the cheapest model by the measured costs; one at its native route
or a dial point routes by the re-estimated scores above. A dial point is not carried over: its lambda
prices the train harness's costs, and re-priced with the measured ones it lands elsewhere on the
frontier (tried: Claude Code -> OpenHands, N = 25, plain regression -2.0 [-3.2, -1.0] with it, on the mix
without it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from router_oracle.table import TaskRecord
from router_train.irt.router import near_tie_routes
from router_train.scoring.baselines import BALANCED_LOGREG_NAME, CHEAPEST_NAME, LOGREG_NAME
from router_train.scoring.dial import RouterScores, outcome_matrices

KNN_PREFIX = "tfidf-knn"
"""Row names of the kNN classifier start so (`baselines.tfidf_knn`: `tfidf-knn(k=K)`)."""

_TIE = 1e-12
"""Scores this close count as tied."""


@dataclass(frozen=True)
class Measured:
    """What a user measures on a few tasks of their own harness, per pool model (pool order)."""

    tasks: list[str]
    """The tasks it was measured on."""
    mean_cost: np.ndarray
    """Mean cost per task, USD."""
    resolve_rate: np.ndarray
    """Mean resolve rate."""
    label_share: np.ndarray
    """Share of the tasks each model is the oracle label of, add-one smoothed (never 0)."""


def measured_on(tasks: Sequence[TaskRecord], pool: Sequence[str]) -> Measured:
    """The figures of `tasks`' outcomes (the only place calibration reads outcomes)."""
    resolved, cost = outcome_matrices(tasks, pool)
    counts = np.asarray([sum(t.oracle == m for t in tasks) for m in pool], dtype=float)
    return Measured(
        tasks=[t.instance_id for t in tasks],
        mean_cost=cost.mean(axis=0),
        resolve_rate=resolved.mean(axis=0),
        label_share=(counts + 1.0) / (len(tasks) + len(pool)),
    )


def cheapest_of_best(scores: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """Column per row: the best score, ties to the cheapest model (then the earlier column)."""
    s = np.where(np.isfinite(scores), scores, -np.inf)
    best = s >= s.max(axis=1, keepdims=True) - _TIE
    priced = np.where(best, np.asarray(costs, dtype=float)[None, :], np.inf)
    out: np.ndarray = priced.argmin(axis=1)
    return out


def ability_shift(p: np.ndarray, rate: np.ndarray, n: int) -> np.ndarray:
    """(models,) logit shift making each column of `p` (calibration tasks, models) average `rate`, which is
    first pulled inside [0.5/n, 1 - 0.5/n] (a model that resolved all or none of n tasks keeps a finite
    ability). Bisection: the mean is increasing in the shift."""
    target = np.clip(rate, 0.5 / n, 1 - 0.5 / n)
    z = logit(np.clip(p, 1e-9, 1 - 1e-9))
    lo, hi = np.full(p.shape[1], -30.0), np.full(p.shape[1], 30.0)
    for _ in range(80):
        mid = (lo + hi) / 2
        above = expit(z + mid[None, :]).mean(axis=0) > target
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    out: np.ndarray = (lo + hi) / 2
    return out


def is_label_classifier(name: str) -> bool:
    """Scores are log-probabilities of the oracle label (a prior to shift)."""
    return name in (LOGREG_NAME, BALANCED_LOGREG_NAME) or name.startswith(KNN_PREFIX)


def calibrated_columns(
    scores: RouterScores,
    train: Sequence[TaskRecord],
    calibration: Sequence[int],
    rest: Sequence[int],
    measured: Measured,
) -> np.ndarray:
    """The re-estimated router's column (in `scores.model_ids`) for each test row in `rest`; `calibration`
    are the rows of the calibration tasks (what `measured` was measured on), `train` the fit's train tasks
    (the classifiers' train label shares)."""
    rest_rows = np.asarray(rest, dtype=int)
    point = scores.safe_point
    if point is not None and point.choice == "cheapest":
        cheapest = calibrated_cheapest(measured, scores.model_ids)
        return np.full(len(rest_rows), scores.model_ids.index(cheapest))
    if scores.tolerance is not None and scores.probabilities is not None:
        p = scores.probabilities
        shift = ability_shift(p[np.asarray(calibration, dtype=int)], measured.resolve_rate, len(calibration))
        shifted = expit(logit(np.clip(p[rest_rows], 1e-9, 1 - 1e-9)) + shift[None, :])
        return near_tie_routes(shifted, measured.mean_cost, scores.tolerance)
    s = scores.test[rest_rows]
    if is_label_classifier(scores.name):
        prior = measured_on(train, scores.model_ids).label_share
        s = s + np.log(measured.label_share / prior)[None, :]
    return cheapest_of_best(s, measured.mean_cost)


def calibrated_cheapest(measured: Measured, pool: Sequence[str]) -> str:
    """`cheapest-on-train` re-estimated: the cheapest model by the measured mean costs (ties: smallest id,
    as `baselines.cheapest_model`)."""
    return min(pool, key=lambda m: (float(measured.mean_cost[list(pool).index(m)]), m))


CALIBRATED_FIXED = (CHEAPEST_NAME,)
"""Learned rows without scores that can still be re-estimated."""
