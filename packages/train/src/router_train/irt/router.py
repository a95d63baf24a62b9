"""The IRT router: fit on train tasks x ALL runs, predict each pool model's resolve probability and cost on
unseen tasks from what a router sees, route by the oracle's rule (best probability, near-ties to the
cheapest) or by `P - lambda x cost` (the dial).

Every choice is made on the train tasks alone: the ability dimension k, the text ridge's alpha and the
logit temperature by inner cross-validation (held-out log-likelihood of every run's outcome), then the
near-tie tolerance by the vs-mix gap of the inner folds' routes. A routed task's own outcomes enter
nothing: its parameters come from its text only (tested by a fold spy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated

import numpy as np
from pydantic import Field, model_validator
from scipy.special import expit

from router_frontier_rl.split import stratified_folds
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Finite
from router_oracle.results_matrix import ResultsMatrix
from router_oracle.table import Pool, TaskRecord
from router_oracle.task_input import TaskInput
from router_train.irt.model import IrtParams, IrtPenalty, fit_irt
from router_train.irt.task_regressor import DualRidge, FeatureSpace, TaskRegressor
from router_train.scoring.decisions import from_labels
from router_train.scoring.dial import Price
from router_train.scoring.metrics import compute_metrics, single_model_points
from router_train.task_features import FeatureScaling


class IrtConfig(FrozenModel):
    """Search grids and fixed settings of the IRT router (every grid is searched on train tasks only)."""

    dims: tuple[int, ...] = (0, 1, 2)
    """Ability dimensions k tried (0: Rasch, 1: 2PL with run intercept)."""
    alphas: tuple[float, ...] = (1.0, 3.0, 10.0)
    """Ridge penalties of the text regressor tried."""
    temperatures: tuple[float, ...] = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0)
    """Logit temperatures tried (predicted parameters are uncertain: probabilities shrink toward 1/2)."""
    tolerances: tuple[float, ...] = (0.0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3)
    """Near-tie tolerances tried: models within this of the best probability count as tied (cheapest wins)."""
    inner_folds: int = 5
    """Inner cross-validation folds over the train tasks."""
    penalty_theta: float = 1.0
    """Ridge weight on the run abilities."""
    penalty_a: float = 1.0
    """Ridge weight on the task discriminations."""


Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
"""A finite number above 0."""
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A finite number, 0 or more."""


class IrtFit(FrozenModel):
    """A fitted IRT router, plain data (what a checkpoint stores). Every number is finite and every
    array's shape agrees with `run_ids`, `k` and the feature space, checked when read: a NaN ability or
    weight would route every task to one model, a shortened array would fail deep in numpy. Every file
    that carries a fit (the `irt` checkpoint, a local or any-pool router's IRT inputs) is read through
    this one model, and `check_fit_pool` checks it against the pool it routes."""

    run_ids: list[str]
    """Runs whose abilities were fitted (every run of the results matrix)."""
    k: int = Field(ge=0)
    """Ability dimension chosen."""
    alpha: Positive
    """Text ridge penalty chosen."""
    temperature: Positive
    """Logit temperature chosen (0 would saturate the probabilities, a negative one flip them)."""
    tolerance: NonNegative
    """Near-tie tolerance chosen."""
    theta: list[list[Finite]]
    """(runs, k) abilities."""
    c: list[Finite]
    """(runs,) intercepts."""
    run_costs: list[Price]
    """Each run's mean cost per train task, USD: the cost prediction."""
    vocabulary: list[str]
    """TF-IDF vocabulary."""
    idf: list[Finite]
    """TF-IDF idf."""
    repos: list[str]
    """Repositories of the one-hot block."""
    x_mean: list[Finite]
    """Feature means of the regressor."""
    w: list[list[Finite]]
    """(features, k + 1) regressor weights to (a_1..a_k, b)."""
    y_mean: list[Finite]
    """(k + 1) target means."""
    task_features: FeatureScaling | None = None
    """The pre-pass task features the regressor reads after the issue length (`--task-features`: their
    columns and standardisation on the train tasks); routing needs them for every task. None: text only."""
    n_train_tasks: int
    """Train tasks it was fitted on."""
    inner_log_loss: dict[str, float]
    """Inner-CV log-loss per `k=..,alpha=..` setting (at its best temperature)."""

    @model_validator(mode="after")
    def _shapes(self) -> IrtFit:
        runs, k = len(self.run_ids), self.k
        if not runs or len(set(self.run_ids)) != runs:
            raise ValueError("run_ids must name at least one run, each once")
        # `FeatureSpace.matrix`: words, repos, length, task features.
        extra = 0 if self.task_features is None else len(self.task_features.columns)
        features = len(self.vocabulary) + len(self.repos) + 1 + extra
        shapes: tuple[tuple[str, list[float] | list[list[float]], tuple[int, ...], str], ...] = (
            ("theta", self.theta, (runs, k), "runs x k"),
            ("c", self.c, (runs,), "runs"),
            ("run_costs", self.run_costs, (runs,), "runs"),
            ("idf", self.idf, (len(self.vocabulary),), "vocabulary"),
            ("x_mean", self.x_mean, (features,), "vocabulary + repos + 1 + task features"),
            ("w", self.w, (features, k + 1), "(vocabulary + repos + 1 + task features) x (k + 1)"),
            ("y_mean", self.y_mean, (k + 1,), "k + 1"),
        )
        for name, values, want, what in shapes:
            ok = len(values) == want[0]
            if len(want) == 2:
                ok = ok and all(isinstance(row, list) and len(row) == want[1] for row in values)
            if not ok:
                size = " x ".join(map(str, want))
                raise ValueError(f"{name} must be {size} ({what}) for these run_ids, k and vocabulary")
        return self


def check_fit_pool(fit: IrtFit, pool: Pool) -> None:
    """The fit has every run of every pool model (a model's prediction is the mean of its runs'): the one
    check of a stored fit against the pool it routes."""
    known = set(fit.run_ids)
    for m in pool.models:
        missing = [r for r in m.runs if r not in known]
        if missing:
            raise ValueError(f"fit.run_ids has no run {missing[0]!r} of the pool model {m.id!r}")


class IrtDataError(ValueError):
    """A results matrix that does not cover the pool's runs or the tasks to fit on."""


def check_covered(matrix: ResultsMatrix, pool: Pool, tasks: Sequence[TaskRecord]) -> None:
    """The results matrix has every pool run and every train task (one line naming what is missing)."""
    runs = set(matrix.run_ids)
    missing = [r for m in pool.models for r in m.runs if r not in runs]
    if missing:
        raise IrtDataError(f"{matrix.origin}: the results matrix has no run {missing[0]!r} of the pool")
    rows = set(matrix.task_ids)
    absent = [t.instance_id for t in tasks if t.instance_id not in rows]
    if absent:
        raise IrtDataError(f"{matrix.origin}: the results matrix has no task {absent[0]!r} of the table")


class IrtTooFewTasks(ValueError):
    """Too few train tasks for the IRT router's inner cross-validation."""


def check_enough_tasks(n_train: int, config: IrtConfig, where: str) -> None:
    """The one rule for how many train tasks an IRT fit needs: one per inner fold at least. `where` names
    the file and the flags that gave `n_train` (the user's numbers, not the inner folds')."""
    if n_train < config.inner_folds:
        raise IrtTooFewTasks(
            f"{where}: the IRT fit would get {n_train} train task(s), but its inner cross-validation "
            f"needs at least {config.inner_folds}; give a bigger table or keep more tasks for training"
        )


@dataclass(frozen=True)
class _Predictor:
    """What predicts logits for unseen tasks: run abilities, feature space, regressor."""

    params: IrtParams
    space: FeatureSpace
    reg: TaskRegressor

    def logits(self, tasks: Sequence[TaskInput], reg: TaskRegressor | None = None) -> np.ndarray:
        ab = (reg or self.reg).predict(self.space.matrix(tasks))
        k = self.params.k
        out: np.ndarray = ab[:, :k] @ self.params.theta.T + self.params.c[None, :] - ab[:, k][:, None]
        return out


def _targets(p: IrtParams) -> np.ndarray:
    return np.hstack([p.a, p.b[:, None]])


def _fit_params(y: np.ndarray, k: int, cfg: IrtConfig, seed: int) -> IrtParams:
    return fit_irt(y, k, penalty=IrtPenalty(theta=cfg.penalty_theta, a=cfg.penalty_a), seed=seed)


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    q = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))


def inner_logits(
    tasks: Sequence[TaskRecord],
    y: np.ndarray,
    cfg: IrtConfig,
    seed: int,
    embeddings: Mapping[str, np.ndarray] | None = None,
    task_features: str | None = None,
) -> dict[tuple[int, float], np.ndarray]:
    """Out-of-fold logits (tasks, runs) of every train task per (k, alpha): each inner fold's tasks are
    predicted from their text (and task features) by a model fitted on the other inner folds only."""
    out = {(k, al): np.zeros(y.shape) for k in cfg.dims for al in cfg.alphas}
    pos = {t.instance_id: i for i, t in enumerate(tasks)}
    for held_ids in stratified_folds(tasks, cfg.inner_folds, seed):
        held = np.asarray([pos[i] for i in held_ids])
        keep = np.setdiff1d(np.arange(len(tasks)), held)
        fit_tasks = [tasks[i] for i in keep]
        held_tasks = [tasks[i] for i in held]
        space = FeatureSpace.fit(fit_tasks, embeddings, task_features)
        ridge = DualRidge.of(space.matrix(fit_tasks))
        xh = space.matrix(held_tasks)
        for k in cfg.dims:
            params = _fit_params(y[keep], k, cfg, seed)
            for al in cfg.alphas:
                reg = ridge.regressor(_targets(params), al)
                ab = reg.predict(xh)
                out[(k, al)][held] = ab[:, :k] @ params.theta.T + params.c[None, :] - ab[:, k][:, None]
    return out


def pool_probabilities(run_p: np.ndarray, run_ids: Sequence[str], pool: Pool) -> np.ndarray:
    """(tasks, pool models): each model's resolve probability = the mean of its runs' (runs are rollouts)."""
    col = {r: j for j, r in enumerate(run_ids)}
    return np.stack([run_p[:, [col[r] for r in m.runs]].mean(axis=1) for m in pool.models], axis=1)


def near_tie_routes(p: np.ndarray, costs: np.ndarray, tolerance: float) -> np.ndarray:
    """Column per task: among models within `tolerance` of the best probability, the cheapest (ties: the
    earlier column). Tolerance 0 is the oracle's rule on predicted rates."""
    ok = p >= p.max(axis=1, keepdims=True) - tolerance - 1e-12
    priced = np.where(ok, costs[None, :], np.inf)
    out: np.ndarray = np.argmin(priced, axis=1)
    return out


def near_tie_scores(p: np.ndarray, tolerance: float) -> np.ndarray:
    """Per task, the probabilities capped at the near-tie level (best - `tolerance`): every model within
    `tolerance` of the best scores the same, so with columns in ascending cost the argmax (first of ties) is
    `near_tie_routes`' pick, and `score - lambda x cost` is the dial (lambda 0: the oracle's rule)."""
    out: np.ndarray = np.minimum(p, p.max(axis=1, keepdims=True) - tolerance - 1e-12)
    return out


def _gap(tasks: Sequence[TaskRecord], pool_ids: Sequence[str], picks: np.ndarray) -> float:
    d = from_labels(
        "inner", "local", {t.instance_id: [pool_ids[j]] for t, j in zip(tasks, picks, strict=True)}
    )
    m = compute_metrics(d, tasks, single_model_points(tasks, pool_ids))
    return m.frontier.gap_vs_mix if m.frontier and m.frontier.gap_vs_mix is not None else -np.inf


def predictor_of(fit: IrtFit, task_features: str | None = None) -> _Predictor:
    """The predictor an `IrtFit` stores (as read back from a checkpoint; no embedding block), reading routed
    tasks' features from `task_features` (None: the file it was fitted with) when it was fitted on them."""
    k = fit.k
    theta = np.asarray(fit.theta, dtype=np.float64).reshape(len(fit.run_ids), k)
    params = IrtParams(theta=theta, c=np.asarray(fit.c), a=np.zeros((0, k)), b=np.zeros(0))
    space = FeatureSpace(
        tuple(fit.vocabulary),
        tuple(fit.idf),
        tuple(fit.repos),
        task_features=fit.task_features,
        task_features_source=task_features,
    )
    w = np.asarray(fit.w, dtype=np.float64).reshape(len(fit.x_mean), k + 1)
    reg = TaskRegressor(x_mean=np.asarray(fit.x_mean), w=w, y_mean=np.asarray(fit.y_mean))
    return _Predictor(params, space, reg)


@dataclass(frozen=True)
class FittedIrtRouter:
    """A fitted router: the data (`fit`) and its predictor."""

    fit: IrtFit
    predictor: _Predictor
    train_p: np.ndarray
    """(train tasks, runs) out-of-fold resolve probabilities (the dial's calibration scores)."""

    @classmethod
    def from_fit(cls, fit: IrtFit, task_features: str | None = None) -> FittedIrtRouter:
        """A router from its stored parameters (routing only: no train-task scores); `task_features`: where
        routed tasks' features are read, for a fit on them (None: the file it was fitted with)."""
        predictor = predictor_of(fit, task_features)
        return cls(fit=fit, predictor=predictor, train_p=np.zeros((0, len(fit.run_ids))))

    def run_probabilities(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        """(tasks, runs) predicted resolve probabilities, from each task's text only."""
        return expit(self.predictor.logits(tasks) / self.fit.temperature)

    def pool_costs(self, pool: Pool) -> np.ndarray:
        """Predicted cost of each pool model: the mean over its runs of their mean train cost."""
        col = {r: j for j, r in enumerate(self.fit.run_ids)}
        rc = np.asarray(self.fit.run_costs)
        return np.asarray([rc[[col[r] for r in m.runs]].mean() for m in pool.models])

    def route(self, tasks: Sequence[TaskInput], pool: Pool, tolerance: float | None = None) -> list[str]:
        """The oracle rule on predicted rates, near-ties (the chosen tolerance) to the cheapest."""
        p = pool_probabilities(self.run_probabilities(tasks), self.fit.run_ids, pool)
        tol = self.fit.tolerance if tolerance is None else tolerance
        return [pool.ids[j] for j in near_tie_routes(p, self.pool_costs(pool), tol)]


def fit_irt_router(
    train: Sequence[TaskRecord],
    matrix: ResultsMatrix,
    pool: Pool,
    *,
    config: IrtConfig | None = None,
    seed: int = 0,
    embeddings: Mapping[str, np.ndarray] | None = None,
    task_features: str | None = None,
) -> FittedIrtRouter:
    """Fit on the `train` tasks' rows of `matrix` (every run), choosing every setting by inner CV; with
    `task_features` (a `--task-features` file or bundled name) the regressor reads them beside the text."""
    cfg = config or IrtConfig()
    check_enough_tasks(len(train), cfg, "the train tasks")  # callers check first, naming the file and flags
    check_covered(matrix, pool, train)
    train = sorted(train, key=lambda t: t.instance_id)
    rows = matrix.rows([t.instance_id for t in train])
    y = matrix.resolved[rows].astype(np.float64)
    oof = inner_logits(train, y, cfg, seed, embeddings, task_features)
    scored: dict[tuple[int, float, float], float] = {}
    for (k, al), z in oof.items():
        for tau in cfg.temperatures:
            scored[(k, al, tau)] = _log_loss(expit(z / tau), y)
    k, alpha, tau = min(scored, key=lambda key: (scored[key], key))
    best_by_setting = {
        f"k={kk},alpha={aa}": round(min(v for (k2, a2, _), v in scored.items() if (k2, a2) == (kk, aa)), 6)
        for kk in cfg.dims
        for aa in cfg.alphas
    }
    run_costs = matrix.cost[rows].mean(axis=0)
    train_p = expit(oof[(k, alpha)] / tau)
    pool_p = pool_probabilities(train_p, matrix.run_ids, pool)
    col = {r: j for j, r in enumerate(matrix.run_ids)}
    costs = np.asarray([run_costs[[col[r] for r in m.runs]].mean() for m in pool.models])
    gaps = {tol: _gap(train, pool.ids, near_tie_routes(pool_p, costs, tol)) for tol in cfg.tolerances}
    tolerance = max(cfg.tolerances, key=lambda t: (gaps[t], -t))
    params = _fit_params(y, k, cfg, seed)
    space = FeatureSpace.fit(train, embeddings, task_features)
    reg = DualRidge.of(space.matrix(train)).regressor(_targets(params), alpha)
    fit = IrtFit(
        run_ids=list(matrix.run_ids),
        k=k,
        alpha=alpha,
        temperature=tau,
        tolerance=tolerance,
        theta=params.theta.tolist(),
        c=params.c.tolist(),
        run_costs=run_costs.tolist(),
        vocabulary=list(space.vocabulary),
        idf=list(space.idf),
        repos=list(space.repos),
        x_mean=reg.x_mean.tolist(),
        w=reg.w.tolist(),
        y_mean=reg.y_mean.tolist(),
        task_features=space.task_features,
        n_train_tasks=len(train),
        inner_log_loss=best_by_setting,
    )
    return FittedIrtRouter(fit=fit, predictor=_Predictor(params, space, reg), train_p=train_p)
