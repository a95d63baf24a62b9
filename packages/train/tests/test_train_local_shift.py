"""The local trainer's prior shift (chosen on evidence only) and its stall warning."""

from __future__ import annotations

import numpy as np
from evaluate_tables import IDS, make_table

from router_train.local.step_metrics import StepMetrics
from router_train.local.trainer import PRIOR_SHIFTS, pick_prior_shift, stall_warning


def _log_prior(tasks, ids):  # type: ignore[no-untyped-def]
    counts = np.asarray([sum(t.oracle == m for t in tasks) + 1 for m in ids], dtype=float)
    return np.log(counts / counts.sum())


def test_an_informative_policy_leaves_the_safe_shift_for_a_better_one() -> None:
    tasks = make_table(n=200).tasks
    prior = np.tile(_log_prior(tasks, IDS), (len(tasks), 1))
    # Logits that know each task's oracle, a little: the balanced end routes well, the safe end routes
    # every task to the majority label.
    logits = np.asarray([[1.5 if m == t.oracle else 0.0 for m in IDS] for t in tasks])
    tau = pick_prior_shift(tasks, logits, prior, IDS)
    assert tau < PRIOR_SHIFTS[0]


def test_a_policy_that_knows_nothing_keeps_the_safe_shift() -> None:
    tasks = make_table(n=200).tasks
    prior = np.tile(_log_prior(tasks, IDS), (len(tasks), 1))
    # Logits unrelated to the tasks: whatever a smaller tau gains here is noise, and stays unproven.
    logits = np.random.default_rng(0).normal(scale=0.5, size=(len(tasks), len(IDS)))
    assert pick_prior_shift(tasks, logits, prior, IDS) == PRIOR_SHIFTS[0]


def _step(step: int, signal: float, grad: float) -> StepMetrics:
    return StepMetrics(
        step=step,
        reward=0.8,
        routed_reward=0.8,
        chose_oracle=0.8,
        resolved_if_chosen=0.7,
        cost_if_chosen=0.1,
        entropy=0.01,
        groups_with_signal=signal,
        grad_norm=grad,
        route_share={"a": 1.0},
    )


def test_stall_warning() -> None:
    learning = [_step(i, 0.4, 0.3) for i in range(1, 41)]
    assert stall_warning(learning) is None
    stalled = learning[:30] + [_step(i, 0.0, 0.0) for i in range(31, 41)]
    warning = stall_warning(stalled)
    assert (
        warning is not None and "training stalled" in warning and "10 steps with a zero gradient" in warning
    )
