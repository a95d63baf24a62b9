"""Multidimensional IRT fitted by penalised maximum likelihood (scipy L-BFGS, analytic gradient).

    P(run j resolves task i) = sigmoid(a_i . theta_j + c_j - b_i)

`theta_j` (k dims) and `c_j` are run j's abilities, `a_i` (k dims) and `b_i` task i's discrimination and
difficulty. k = 0 is the Rasch model (c_j - b_i), k = 1 a 2PL with a run intercept. Ridge penalties fix the
scale (and keep a task every run resolved, or none did, finite). The start point is drawn from `seed`, and
L-BFGS is deterministic, so the same inputs give bitwise the same parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log1p

MAX_ITER = 500
"""L-BFGS iterations at most (400 tasks x 40 runs converge in well under 200)."""


@dataclass(frozen=True)
class IrtPenalty:
    """Ridge weights (per parameter, times its squared value) added to the negative log-likelihood."""

    theta: float = 1.0
    a: float = 1.0
    b: float = 0.1
    c: float = 0.01


@dataclass(frozen=True)
class IrtParams:
    """Fitted parameters: runs are columns of the results matrix, tasks its fitted rows."""

    theta: np.ndarray
    """(runs, k) abilities."""
    c: np.ndarray
    """(runs,) general ability (intercept)."""
    a: np.ndarray
    """(tasks, k) discriminations."""
    b: np.ndarray
    """(tasks,) difficulties."""

    @property
    def k(self) -> int:
        return int(self.theta.shape[1])


def logits(p: IrtParams) -> np.ndarray:
    """(tasks, runs) logits of the resolve probability."""
    out: np.ndarray = p.a @ p.theta.T + p.c[None, :] - p.b[:, None]
    return out


def _unpack(x: np.ndarray, n: int, r: int, k: int) -> IrtParams:
    i = 0
    a = x[i : i + n * k].reshape(n, k)
    i += n * k
    theta = x[i : i + r * k].reshape(r, k)
    i += r * k
    b = x[i : i + n]
    c = x[i + n : i + n + r]
    return IrtParams(theta=theta, c=c, a=a, b=b)


def objective(
    x: np.ndarray, y: np.ndarray, mask: np.ndarray, k: int, pen: IrtPenalty
) -> tuple[float, np.ndarray]:
    """Penalised negative log-likelihood and its gradient at the flat parameter vector `x`."""
    n, r = y.shape
    p = _unpack(x, n, r, k)
    z = logits(p)
    # -log-likelihood of Bernoulli(sigmoid(z)): log(1 + e^z) - y z, computed stably.
    nll = np.where(z > 0, z + log1p(np.exp(-z)), log1p(np.exp(z))) - y * z
    loss = float((mask * nll).sum())
    loss += pen.a * float((p.a**2).sum()) + pen.theta * float((p.theta**2).sum())
    loss += pen.b * float((p.b**2).sum()) + pen.c * float((p.c**2).sum())
    g = mask * (expit(z) - y)
    grad = np.concatenate(
        [
            (g @ p.theta + 2 * pen.a * p.a).ravel(),
            (g.T @ p.a + 2 * pen.theta * p.theta).ravel(),
            -g.sum(axis=1) + 2 * pen.b * p.b,
            g.sum(axis=0) + 2 * pen.c * p.c,
        ]
    )
    return loss, grad


def initial_point(y: np.ndarray, mask: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Start: difficulties and intercepts from smoothed row and column rates, the rest small and random
    (drawn from `seed`; the k dims need asymmetry to separate)."""
    n, r = y.shape
    rng = np.random.default_rng(seed)
    col = ((mask * y).sum(axis=0) + 1) / (mask.sum(axis=0) + 2)
    row = ((mask * y).sum(axis=1) + 1) / (mask.sum(axis=1) + 2)
    c = np.log(col / (1 - col))
    b = -np.log(row / (1 - row)) + c.mean()
    a = 0.1 * rng.standard_normal((n, k))
    theta = 0.1 * rng.standard_normal((r, k))
    return np.concatenate([a.ravel(), theta.ravel(), b, c])


def fit_irt(
    resolved: np.ndarray,
    k: int,
    *,
    mask: np.ndarray | None = None,
    penalty: IrtPenalty | None = None,
    seed: int = 0,
) -> IrtParams:
    """Fit the model to a (tasks, runs) matrix of 0/1 outcomes (`mask` 0 marks a missing cell)."""
    y = np.asarray(resolved, dtype=np.float64)
    if y.ndim != 2 or y.size == 0:
        raise ValueError(f"fit_irt needs a non-empty (tasks, runs) matrix, got shape {y.shape}")
    if k < 0:
        raise ValueError(f"the ability dimension k must be >= 0, got {k}")
    m = np.ones_like(y) if mask is None else np.asarray(mask, dtype=np.float64)
    pen = penalty or IrtPenalty()
    n, r = y.shape
    # Here, not at the top: routing reads fitted parameters (`IrtParams`) and never fits; scipy.optimize
    # is ~0.3 s of a process's start on a quiet machine.
    from scipy.optimize import minimize

    res = minimize(
        objective,
        initial_point(y, m, k, seed),
        args=(y, m, k, pen),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": MAX_ITER},
    )
    p = _unpack(np.asarray(res.x, dtype=np.float64).copy(), n, r, k)
    return IrtParams(theta=p.theta.copy(), c=p.c.copy(), a=p.a.copy(), b=p.b.copy())
