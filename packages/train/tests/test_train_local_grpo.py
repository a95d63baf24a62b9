"""GRPO pieces of the local trainer: advantages, sampling, the policy gradient, AdamW."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from router_train.local.grpo import AdamW, clip_grad_norm, group_advantages, policy_gradient, sample_actions
from router_train.local.policy import softmax


def test_advantages_mean_is_prime_rl_grpo_and_std_normalises():
    rewards = np.array(
        [[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [0.52, 0.5, 0.5, 0.5]]
    )
    mean = group_advantages(rewards, eps=1e-6)  # the default: reward minus the group mean
    assert np.allclose(mean, rewards - rewards.mean(axis=1, keepdims=True))
    std = group_advantages(rewards, eps=1e-6, estimator="std")
    assert np.allclose(std[0], [1, -1, -1, 1], atol=1e-5)
    for adv in (mean, std):
        assert np.allclose(adv.mean(axis=1), 0.0)
        assert np.all(adv[1] == 0.0)  # a group whose rewards are equal carries no signal
        assert adv[2, 3] < 0 < adv[2, 0]
    # Two cents of difference stay two cents under `mean`; `std` inflates them to a full +-1.7.
    assert mean[3, 0] == pytest.approx(0.015) and std[3, 0] == pytest.approx(np.sqrt(3), rel=1e-3)


def test_sampling_is_seeded_and_follows_the_distribution():
    probs = np.array([[0.7, 0.2, 0.1], [0.0, 0.0, 1.0]])
    a = sample_actions(probs, 20_000, np.random.default_rng(3))
    b = sample_actions(probs, 20_000, np.random.default_rng(3))
    assert np.array_equal(a, b)
    assert np.all(a[1] == 2)
    share = np.bincount(a[0], minlength=3) / a.shape[1]
    assert np.allclose(share, probs[0], atol=0.02)


def _loss(x, w, b, actions, adv):
    logp = np.log(softmax(np.asarray(x @ w) + b))
    picked = np.take_along_axis(logp, actions, axis=1)
    return -(adv * picked).mean()


def test_policy_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    x = sp.csr_matrix(rng.normal(size=(4, 5)))
    w, b = rng.normal(size=(5, 3)), rng.normal(size=3)
    probs = softmax(np.asarray(x @ w) + b)
    actions = sample_actions(probs, 6, rng)
    adv = group_advantages(rng.normal(size=(4, 6)), 1e-6)
    gw, gb = policy_gradient(x, probs, actions, adv)
    h = 1e-6
    for i, j in [(0, 0), (2, 1), (4, 2)]:
        wp, wm = w.copy(), w.copy()
        wp[i, j] += h
        wm[i, j] -= h
        num = (_loss(x, wp, b, actions, adv) - _loss(x, wm, b, actions, adv)) / (2 * h)
        assert abs(num - gw[i, j]) < 1e-6
    for j in range(3):
        bp, bm = b.copy(), b.copy()
        bp[j] += h
        bm[j] -= h
        num = (_loss(x, w, bp, actions, adv) - _loss(x, w, bm, actions, adv)) / (2 * h)
        assert abs(num - gb[j]) < 1e-6


def test_adamw_descends_and_leaves_untouched_weights_at_zero():
    w, b = np.zeros((3, 2)), np.zeros(2)
    opt = AdamW((3, 2), lr=0.1, betas=(0.9, 0.98), weight_decay=0.1)
    target = np.array([[1.0, -1.0], [0.5, 0.0], [0.0, 0.0]])
    for _ in range(300):
        grad = w - target
        grad[2] = 0.0  # a feature no task has
        opt.step(w, b, grad, np.zeros(2))
    assert np.allclose(w[:2, 0], [1.0, 0.5], atol=0.1)
    assert np.all(w[2] == 0.0)


def test_grad_clipping():
    gw, gb = np.full((2, 2), 3.0), np.array([4.0, 0.0])
    norm = clip_grad_norm(gw, gb, 1.0)
    assert norm == np.sqrt(4 * 9 + 16)
    assert np.isclose(np.sqrt((gw**2).sum() + (gb**2).sum()), 1.0)
    gw2 = np.ones((2, 2))
    clip_grad_norm(gw2, np.zeros(2), 0.0)
    assert np.all(gw2 == 1.0)
