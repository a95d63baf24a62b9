"""GRPO for a linear softmax policy: the one step both local trainers run (`grpo_step`: the fixed-pool
router of `local/` and the any-pool router of `anypool/`, each supplying its probabilities, its scores
and the map from a gradient on its logits to one on its weights), and its parts: group advantages, the
policy gradient, AdamW."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from router_train.local import kernels
from router_train.local.config import Advantage


def group_advantages(rewards: np.ndarray, eps: float, estimator: Advantage = "mean") -> np.ndarray:
    """Per row (one task's group of samples): r - group mean, divided by (group std + eps) for `std`.

    Population std (ddof=0). Under either estimator a group whose samples all scored the same has zero
    advantage: it carries no signal about which route is better for that task. Without the division,
    a group whose rewards differ by a few cents (a cost term) gets advantages of a few cents, not +-1.
    """
    centred: np.ndarray = rewards - rewards.mean(axis=1, keepdims=True)
    if estimator == "mean":
        return centred
    out: np.ndarray = centred / (rewards.std(axis=1, keepdims=True) + eps)
    return out


def task_batches(n: int, size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Endless batches of `size` indices into `n` tasks: each epoch a fresh permutation, batches may
    straddle two epochs."""
    buf = np.empty(0, dtype=np.int64)
    while True:
        while len(buf) < size:
            buf = np.concatenate([buf, rng.permutation(n)])
        yield buf[:size]
        buf = buf[size:]


def batch_rows(x: sp.csr_matrix, rows: np.ndarray) -> sp.csr_matrix:
    """`x[rows]` for a CSR matrix: the same rows, entries and order, without scipy's general indexing,
    whose checks cost more than the copy on a 64-row batch (taken once per GRPO step)."""
    starts = x.indptr[rows]
    lengths = x.indptr[rows + 1] - starts
    indptr = np.zeros(len(rows) + 1, dtype=x.indptr.dtype)
    np.cumsum(lengths, out=indptr[1:])
    take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=x.indptr.dtype)
    return sp.csr_matrix((x.data[take], x.indices[take], indptr), shape=(len(rows), x.shape[1]))


def sample_actions(probs: np.ndarray, samples: int, rng: np.random.Generator) -> np.ndarray:
    """`samples` draws per row of `probs` (inverse CDF), shape (rows, samples), ints in [0, K)."""
    u = rng.random((probs.shape[0], samples))
    out: np.ndarray = kernels.inverse_cdf(np.ascontiguousarray(probs, dtype=np.float64), u)
    return out


def logits_gradient(probs: np.ndarray, actions: np.ndarray, advantages: np.ndarray) -> np.ndarray:
    """Gradient of the GRPO loss -mean(A * log pi(a | x)) over all samples, w.r.t. the logits (rows, K).

    d log pi(a | x) / d logits = onehot(a) - pi(x). On-policy with one update per batch, so the
    importance ratio is 1 and PPO-style clipping would never bind: it is left out.
    """
    n_tasks, n_samples = actions.shape
    adv = np.ascontiguousarray(advantages, dtype=np.float64)
    onehot_adv = kernels.scatter_columns(actions, adv, probs.shape[1])
    out: np.ndarray = -(onehot_adv - advantages.sum(axis=1, keepdims=True) * probs) / (n_tasks * n_samples)
    return out


def policy_gradient(
    x: sp.csr_matrix, probs: np.ndarray, actions: np.ndarray, advantages: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The GRPO loss's gradient w.r.t. (weights, bias) of the linear policy logits = x @ weights + bias."""
    g_logits = logits_gradient(probs, actions, advantages)
    grad_w = np.asarray(x.T @ g_logits)
    grad_b = g_logits.sum(axis=0)
    return grad_w, grad_b


class AdamW:
    """Adam with decoupled weight decay (on the weights only), for a (weights, bias) pair.

    Per element: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g g; p = p (1 - lr wd) - lr (m / c1) /
    (sqrt(v / c2) + eps), with the bias corrections c = 1 - b^t; the bias is not decayed. One compiled
    pass per array (`kernels.adamw`)."""

    def __init__(
        self,
        shape_w: tuple[int, int],
        lr: float,
        betas: tuple[float, float],
        weight_decay: float,
        eps: float = 1e-8,
        shape_b: tuple[int, ...] | None = None,
    ) -> None:
        """`shape_b`: the bias's shape, `(shape_w[1],)` unless given (a stack of biases)."""
        self.lr, self.betas, self.weight_decay, self.eps = lr, betas, weight_decay, eps
        self.m_w, self.v_w = np.zeros(shape_w), np.zeros(shape_w)
        shape_b = shape_b or (shape_w[1],)
        self.m_b, self.v_b = np.zeros(shape_b), np.zeros(shape_b)
        self.t = 0

    def step(self, w: np.ndarray, b: np.ndarray, grad_w: np.ndarray, grad_b: np.ndarray) -> None:
        """Update w and b (C-contiguous float64) in place."""
        self.t += 1
        b1, b2 = self.betas
        corrections = (1.0 - b1**self.t, 1.0 - b2**self.t)
        decay = 1.0 - self.lr * self.weight_decay  # p * 1.0 is p: no decay is the same loop
        for p, g, m, v, d in ((w, grad_w, self.m_w, self.v_w, decay), (b, grad_b, self.m_b, self.v_b, 1.0)):
            if not (p.flags.c_contiguous and p.dtype == np.float64):  # else a copy would be updated
                raise ValueError("AdamW updates C-contiguous float64 parameters only")
            flat_g = np.ascontiguousarray(g, dtype=np.float64).reshape(-1)
            flat = (p.reshape(-1), flat_g, m.reshape(-1), v.reshape(-1))
            kernels.adamw(*flat, self.betas, corrections, self.lr, self.eps, d)


def clip_grad_norm(grad_w: np.ndarray, grad_b: np.ndarray, max_norm: float) -> float:
    """Scale both gradients in place to a joint l2 norm of at most `max_norm` (0: no clip).

    Returns the norm before clipping."""
    norm = float(np.sqrt(np.sum(grad_w * grad_w) + np.sum(grad_b * grad_b)))
    if max_norm > 0 and norm > max_norm:
        scale = max_norm / norm
        grad_w *= scale
        grad_b *= scale
    return norm


@dataclass(frozen=True)
class GRPOStep:
    """What one GRPO step sampled and did."""

    actions: np.ndarray
    """(tasks, samples): the sampled choice of each sample, an index into its task's candidates."""
    scores: Mapping[str, np.ndarray]
    """Score name -> (tasks, samples) array: `reward` (the training reward) and the env's scores."""
    grad_norm: float
    """Global l2 norm of the gradient, before clipping."""


class GrpoKnobs(Protocol):
    """What `grpo_step` reads of a trainer's config (`LocalTrainConfig`, `AnyPoolTrainConfig`)."""

    @property
    def samples_per_task(self) -> int: ...
    @property
    def advantage(self) -> Advantage: ...
    @property
    def adv_eps(self) -> float: ...
    @property
    def max_grad_norm(self) -> float: ...


def grpo_step(
    probs: np.ndarray,
    scores_of: Callable[[np.ndarray], Mapping[str, np.ndarray]],
    backprop: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    params: tuple[np.ndarray, np.ndarray],
    opt: AdamW,
    rng: np.random.Generator,
    cfg: GrpoKnobs,
    choices: np.ndarray | None = None,
) -> GRPOStep:
    """One GRPO update of a softmax policy whose `probs` (tasks, K) the caller computed for a batch.

    Samples `cfg.samples_per_task` choices per task, scores them with `scores_of(actions)` (it must give
    `reward`), turns the rewards into group advantages, the gradient on the logits into one on `params`
    (weights, bias) with `backprop`, clips it and steps `opt`, updating `params` in place. `choices`
    (tasks, 1): each task's number of valid candidates where they differ (padded pools); a draw never
    lands past it.
    """
    actions = sample_actions(probs, cfg.samples_per_task, rng)
    if choices is not None:  # only float rounding of the cdf can land a draw past a pool's last model
        actions = np.minimum(actions, choices - 1)
    scores = scores_of(actions)
    adv = group_advantages(scores["reward"], cfg.adv_eps, cfg.advantage)
    grad_w, grad_b = backprop(logits_gradient(probs, actions, adv))
    grad_norm = clip_grad_norm(grad_w, grad_b, cfg.max_grad_norm)
    opt.step(*params, grad_w, grad_b)
    return GRPOStep(actions=actions, scores=scores, grad_norm=grad_norm)
