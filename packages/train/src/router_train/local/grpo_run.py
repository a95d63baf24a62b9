"""`run_grpo`: the one GRPO run loop of every CPU trainer (the fixed-pool `trainer.fit_policy`, the
lockstep `lockstep.fit_policies`, the any-pool `anypool.train_any_pool`).

The loop owns what the three share: the steps, the tail average of the parameters, the wall time per
step, the per-step records with their progress bar. What differs is a `GrpoAdapter`: how a step draws
its batch and updates the parameters (one policy through `grpo.grpo_step`, many stacked trainings at
once, pools drawn per task), what its record holds, and what the run does with the final parameters.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from tqdm import tqdm

from router_train.local.step_metrics import StepMetrics

Taken = TypeVar("Taken")
"""What one step of an adapter hands to its `record` (its batch's probabilities, what `grpo_step` did)."""


@dataclass(frozen=True)
class GrpoAdapter(Generic[Taken]):
    """One trainer's side of `run_grpo`."""

    params: tuple[np.ndarray, np.ndarray]
    """(weights, bias) that `step` updates in place: the arrays the tail average sums."""
    step: Callable[[], Taken]
    """Draws a batch and takes one GRPO update of `params`."""
    record: Callable[[int, Taken], StepMetrics] | None = None
    """The record of a step (1-based) from what `step` returned; None: the run keeps no records."""
    finish: Callable[[tuple[np.ndarray, np.ndarray]], None] | None = None
    """Called after the last update, before its record, with the trained (weights, bias) (`GrpoRun.params`):
    where the trainer installs them when its last record must see them."""


@dataclass(frozen=True)
class GrpoRun:
    """How a `run_grpo` went."""

    params: tuple[np.ndarray, np.ndarray]
    """The trained (weights, bias): the tail average, or the adapter's own arrays when no tail is averaged."""
    records: list[StepMetrics]
    """One record per step, in order (empty when the run kept none)."""
    seconds_per_step: float
    """Mean wall time of one step (the update and the tail sum; not the record)."""


def tail_start(steps: int, average_tail: float) -> int:
    """The last step not in the tail average: steps after it are averaged (`steps`: none are)."""
    return steps - round(average_tail * steps)


def run_grpo(
    adapter: GrpoAdapter[Taken],
    steps: int,
    *,
    average_tail: float = 0.0,
    progress: bool = False,
    desc: str = "grpo",
    on_step: Callable[[StepMetrics], None] | None = None,
) -> GrpoRun:
    """`steps` updates of `adapter`. The trained parameters (`GrpoRun.params`) are the mean of those
    after each of the last `average_tail` share of steps (no tail: the last step's), handed to
    `adapter.finish`. With `adapter.record`, each step's record (after `finish` for the last) goes to
    `on_step` as it is made and into the result; `progress` shows a bar named `desc`."""
    if steps < 1:
        raise ValueError(f"a GRPO run takes at least one step, got {steps}")
    last_untailed = tail_start(steps, average_tail)
    weights, bias = adapter.params
    tail_w, tail_b = np.zeros_like(weights), np.zeros_like(bias)
    records: list[StepMetrics] = []
    step_times: list[float] = []
    # disable=None: no bar when stderr is not a terminal (logs, CI), where every redraw is a line.
    bar = tqdm(
        range(1, steps + 1), desc=desc, disable=None if progress else True, unit="step", mininterval=0.25
    )
    for step in bar:
        t0 = time.perf_counter()
        taken = adapter.step()
        if step > last_untailed:
            tail_w += weights
            tail_b += bias
        step_times.append(time.perf_counter() - t0)
        if step == steps:
            n = steps - last_untailed
            trained = (tail_w / n, tail_b / n) if n else (weights, bias)
            if adapter.finish is not None:
                adapter.finish(trained)
        if adapter.record is None:
            continue
        record = adapter.record(step, taken)
        records.append(record)
        if on_step is not None:
            on_step(record)
        bar.set_postfix(reward=f"{record.reward:.3f}", entropy=f"{record.entropy:.3f}", refresh=False)
    bar.close()
    return GrpoRun(params=trained, records=records, seconds_per_step=sum(step_times) / len(step_times))
