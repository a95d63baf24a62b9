"""The MIRT fit (`router_train.irt.model`): exact gradient, recovery of known parameters, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import check_grad

from router_train.irt.model import IrtParams, IrtPenalty, fit_irt, initial_point, logits, objective


def _synthetic(n: int, r: int, k: int, seed: int) -> tuple[IrtParams, np.ndarray]:
    rng = np.random.default_rng(seed)
    true = IrtParams(
        theta=rng.normal(0, 1.2, (r, k)),
        c=rng.normal(0.5, 1.0, r),
        a=rng.normal(0.0, 1.0, (n, k)),
        b=rng.normal(0, 1.5, n),
    )
    y = rng.random((n, r)) < 1 / (1 + np.exp(-logits(true)))
    return true, y


@pytest.mark.parametrize("k", [0, 1, 2])
def test_gradient_matches_finite_differences(k: int) -> None:
    _, y = _synthetic(15, 6, max(k, 1), seed=1)
    yf = y.astype(float)
    mask = np.ones_like(yf)
    mask[0, 0] = 0.0  # a missing cell must drop out of value and gradient alike
    pen = IrtPenalty(theta=0.7, a=0.3, b=0.2, c=0.05)
    x0 = initial_point(yf, mask, k, seed=3) + np.random.default_rng(4).normal(0, 0.3, 15 * k + 6 * k + 21)
    err = check_grad(
        lambda x: objective(x, yf, mask, k, pen)[0], lambda x: objective(x, yf, mask, k, pen)[1], x0
    )
    assert err < 1e-4 * max(1.0, float(np.linalg.norm(objective(x0, yf, mask, k, pen)[1])))


def test_recovers_a_2pl() -> None:
    true, y = _synthetic(400, 60, 1, seed=2)
    fit = fit_irt(y, 1)
    assert np.corrcoef(fit.b, true.b)[0, 1] > 0.9
    assert np.corrcoef(fit.c, true.c)[0, 1] > 0.9
    # Sign and scale of a one-dimensional ability are free: the products a_i theta_j are not.
    assert np.corrcoef((fit.a @ fit.theta.T).ravel(), (true.a @ true.theta.T).ravel())[0, 1] > 0.85
    assert np.corrcoef(logits(fit).ravel(), logits(true).ravel())[0, 1] > 0.9


def test_recovers_two_dimensions_better_than_one() -> None:
    true, y = _synthetic(400, 60, 2, seed=5)
    two, one = fit_irt(y, 2), fit_irt(y, 1)
    # Rotations of the 2-d ability space are free; the logits are identified.
    corr2 = np.corrcoef(logits(two).ravel(), logits(true).ravel())[0, 1]
    corr1 = np.corrcoef(logits(one).ravel(), logits(true).ravel())[0, 1]
    assert corr2 > 0.9
    assert corr2 > corr1 + 0.05


def test_fit_is_bitwise_deterministic_and_seeded() -> None:
    _, y = _synthetic(80, 20, 2, seed=7)
    a, b = fit_irt(y, 2, seed=11), fit_irt(y, 2, seed=11)
    for name in ("theta", "c", "a", "b"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes()
    other = fit_irt(y, 2, seed=12)
    assert other.a.tobytes() != a.a.tobytes()


def test_refuses_bad_shapes() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        fit_irt(np.zeros((0, 3)), 1)
    with pytest.raises(ValueError, match="k must be >= 0"):
        fit_irt(np.zeros((3, 3)), -1)
