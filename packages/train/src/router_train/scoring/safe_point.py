"""Do no harm: each learned router's default operating point, chosen on its training tasks only.

A router that sits below the best random mix of single models makes its user pay more for less; on a
pool where one cheap model is nearly the best, "always the cheapest model" is the mix's own corner and
costs nothing to fall back to. The rule (issue 39, item 7), applied per fit on the fit's train tasks:

1. Inner cross-validation: the train tasks in `INNER_FOLDS` folds stratified by oracle label (the
   outer folds' rule, `split.stratified_folds`); the router is fitted on the other inner folds exactly
   as it is fitted for real, and routes each inner fold at every candidate point:
   - `router`: its native route (what it routes with no dial);
   - `dial:S` for each S in `DIAL_SHARES` (the curves' 11 shares): its cost dial aimed at S of the way
     from the cheapest to the strongest single model's mean cost on the inner fit's train tasks
     (`scoring.dial`, the curves' rule);
   - `cheapest`: every task to the cheapest model on the inner fit's train tasks.
2. Each candidate's out-of-fold routes of every train task are judged as `evaluate` judges a router:
   resolved rate minus the best random mix of single models at the same mean cost, on the train tasks.
3. The default point is the native route if its estimated gap is the larger of the two (router, cheapest;
   ties to the router) and above the kind's default margin (`Margins.default`; half a point for the
   classifiers); otherwise `cheapest`. The dial points never become the default (`DIAL_SHARES` says why);
   a budget or dial is honoured only where its estimate is above the kind's dial margin (`Margins.dial`;
   `dial_estimate`, `honoured`; `route.operating_point.checked`). Both margins are stored in the
   `SafePoint`, so a checkpoint routes by the rule it was fitted under.

Why the point estimate and not a lower bound: on 400 train tasks the bound of a +1.5-point gain is about
+-1.2 points wide, so a bound rule falls back on the pools where routing pays (issue 32 tried one on the
IRT router: `default` fell from +0.4 to +0.0). The fallback's own gap is 0, so the point estimate falls
back wherever routing does not pay on the train tasks, and keeps a router whose estimated gain is above
its kind's margin: how far a kind's inner estimate overstates its gain out of sample differs by kind, so
each kind's margins are chosen by measurement (`CLASSIFIER_MARGINS`, `LOCAL_MARGINS`, `IRT_MARGINS`;
`benchmarks/bench_margin.py`, docs/evaluate.md "The margin, chosen by measurement").

The cost dial's curves read the same scores as before; evaluate marks the points fits would refuse.
`SafePoint` is stored in every checkpoint `fit`, `local` and `fit irt` write,
and `route`/`serve` route with it unless given a budget or dial it honours, or `--no-safe-point`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from router_frontier_rl.split import stratified_folds
from router_oracle.infra.report_numbers import rounded
from router_oracle.table import TaskRecord
from router_train.scoring.decisions import UNPARSEABLE, Decisions, from_labels
from router_train.scoring.default_point import SafeCandidate, SafePoint
from router_train.scoring.dial import (
    RouterScores,
    apply_dial,
    calibrate,
    dial_for_budget,
    outcome_matrices,
)
from router_train.scoring.metrics import compute_metrics, single_model_points

__all__ = [
    "CLASSIFIER_MARGINS",
    "IRT_MARGINS",
    "LOCAL_MARGINS",
    "Margins",
    "SafeCandidate",
    "SafePoint",
    "SafePointFitter",
    "checkpoint_safe_point",
    "safe_point_notes",
    "with_safe_point",
]

INNER_FOLDS = 5
"""Inner cross-validation folds over a fit's train tasks."""

DIAL_SHARES: tuple[float, ...] = tuple(i / 10 for i in range(11))
"""Dial points estimated beside the native route and the cheapest model: targets this far from the
cheapest to the strongest single model's mean cost (the curves' targets, `evaluate.curves`). Their
estimates decide which `--budget` / `--dial` a checkpoint honours (`dial_estimate`), never the default
point: as default candidates (0.5 and 0.25, margin 0) the inner estimate picked dial points that lost out
of sample (a drawn pool: the plain classifier -0.3 -> -4.1 [-8.7, -0.3], local-grpo -0.1 -> -3.4; Claude
Code: the balanced one -0.1 -> -0.7 [-1.5, -0.1]), where native-or-cheapest falls back without such
losses."""

MARGIN = 0.005
"""The learned classifiers' default margin: the native route is kept only when its estimated gap (a
fraction) is above this, half a point. At 0, a router truly ~1 point below the mix still beat it on its
train tasks by chance in some fits (Claude pool under OpenHands: the balanced classifier -0.3 [-0.6, -0.1],
4 of 25 fits kept); at 0.5 the default pool keeps its best router (+2.0 [+0.0, +4.0], native +2.2), at the
cost of the weaker routers' smaller gains (docs/evaluate.md, "Do no harm")."""

DIAL_MARGIN = 0.015
"""The learned classifiers' dial margin: a dial point (`--budget`, `--dial`) is honoured only when its
inner estimate is above this, 1.5 points (`benchmarks/bench_margin.py`, docs/evaluate.md "The margin,
chosen by measurement"): on the Claude pool under OpenHands, where nothing routes, dial points a user could
select stayed wholly below the mix at 0.5 (kNN 3 of 11, each classifier 1 of 11) and at 1 point, none at
1.5; on the pools where routing pays no dial point was below at any margin."""


@dataclass(frozen=True)
class Margins:
    """A kind's two margins (fractions of resolved rate): what its inner estimate must beat the mix by."""

    default: float = MARGIN
    """The native route is the default point only when its estimate is above this (else the cheapest)."""
    dial: float = DIAL_MARGIN
    """A budget or dial is honoured only where its estimate is above this (else the default point)."""


CLASSIFIER_MARGINS = Margins()
"""The learned classifiers' (`tfidf-*`, the `baseline` kind): 0.5 points for the default, 1.5 for the dial."""

LOCAL_MARGINS = Margins(default=0.02, dial=0.02)
"""The local GRPO router's (`local`, evaluate's `local-grpo` row): 2 points for both. Its inner estimate
overstates its gain more than the classifiers' (a policy trained by sampling, noisier fit to fit): at the
classifiers' margins its default row was wholly below the mix on a drawn pool (issue 32's draw 2: -0.26
[-0.64, -0.07], and so were 10 of its 11 dial points, which fall back to it), and still at 1 and 1.5
points (-0.16 [-0.43, -0.03]); at 2 points no row or dial point is wholly below on any of the ten pools
measured, and the gain given up is not measurable (bash-only: +0.43 [-0.04, +0.93] at 0.5, +0.02 at 2)."""

IRT_MARGINS = Margins(default=0.01, dial=0.01)
"""The IRT router's (`irt`): 1 point for both. At the classifiers' margins 2 of its 11 dial points were
wholly below the mix on draw 2 (falling back to a default of -0.76 [-3.15, +0.32]; the worst -1.38 [-5.15,
-0.00]) and at 1.5 points for both, one on the Claude pool under OpenHands; at 1 point none on any of the
ten pools measured, and its default rows are no worse than at 0.5 on any (draw 2 +0.19, the default pool
+0.12 against -0.76 and +0.04)."""

NO_GAP = -1.0
"""A candidate's stored gap where it has none (its routes cheaper than every single model: no mix to
compare with); never honoured, and said as "no estimate" (`known_gap`). Older files hold it too."""

MIN_TASKS_PER_FOLD = 10
"""Fewer train tasks per inner fold leave nothing to judge on: the router keeps its native point."""

FitScored = Callable[
    [Sequence[TaskRecord], Sequence[TaskRecord], int], tuple[list[Decisions], list[RouterScores]]
]
"""A fitter's `fit_scored`: (train, test, seed) -> (decisions, per-model scores) of its routers."""


def cheapest_index(train: Sequence[TaskRecord], model_ids: Sequence[str]) -> int:
    """Column of the cheapest model by mean cost on `train` (ties: the better one, then the first)."""
    resolved, cost = outcome_matrices(train, model_ids)
    price, rate = cost.mean(axis=0), resolved.mean(axis=0)
    return min(range(len(model_ids)), key=lambda j: (price[j], -rate[j], j))


def share_dials(scores: RouterScores, train: Sequence[TaskRecord], shares: Sequence[float]) -> list[float]:
    """The dials of `scores`' router aimed at each of `shares` of the way from the cheapest to the
    strongest single model's mean cost on `train` (its calibration on `train`; `evaluate.curves.fold_dials`'
    rule)."""
    resolved, cost = outcome_matrices(train, scores.model_ids)
    price, rate = cost.mean(axis=0), resolved.mean(axis=0)
    weak = cheapest_index(train, scores.model_ids)
    strong = max(range(len(rate)), key=lambda j: (rate[j], -price[j], -j))
    cal = calibrate(scores.train, train, scores.model_ids, costs=price, outcomes=(resolved, cost))
    return [dial_for_budget(cal, float(price[weak] + s * (price[strong] - price[weak]))) for s in shares]


def candidate_routes(
    decisions: Decisions, scores: RouterScores, train: Sequence[TaskRecord], test: Sequence[TaskRecord]
) -> dict[str, list[str | None]]:
    """Candidate name -> the route of each `test` task (in order) at that candidate point."""
    ids = scores.model_ids
    out: dict[str, list[str | None]] = {"router": [_label(decisions, t.instance_id) for t in test]}
    price = outcome_matrices(train, ids)[1].mean(axis=0)
    for share, dial in zip(DIAL_SHARES, share_dials(scores, train, DIAL_SHARES), strict=True):
        out[f"dial:{share:g}"] = [ids[int(j)] for j in apply_dial(scores.test, price, dial)]
    out["cheapest"] = [ids[cheapest_index(train, ids)]] * len(test)
    return out


def _label(decisions: Decisions, instance_id: str) -> str | None:
    (label,) = decisions.choices[instance_id]
    return None if label == UNPARSEABLE else label


def estimate(
    fit_scored: FitScored, train: Sequence[TaskRecord], model_ids: Sequence[str], seed: int
) -> dict[str, list[SafeCandidate]]:
    """Per router with scores, every candidate's out-of-fold estimate on `train` (inner cross-validation,
    every fit reading its inner train tasks only); {} when `train` is too small to split."""
    train = list(train)
    if len(train) < INNER_FOLDS * MIN_TASKS_PER_FOLD:
        return {}
    by_id = {t.instance_id: t for t in train}
    routes: dict[str, dict[str, dict[str, str | None]]] = {}
    for fold in stratified_folds(train, INNER_FOLDS, seed):
        held = set(fold)
        inner_train = [t for t in train if t.instance_id not in held]
        inner_test = [by_id[i] for i in fold]
        decisions, scores = fit_scored(inner_train, inner_test, seed)
        by_name = {d.name: d for d in decisions}
        for s in scores:
            for cand, picks in candidate_routes(by_name[s.name], s, inner_train, inner_test).items():
                per = routes.setdefault(s.name, {}).setdefault(cand, {})
                per.update({t.instance_id: r for t, r in zip(inner_test, picks, strict=True)})
    singles = single_model_points(train, model_ids)
    out: dict[str, list[SafeCandidate]] = {}
    for name, cands in routes.items():
        out[name] = []
        for cand, by_task in cands.items():
            d = from_labels(cand, "local", {i: [r] for i, r in by_task.items()})
            m = compute_metrics(d, train, singles)
            gap = m.frontier.gap_vs_mix if m.frontier and m.frontier.gap_vs_mix is not None else NO_GAP
            out[name].append(
                SafeCandidate(
                    name=cand,
                    gap=rounded(gap),
                    cost_per_task=rounded(m.mean_cost),
                    resolved=rounded(m.resolved_rate),
                )
            )
    return out


DEFAULT_CANDIDATES = ("router", "cheapest")
"""The candidates the default point is chosen from (the dial points' estimates gate `--budget` / `--dial`)."""


def choose(
    candidates: Sequence[SafeCandidate],
    scores: RouterScores,
    train: Sequence[TaskRecord],
    margins: Margins,
) -> SafePoint:
    """The default point of a router fitted on `train` (`scores`: its scores there) from the estimates:
    its native route if above `margins.default`, else the cheapest model. Every candidate is stored, each
    dial point with the dial this fit's own calibration gives its share (`SafeCandidate.dial`), and both
    margins (a budget is later honoured at `margins.dial`)."""
    if not candidates:
        return SafePoint(choice="router", inner_folds=0, margin=margins.default, dial_margin=margins.dial)
    point = SafePoint(
        choice="router",
        inner_folds=INNER_FOLDS,
        candidates=with_dials(candidates, scores, train),
        margin=margins.default,
        dial_margin=margins.dial,
    )
    if keeps_native(candidates, margins.default):
        return point
    model = scores.model_ids[cheapest_index(train, scores.model_ids)]
    return point.model_copy(update={"choice": "cheapest", "model": model})


def keeps_native(candidates: Sequence[SafeCandidate], margin: float) -> bool:
    """The default rule: the native route when its estimate is the best of `DEFAULT_CANDIDATES` (ties to
    it) and above `margin`; else the cheapest model."""
    defaults = [c for c in candidates if c.name in DEFAULT_CANDIDATES]
    best = max(defaults, key=lambda c: (c.gap, c.name == "router"))
    return best.name == "router" and best.gap > margin


def with_dials(
    candidates: Sequence[SafeCandidate], scores: RouterScores, train: Sequence[TaskRecord]
) -> list[SafeCandidate]:
    """`candidates` with each dial point's dial on `scores`' own calibration on `train` (what a budget or
    dial asked of this fit is compared with)."""
    shares = [float(c.name.split(":", 1)[1]) for c in candidates if c.name.startswith("dial:")]
    if not shares or len(scores.train) == 0:
        return list(candidates)
    dials = iter(share_dials(scores, train, shares))
    return [
        c.model_copy(update={"dial": rounded(next(dials))}) if c.name.startswith("dial:") else c
        for c in candidates
    ]


def dial_estimate(point: SafePoint, dial: float) -> SafeCandidate | None:
    """The inner estimate at `dial` of the fit that stored `point`: the dial point at that dial, or between
    two, the worse of the two (None: no dial point stored, an older checkpoint)."""
    grid = sorted((c for c in point.candidates if c.dial is not None), key=lambda c: c.dial or 0.0)
    if not grid:
        return None
    if dial <= (grid[0].dial or 0.0):
        return grid[0]
    for lo, hi in itertools.pairwise(grid):
        if dial <= (hi.dial or 0.0):
            return hi if dial == hi.dial else min(lo, hi, key=lambda c: c.gap)
    return grid[-1]


def share_estimate(point: SafePoint, share: float) -> SafeCandidate | None:
    """The inner estimate of the dial point at `share` (None: not estimated)."""
    return next((c for c in point.candidates if c.name == f"dial:{share:g}"), None)


def known_gap(estimate: SafeCandidate) -> float | None:
    """A candidate's gap to the mix (a fraction), None where it has none (stored as `NO_GAP`)."""
    return None if estimate.gap <= NO_GAP else estimate.gap


def honoured(estimate: SafeCandidate, margin: float) -> bool:
    """A dial point is routed at only when its inner estimate beats the mix by more than `margin`."""
    return estimate.gap > margin


def default_margin(point: SafePoint) -> float:
    """The margin the fit that stored `point` chose its default by (`MARGIN` for an older file)."""
    return MARGIN if point.margin is None else point.margin


def dial_margin(point: SafePoint) -> float:
    """The margin a budget or dial on the fit that stored `point` must beat (`DIAL_MARGIN` for a file
    that predates per-kind margins: the rule it was fitted under)."""
    return DIAL_MARGIN if point.dial_margin is None else point.dial_margin


def apply_point(
    point: SafePoint,
    decisions: Decisions,
    scores: RouterScores,
    train: Sequence[TaskRecord],
    test: Sequence[TaskRecord],
) -> Decisions:
    """`decisions` (the router's native routes of `test`) moved to `point` (`choose` gives native or
    cheapest)."""
    if point.choice == "router":
        return decisions
    assert point.choice == "cheapest" and point.model is not None
    picks: list[str | None] = [point.model] * len(test)
    labels = {t.instance_id: [r] for t, r in zip(test, picks, strict=True)}
    return from_labels(decisions.name, decisions.kind, labels, source=decisions.source)


def safe_points(
    fit_scored: FitScored,
    train: Sequence[TaskRecord],
    model_ids: Sequence[str],
    seed: int,
    scores: Sequence[RouterScores],
    margins: Margins,
) -> dict[str, SafePoint]:
    """Router name -> its default point under `margins`, for each router of `scores` (fitted on `train`)."""
    estimates = estimate(fit_scored, train, model_ids, seed)
    return {s.name: choose(estimates.get(s.name, []), s, train, margins) for s in scores}


@dataclass(frozen=True)
class SafePointFitter:
    """A fitter (`scoring.fitter.Fitter` with `fit_scored`) whose routers route at their safe default point:
    `inner`'s fits, each moved to the point `safe_points` chooses on the fit's train tasks. Routers
    without scores (`cheapest-on-train`) are passed through; the scores (the cost dial) are unchanged."""

    inner: object
    """The wrapped fitter; it has `fit_scored`."""
    model_ids: tuple[str, ...]
    """The pool's model ids."""
    margins: Margins
    """The wrapped kind's margins (`fitting.Fit.margins`)."""

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return self.fit_scored(train, test, seed)[0]

    def fit_scored(
        self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        fit: FitScored = self.inner.fit_scored  # type: ignore[attr-defined]
        decisions, scores = fit(train, test, seed)
        points = safe_points(fit, train, self.model_ids, seed, scores, self.margins)
        by_name = {s.name: s for s in scores}
        moved = [
            apply_point(points[d.name], d, by_name[d.name], train, test) if d.name in points else d
            for d in decisions
        ]
        return moved, [replace(s, safe_point=points[s.name]) for s in scores]


def with_safe_point(fitter: object, model_ids: Sequence[str], margins: Margins) -> object:
    """`fitter` at its safe default point under `margins` when it gives scores (`fit_scored`), else
    `fitter` itself."""
    if getattr(fitter, "fit_scored", None) is None:
        return fitter
    return SafePointFitter(fitter, tuple(model_ids), margins)


def checkpoint_safe_point(
    fit_scored: FitScored,
    name: str,
    train: Sequence[TaskRecord],
    model_ids: Sequence[str],
    train_scores: np.ndarray,
    seed: int,
    margins: Margins,
) -> SafePoint:
    """The default point a checkpoint stores for its router `name` fitted on `train` (`train_scores`: its
    dial scores there, columns `model_ids`) under its kind's `margins`: `safe_points` with `fit_scored`
    re-fitting it per inner fold, exactly as `evaluate` chooses it for each of its fits."""
    empty = np.zeros((0, len(model_ids)))
    scores = RouterScores(name, list(model_ids), np.asarray(train_scores, dtype=float), empty)
    return safe_points(fit_scored, train, model_ids, seed, [scores], margins)[name]


def safe_point_notes(scores: Sequence[Sequence[RouterScores]]) -> list[str]:
    """One report note per router that routed at a safe point: how many of its fits (partitions) chose
    each kind of default point."""
    counts: dict[str, dict[str, int]] = {}
    for partition in scores:
        for s in partition:
            if s.safe_point is not None:
                per = counts.setdefault(s.name, {"router": 0, "dial": 0, "cheapest": 0})
                per[s.safe_point.choice] += 1
    return [
        f"{name}: default point chosen per fit on its train tasks (--no-safe-point: native): native route "
        f"in {c['router']}, a cost-dial point in {c['dial']}, always the cheapest model in {c['cheapest']} "
        f"of {sum(c.values())} fits"
        for name, c in counts.items()
    ]
