"""`train_any_pool`: GRPO of the pool-agnostic router on explicit train tasks and models, in memory.

The loop is the local trainer's, with its primitives (`local.grpo`: sampling, group-normalised
advantages, AdamW, gradient clipping) and the env's own scoring (`score_completion` of the completion
`<route>ID</route>` against the task's row under its pool). What is new is where pools come from:

1. a bank of `pool_bank` pools is drawn from `model_ids` (`pool_draw.draw_pool`, sizes cycling through
   `pool_sizes`); each pool's capability summary is computed on the train tasks (`any_pool.pool_view`);
2. each step draws `tasks_per_step` train tasks (epoch by epoch) and gives each a random pool of the bank;
3. with the IRT inputs (`FeatureConfig.irt`), an IRT fit on the train tasks' rows of every run
   (`irt_inputs.fit_anypool_irt`) adds each pool model's predicted resolve probability on the task to its
   model features;
4. per (task, pool) it samples `samples_per_task` routes, scores them, normalises rewards in the group
   and takes one AdamW step on the policy gradient of the bilinear score (`policy.AnyPoolPolicy`).

Nothing is written: the caller gets the policy and the per-step metrics (the lead's cross-validation
trains one per fold); `run.run_any_pool` is the command-line run that writes files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from router_frontier_rl.any_pool import pool_view
from router_frontier_rl.pool_draw import draw_pool
from router_frontier_rl.rewards import REWARD_NAMES, RouteScores, score_route
from router_frontier_rl.route_parser import format_route, parse_route
from router_oracle.derive import CandidateIndex
from router_oracle.table import Pool, TaskRecord
from router_train.anypool.config import AnyPoolError, AnyPoolTrainConfig
from router_train.anypool.irt_inputs import (
    AnyPoolIrtState,
    check_train_tasks,
    fit_anypool_irt,
    irt_model_columns,
    model_probabilities,
    pool_columns,
    task_side,
)
from router_train.anypool.model_features import MODEL_FEATURES, PoolFeatureCache
from router_train.anypool.policy import AnyPoolPolicy, model_feature_names
from router_train.local.features import feature_dim, featurize, fit_features
from router_train.local.grpo import AdamW, GRPOStep, grpo_step, task_batches
from router_train.local.grpo_run import GrpoAdapter, run_grpo
from router_train.local.policy import softmax
from router_train.local.row_batch import take_rows
from router_train.local.step_metrics import StepMetrics, step_record

SCORE_FIELDS = len(REWARD_NAMES)

ScoreCache = dict[tuple[tuple[float, ...], tuple[str, ...], str], np.ndarray]
"""(reward weights, pool ids, task id) -> the env's scores of routing the task to each pool model
(`train_any_pool`'s table rows); never mutated once stored."""


@dataclass
class _BankPool:
    """One training pool: its ids, its features per repository, its scores per (task, model) lazily."""

    pool: Pool
    ids: list[str]
    features: PoolFeatureCache
    scores: dict[str, np.ndarray]
    """task id -> (pool size, SCORE_FIELDS + 1): the env's five scores per model, then the weighted reward."""
    routes: list[str | None]
    """Per model, the route the env parses from its completion `format_route(model)` (the model)."""
    irt_columns: np.ndarray | None = None
    """With IRT inputs: each pool model's column in `irt_inputs.model_probabilities`."""


@dataclass(frozen=True)
class AnyPoolTrainResult:
    """What `train_any_pool` returns: the policy, and how training went."""

    policy: AnyPoolPolicy
    """The trained router."""
    metrics: list[StepMetrics]
    """One record per step (route_share is keyed by model id over all pools)."""
    train_task_ids: list[str]
    """The train tasks (GRPO tasks and the capability summaries' tasks), in the order given."""
    model_ids: list[str]
    """The models pools were drawn from."""
    bank_seconds: float
    """Wall time of drawing and summarising the pool bank."""
    seconds_per_step: float
    """Mean wall time of one GRPO step."""


def task_records(index: CandidateIndex, task_ids: Sequence[str]) -> list[TaskRecord]:
    """The tasks as rows (the features read only their repo and text; a one-model pool gives those)."""
    return index.records(index.pool(index.model_ids[:1]), task_ids)


def _weighted(scores: RouteScores, weights: tuple[float, ...]) -> list[float]:
    return [*(float(getattr(scores, n)) for n in REWARD_NAMES), scores.weighted(weights)]


def _check(
    index: CandidateIndex, train_task_ids: Sequence[str], model_ids: Sequence[str], cfg: AnyPoolTrainConfig
) -> None:
    if len(set(train_task_ids)) != len(train_task_ids) or not train_task_ids:
        raise AnyPoolError("train_task_ids must be non-empty and unique")
    if len(set(model_ids)) != len(model_ids):
        raise AnyPoolError(f"model_ids lists a model twice: {list(model_ids)}")
    index.pool(model_ids)  # unknown ids: a CandidatesError naming the table
    for t in train_task_ids:
        index.task(t)
    if max(cfg.pool_sizes) > len(model_ids):
        raise AnyPoolError(
            f"pool_sizes {cfg.pool_sizes} need at least {max(cfg.pool_sizes)} models, got {len(model_ids)}"
        )


def train_any_pool(
    index: CandidateIndex,
    train_task_ids: Sequence[str],
    model_ids: Sequence[str],
    cfg: AnyPoolTrainConfig | None = None,
    *,
    progress: bool = False,
    on_step: Callable[[StepMetrics], None] | None = None,
    score_cache: ScoreCache | None = None,
    irt: AnyPoolIrtState | None = None,
) -> AnyPoolTrainResult:
    """Train on `train_task_ids` with pools drawn from `model_ids`; capability summaries use the train
    tasks only. Deterministic: the same inputs and `cfg.seed` give the same weights. `cfg` defaults to
    `AnyPoolTrainConfig()`. `score_cache` keeps the env's route scores of each (pool, task) across runs
    that draw the same bank of pools (the evaluation's folds of one group: `SharedRows.route_scores`).
    With `cfg.features.irt`, `irt` is the IRT inputs' fit on exactly these train tasks, when the caller
    shares one (the evaluation fits one per task partition for every group); fitted here when None."""
    cfg = cfg or AnyPoolTrainConfig()
    _check(index, train_task_ids, model_ids, cfg)
    if irt is not None and not cfg.features.irt:
        raise AnyPoolError("an IRT fit was given, but the features do not ask for IRT inputs")
    weights_5 = tuple(float(getattr(cfg.reward, n)) for n in REWARD_NAMES)
    train_ids = list(train_task_ids)
    tasks = task_records(index, train_ids)
    task_cfg = task_side(cfg.features)
    state = fit_features(task_cfg, tasks)
    x_all = featurize(task_cfg, state, tasks)
    repos = [t.repo for t in tasks]
    if cfg.features.irt:
        irt = irt or fit_anypool_irt(index, train_ids)
        check_train_tasks(irt, train_ids)
    irt_p = model_probabilities(irt, tasks) if irt is not None else None

    t0 = time.perf_counter()
    bank = _bank(index, model_ids, train_ids, cfg, irt)
    bank_seconds = time.perf_counter() - t0
    scores = _BankScores(index, weights_5, {} if score_cache is None else score_cache)

    dim, d = feature_dim(task_cfg, state), len(model_feature_names(cfg.features))
    # Zero weights: every pool starts uniform, so the first samples explore every model.
    policy = AnyPoolPolicy(cfg.features, state, np.zeros((dim, d)), np.zeros(d), irt)
    opt = AdamW((dim, d), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    rng = np.random.default_rng(cfg.seed)

    step = _stepper(policy, opt, rng, cfg, bank, scores, x_all, repos, train_ids, irt, irt_p)

    def record(step: int, taken: tuple[np.ndarray, np.ndarray, GRPOStep]) -> StepMetrics:
        probs, picks, done = taken
        share: dict[str, float] = {}
        for r, pi in enumerate(picks):
            for a in done.actions[r]:
                mid = bank[int(pi)].ids[int(a)]
                share[mid] = share.get(mid, 0.0) + 1.0 / done.actions.size
        return step_record(step, probs, done, dict(sorted(share.items())))

    # No tail average: the last step's parameters, updated in place in `policy`, are the trained ones.
    adapter = GrpoAdapter((policy.weights, policy.bias), step, record)
    run = run_grpo(adapter, cfg.steps, progress=progress, desc="router-train local-anypool", on_step=on_step)
    return AnyPoolTrainResult(
        policy=policy,
        metrics=run.records,
        train_task_ids=train_ids,
        model_ids=list(model_ids),
        bank_seconds=bank_seconds,
        seconds_per_step=run.seconds_per_step,
    )


class _BankScores:
    """The env's route scores of each (bank pool, task), kept per pool and in `shared` across runs that
    draw the same bank of pools (`ScoreCache`)."""

    def __init__(self, index: CandidateIndex, weights_5: tuple[float, ...], shared: ScoreCache) -> None:
        self.index, self.weights_5, self.shared = index, weights_5, shared

    def __call__(self, p: _BankPool, task_id: str) -> np.ndarray:
        cached = p.scores.get(task_id)
        if cached is None:
            # A route's scores are a function of the pool's row of the task, the model and the weights.
            key = (self.weights_5, tuple(p.ids), task_id)
            cached = self.shared.get(key)
            if cached is None:
                record = self.index.records(p.pool, [task_id])[0]
                # `score_completion(record, format_route(m), p.ids)` is `score_route` of the route parsed
                # from that completion; the parse depends on the pool alone, so it is done once per pool.
                cached = np.asarray([_weighted(score_route(record, r), self.weights_5) for r in p.routes])
                self.shared[key] = cached
            p.scores[task_id] = cached
        return cached


def _bank(
    index: CandidateIndex,
    model_ids: Sequence[str],
    train_ids: list[str],
    cfg: AnyPoolTrainConfig,
    irt: AnyPoolIrtState | None,
) -> list[_BankPool]:
    """The bank of training pools, drawn from `model_ids` (seeded by `cfg.seed`), each with its view."""
    bank: list[_BankPool] = []
    for i in range(cfg.pool_bank):
        ids = draw_pool(
            list(model_ids), cfg.pool_sizes[i % len(cfg.pool_sizes)], seed=cfg.seed, key=f"bank-{i}"
        )
        pool, _, summary = pool_view(index, ids, train_ids)
        routes = [parse_route(format_route(m), pool.ids) for m in pool.ids]
        cols = pool_columns(irt, pool.ids) if irt is not None else None
        bank.append(_BankPool(pool, pool.ids, PoolFeatureCache(summary), {}, routes, cols))
    return bank


def _stepper(
    policy: AnyPoolPolicy,
    opt: AdamW,
    rng: np.random.Generator,
    cfg: AnyPoolTrainConfig,
    bank: list[_BankPool],
    scores: _BankScores,
    x_all: sp.csr_matrix,
    repos: list[str],
    train_ids: list[str],
    irt: AnyPoolIrtState | None,
    irt_p: np.ndarray | None,
) -> Callable[[], tuple[np.ndarray, np.ndarray, GRPOStep]]:
    """One GRPO step of the any-pool policy: a batch of tasks, each in a pool drawn from the bank."""
    batches = task_batches(len(train_ids), cfg.tasks_per_step, rng)
    k_max = max(cfg.pool_sizes)
    d, d_cap = policy.weights.shape[1], len(MODEL_FEATURES)

    def step() -> tuple[np.ndarray, np.ndarray, GRPOStep]:
        idx = next(batches)
        picks = rng.integers(len(bank), size=len(idx))
        n = len(idx)
        x = take_rows(x_all, idx)  # `batch_rows`, without a scipy matrix per step
        m = np.zeros((n, k_max, d))
        mask = np.zeros((n, k_max), dtype=bool)
        table = np.zeros((n, k_max, SCORE_FIELDS + 1))
        for r, (ti, pi) in enumerate(zip(idx, picks, strict=True)):
            p = bank[int(pi)]
            k = len(p.ids)
            m[r, :k, :d_cap] = p.features.matrix(repos[int(ti)])
            if irt is not None and irt_p is not None and p.irt_columns is not None:
                m[r, :k, d_cap:] = irt_model_columns(irt, irt_p[int(ti), p.irt_columns])
            mask[r, :k] = True
            table[r, :k] = scores(p, train_ids[int(ti)])
        u = x.matmul(policy.weights) + policy.bias  # `policy.task_vectors`
        probs = softmax(np.einsum("nkd,nd->nk", m, u), mask)

        def scores_of(actions: np.ndarray) -> dict[str, np.ndarray]:
            got = np.take_along_axis(table, actions[:, :, None], axis=1)  # (n, samples, fields)
            return {
                "reward": got[:, :, SCORE_FIELDS],
                **{f: got[:, :, i] for i, f in enumerate(REWARD_NAMES)},
            }

        def backprop(g_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            g_u = np.einsum("nk,nkd->nd", g_scores, m)  # scores = m @ u, u = x @ weights + bias
            return x.t_matmul(g_u), g_u.sum(axis=0)

        done = grpo_step(
            probs,
            scores_of,
            backprop,
            (policy.weights, policy.bias),
            opt,
            rng,
            cfg,
            choices=mask.sum(axis=1, keepdims=True),
        )
        return probs, picks, done

    return step
