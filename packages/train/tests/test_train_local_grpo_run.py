"""`grpo_run.run_grpo`, the run loop of every CPU trainer: the tail average, when `finish` runs, the
records. (That each trainer's outputs through it are unchanged is `test_train_exact_speedups.py`'s and
the trainers' own tests' job.)"""

from __future__ import annotations

import numpy as np
import pytest

from router_train.local.grpo_run import GrpoAdapter, run_grpo, tail_start
from router_train.local.step_metrics import StepMetrics


class _Counting:
    """Each step adds the step number to every weight and twice it to the bias; records the weights'
    first entry as the reward, so a record made after `finish` shows the finished parameters."""

    def __init__(self) -> None:
        self.weights, self.bias = np.zeros((2, 3)), np.zeros(3)
        self.n = 0
        self.finished: list[tuple[np.ndarray, np.ndarray]] = []
        self.recorded: list[int] = []

    def adapter(self, records: bool = True) -> GrpoAdapter[int]:
        record = self.record if records else None
        return GrpoAdapter((self.weights, self.bias), self.step, record, self.finish)

    def step(self) -> int:
        self.n += 1
        self.weights += self.n  # in place: the loop sums the arrays it was given
        self.bias += 2 * self.n
        return self.n

    def finish(self, trained: tuple[np.ndarray, np.ndarray]) -> None:
        self.finished.append(trained)
        self.weights, self.bias = trained

    def record(self, step: int, taken: int) -> StepMetrics:
        assert step == taken
        self.recorded.append(step)
        return StepMetrics(
            step=step,
            reward=float(self.weights[0, 0]),
            routed_reward=0.0,
            chose_oracle=0.0,
            resolved_if_chosen=0.0,
            cost_if_chosen=0.0,
            entropy=0.0,
            groups_with_signal=0.0,
            grad_norm=0.0,
            route_share={},
        )


def test_tail_average_is_the_mean_of_the_last_steps_parameters() -> None:
    adapter = _Counting()
    seen: list[StepMetrics] = []
    run = run_grpo(adapter.adapter(), 10, average_tail=0.3, on_step=seen.append)
    # After step s the weights are 1 + ... + s = s(s+1)/2; the tail is steps 8, 9, 10.
    after = [s * (s + 1) / 2 for s in (8, 9, 10)]
    assert tail_start(10, 0.3) == 7
    assert len(adapter.finished) == 1 and adapter.finished[0] is run.params
    np.testing.assert_array_equal(adapter.weights, np.full((2, 3), sum(after) / 3))
    np.testing.assert_array_equal(adapter.bias, np.full(3, 2 * sum(after) / 3))
    # Every step recorded in order, the last after `finish` (it sees the averaged weights).
    assert [r.step for r in run.records] == list(range(1, 11)) and seen == run.records
    assert [r.reward for r in run.records[-2:]] == [45.0, pytest.approx(sum(after) / 3)]
    assert run.seconds_per_step >= 0


def test_no_tail_trains_the_last_steps_arrays_and_no_records_calls_no_record() -> None:
    adapter = _Counting()
    weights, bias = adapter.weights, adapter.bias
    run = run_grpo(adapter.adapter(records=False), 4)
    # The adapter's own arrays, not copies: the last step's parameters, 1 + 2 + 3 + 4.
    assert run.params[0] is weights and run.params[1] is bias
    assert len(adapter.finished) == 1 and adapter.finished[0] is run.params
    assert adapter.recorded == [] and run.records == []
    np.testing.assert_array_equal(weights, np.full((2, 3), 10.0))


def test_a_full_tail_averages_every_step() -> None:
    adapter = _Counting()
    run_grpo(adapter.adapter(records=False), 3, average_tail=1.0)
    np.testing.assert_array_equal(adapter.weights, np.full((2, 3), (1 + 3 + 6) / 3))


def test_zero_steps_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one step"):
        run_grpo(_Counting().adapter(), 0)
