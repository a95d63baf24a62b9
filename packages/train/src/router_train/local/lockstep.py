"""Many GRPO trainings of the local router at once, each bitwise what `trainer.fit_policy` gives alone.

Cross-validation fits the local router on every partition of a pool, and each fit is six trainings (five
for the prior shift's cross-fitting, then the final one). Alone, a training of 600 small steps spends
most of its time in the per-call cost of small numpy operations. `fit_policies` runs all trainings of
one stage in lockstep: per step, one batch of rows holds every training's tasks (each training's
features in its own block of columns, its weights in its own block of rows of one matrix), so the
products, the softmax, the sampling comparisons, the advantages and the logit gradients are a handful of
calls for all of them. Nothing is shared between trainings that could change a number:

- each training keeps its own generator (seeded as alone), drawing its batch and then its samples in
  the order `trainer._grpo` does;
- every operation is row-wise (a row is one task of one training) or elementwise, and sums run over
  the same entries in the same order as alone (scipy's kernels over each row's entries; a weight's
  gradient over its own training's rows only, in batch order);
- the logit gradient divides by each training's own batch size; one AdamW steps the stacked weights,
  which is each training's own AdamW on its block (the update is elementwise, and every training is at
  the same step with the same settings); gradient clipping, where on, scales each training's block by
  its own norm.

The results are the same floats as `fit_policy(cfg, train, pool).policy` (tests check the bytes); what
is not produced are the per-step records, which only `router-train local` writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from router_frontier_rl.split import stratified_folds, upsampled
from router_oracle.table import TaskRecord
from router_train.local import kernels
from router_train.local.config import LocalTrainConfig, LocalTrainError
from router_train.local.features import feature_dim, featurize, fit_features, unique_tasks
from router_train.local.grpo import AdamW, clip_grad_norm, group_advantages, task_batches
from router_train.local.grpo_run import GrpoAdapter, run_grpo
from router_train.local.policy import RouterPolicy, softmax
from router_train.local.row_batch import take_rows
from router_train.local.trainer import (
    MIN_TASKS_PER_SHIFT_FOLD,
    _log_prior,
    cross_fitted_shift,
    reward_weights,
    score_table,
)


@dataclass
class _Run:
    """One training's own state (as `trainer._grpo` keeps it)."""

    policy: RouterPolicy
    task_rows: np.ndarray
    """Epoch position -> the row of its distinct task, offset into the stacked matrix."""
    batches: Iterator[np.ndarray]
    rng: np.random.Generator
    cols: slice
    """Its rows of the stacked weight matrix (its feature columns in the stacked feature matrix)."""


def grpo_policies(
    cfg: LocalTrainConfig,
    train_sets: Sequence[Sequence[TaskRecord]],
    pool_ids: Sequence[str],
    bias_shifts: Sequence[np.ndarray | None],
) -> list[RouterPolicy]:
    """`trainer._grpo(cfg, list(train), pool_ids, (), False, None, shift, keep_records=False).policy`
    for each (train, shift), computed in lockstep."""
    pool_ids = list(pool_ids)
    k = len(pool_ids)
    batch, samples = cfg.tasks_per_step, cfg.samples_per_task

    runs, blocks, rewards, col_off = _prepare_runs(cfg, train_sets, pool_ids)
    n_runs = len(runs)
    if not n_runs:
        return []
    x_all = _stack_rows(blocks, col_off)
    reward_of = np.vstack(rewards)
    weights = np.zeros((col_off, k))
    bias = np.zeros((n_runs, k))
    for i, run in enumerate(runs):
        run.policy.weights, run.policy.bias = weights[run.cols], bias[i]
    scale = batch * samples  # each training's `logits_gradient` mean, over its own batch

    # One AdamW over the stacked weights: every training steps at the same count with the same settings,
    # and the update is elementwise, so this is each training's own AdamW on its block.
    opt = AdamW((col_off, k), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay, shape_b=(n_runs, k))
    grad_w = np.zeros((col_off, k))
    grad_b = np.zeros((n_runs, k))

    def step() -> None:
        rows = np.concatenate([run.task_rows[next(run.batches)] for run in runs])
        x = take_rows(x_all, rows)
        probs = softmax(x.matmul(weights) + np.repeat(bias, batch, axis=0))
        # `grpo.sample_actions` for each training with its own generator.
        u = np.concatenate([run.rng.random((batch, samples)) for run in runs])
        actions = kernels.inverse_cdf(probs, u)
        adv = group_advantages(reward_of[rows[:, None], actions], cfg.adv_eps, cfg.advantage)
        # `grpo.logits_gradient`, per training's batch.
        onehot_adv = kernels.scatter_columns(actions, adv, k)
        g_logits = -(onehot_adv - adv.sum(axis=1, keepdims=True) * probs) / scale
        x.t_matmul(g_logits, out=grad_w)
        for i, run in enumerate(runs):
            grad_b[i] = g_logits[i * batch : (i + 1) * batch].sum(axis=0)
            if cfg.max_grad_norm > 0:  # the norm itself feeds only the step records
                clip_grad_norm(grad_w[run.cols], grad_b[i], cfg.max_grad_norm)
        opt.step(weights, bias, grad_w, grad_b)

    trained_w, trained_b = run_grpo(
        GrpoAdapter((weights, bias), step), cfg.steps, average_tail=cfg.average_tail
    ).params
    out = []
    for i, (run, shift) in enumerate(zip(runs, bias_shifts, strict=True)):
        w, b = np.array(trained_w[run.cols]), np.array(trained_b[i])
        if shift is not None:
            b = b + shift
        out.append(RouterPolicy(pool_ids, cfg.features, run.policy.feature_state, w, b))
    return out


def _prepare_runs(
    cfg: LocalTrainConfig, train_sets: Sequence[Sequence[TaskRecord]], pool_ids: list[str]
) -> tuple[list[_Run], list[tuple[np.ndarray, np.ndarray, np.ndarray]], list[np.ndarray], int]:
    """Each training's run state, its features as a CSR block in its own columns, its rewards per
    distinct task and pool model; and the stacked column count."""
    k = len(pool_ids)
    weights_5 = reward_weights(cfg.reward)
    batch = cfg.tasks_per_step
    blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rewards: list[np.ndarray] = []
    runs: list[_Run] = []
    scored: dict[int, tuple[TaskRecord, list[float]]] = {}
    """id(row) -> (the row, kept alive so its id stays its own; its weighted reward per pool model)."""
    row_off = col_off = 0
    for train_tasks in train_sets:
        train_tasks = list(train_tasks)
        uniq = unique_tasks(train_tasks)
        epoch = upsampled(train_tasks, cfg.split_seed) if cfg.upsample else train_tasks
        state = fit_features(cfg.features, uniq, pool_ids)
        row_of = {t.instance_id: r for r, t in enumerate(uniq)}
        x_uniq = sp.csr_matrix(featurize(cfg.features, state, uniq))
        # A task's route scores are a function of its row and the pool: scored once for every training.
        missing = [t for t in uniq if id(t) not in scored]
        for t, row in zip(missing, score_table(missing, pool_ids), strict=True):
            scored[id(t)] = (t, [s.weighted(weights_5) for s in row])
        rewards.append(np.asarray([scored[id(t)][1] for t in uniq]))
        dim = feature_dim(cfg.features, state)
        # Zero weights, set to views of the stacked matrix below.
        policy = RouterPolicy(pool_ids, cfg.features, state, np.zeros((dim, k)), np.zeros(k))
        rng = np.random.default_rng(cfg.seed)
        runs.append(
            _Run(
                policy=policy,
                task_rows=row_off + np.asarray([row_of[t.instance_id] for t in epoch], dtype=np.int64),
                batches=task_batches(len(epoch), batch, rng),
                rng=rng,
                cols=slice(col_off, col_off + dim),
            )
        )
        # Its features in its own columns: each row keeps its entries, in order.
        blocks.append(
            (x_uniq.data, x_uniq.indices.astype(np.int64) + col_off, x_uniq.indptr.astype(np.int64))
        )
        row_off += len(uniq)
        col_off += dim
    return runs, blocks, rewards, col_off


def _stack_rows(blocks: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], n_cols: int) -> sp.csr_matrix:
    """CSR blocks given as (data, indices, indptr), their rows one after another (each row's entries
    kept in order), in a matrix of `n_cols` columns."""
    indptr = [np.zeros(1, dtype=np.int64)]
    at = 0
    for _, _, ptr in blocks:
        indptr.append(ptr[1:] + at)
        at += int(ptr[-1])
    return sp.csr_matrix(
        (
            np.concatenate([b[0] for b in blocks]),
            np.concatenate([b[1] for b in blocks]),
            np.concatenate(indptr),
        ),
        shape=(sum(len(b[2]) - 1 for b in blocks), n_cols),
    )


def fit_policies(
    cfg: LocalTrainConfig, train_sets: Sequence[Sequence[TaskRecord]], pool_ids: Sequence[str]
) -> list[RouterPolicy]:
    """`trainer.fit_policy(cfg, train, pool_ids).policy` for each train set: the prior shift's inner
    trainings of every set in one lockstep, then every final training in another."""
    pool_ids = list(pool_ids)
    plain = cfg.model_copy(update={"shift_folds": 0})
    inner_sets: list[list[TaskRecord]] = []
    plans: list[tuple[list[TaskRecord], list[list[TaskRecord]]] | None] = []
    for train_tasks in train_sets:
        uniq = unique_tasks(train_tasks)
        if not uniq:
            raise LocalTrainError("no train tasks to fit the local router on")
        if not cfg.shift_folds or len(uniq) < MIN_TASKS_PER_SHIFT_FOLD * cfg.shift_folds:
            plans.append(None)
            continue
        held_sets = []
        for fold in stratified_folds(uniq, cfg.shift_folds, cfg.seed):
            held = set(fold)
            inner_sets.append([t for t in train_tasks if t.instance_id not in held])
            held_sets.append([t for t in uniq if t.instance_id in held])
        plans.append((uniq, held_sets))
    inner = grpo_policies(plain, inner_sets, pool_ids, [None] * len(inner_sets))

    shifts: list[np.ndarray | None] = []
    at = 0
    for plan in plans:
        if plan is None:
            shifts.append(None)
            continue
        uniq, held_sets = plan
        n = len(held_sets)
        folds = zip(held_sets, inner[at : at + n], inner_sets[at : at + n], strict=True)
        at += n
        tau = cross_fitted_shift(uniq, folds, pool_ids)
        shifts.append(tau * _log_prior(uniq, pool_ids))
    # Without shift folds `fit_policy` trains with `cfg` itself; `plain` differs only in shift_folds,
    # which the training loop never reads.
    return grpo_policies(plain, [list(t) for t in train_sets], pool_ids, shifts)
