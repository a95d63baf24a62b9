"""The loaded router: `route(task) -> Decision`, `route_many(tasks)`, and `scores(tasks)` where it has them.

A scoring router's route is the argmax of its scores (the first column of ties), columns in `pool`
order: exactly the pick of the policy or fit it wraps (`RouterPolicy.route`, `AnyPoolPolicy.route`,
`LogregFit.predict`, ...), which is what `router-train evaluate` scores. Keeping scores and argmax
apart lets a caller re-weigh the scores before picking. Each kind's subclass lives in its module of
`route.kinds` (`LocalRouter`, `PoolBoundRouter`, `BaselineRouter`); the endpoint's in `route.endpoint`.

With a cost dial set (`set_dial`, from `--budget`/`--dial`), the route is evaluate's dial rule
(`scoring.dial.apply_dial`) on `dial_scores`, the scores evaluate's curves dial (logits, log-probabilities,
log smoothed votes: the same argmax as `scores` at dial 0), priced with the calibration's model costs.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence

import numpy as np
from tqdm import tqdm

from router_train.route.decision import Decision
from router_train.route.task import RouteTask
from router_train.scoring.dial import CalibrationPoint, DialCalibration, apply_dial

PROGRESS_MIN_TASKS = 5
"""`route_many(progress=True)` shows a progress bar on stderr for more tasks than this."""
BATCH = 256
"""Tasks scored per batch (rows are independent: batching changes no score, only the progress bar)."""


def progress_bar(total: int, progress: bool) -> tqdm | None:
    """A progress bar on stderr when asked for and there are more than a few tasks, else None."""
    if progress and total > PROGRESS_MIN_TASKS:
        return tqdm(total=total, desc="routing", unit="task", file=sys.stderr)
    return None


def _batches(tasks: Sequence[RouteTask], size: int, progress: bool) -> Iterator[Sequence[RouteTask]]:
    bar = progress_bar(len(tasks), progress)
    for i in range(0, len(tasks), size):
        yield tasks[i : i + size]
        if bar is not None:
            bar.update(min(size, len(tasks) - i))
    if bar is not None:
        bar.close()


class Router:
    """A router of one pool: `.name`, `.pool` (model ids), `.route`, `.route_many`, `.scores`."""

    name: str
    """Router name, written in every decision (kind and source, e.g. `local:checkpoint.json`)."""
    pool: list[str]
    """The pool's model ids (the columns of `scores`)."""
    fallback: str | None = None
    """Pool model that takes the tasks the router gives no valid route (None: they stay unrouted)."""
    dial: float | None = None
    """The cost dial routes are picked with (`set_dial`); None: the router as trained (`scores`' argmax)."""
    dial_costs: np.ndarray | None = None
    """The dial's per-model price, USD, in `pool` order (the calibration's `model_costs`)."""
    operating: CalibrationPoint | None = None
    """What the dial buys on the router's training tasks (expected cost per task, resolved rate)."""
    calibration: DialCalibration | None = None
    """The dial table the dial was set from (`load_router` with a budget or dial), else None."""
    only: str | None = None
    """Pool model every task goes to: a checkpoint's safe default point fell back to the cheapest model on
    its training tasks (`scoring.safe_point`); None: the router routes."""
    default_point: str | None = None
    """The safe default point it routes at, in words (`SafePoint.describe`), when one was applied."""

    def dial_scores(self, tasks: Sequence[RouteTask]) -> np.ndarray | None:
        """Per task and pool model, the scores the cost dial is applied to (evaluate's curves' scores);
        None for routers without a dial."""
        return None

    def set_dial(self, dial: float, calibration: DialCalibration, point: CalibrationPoint) -> None:
        """Route with `dial` from now on, priced with `calibration`'s per-model costs (`point`: what it
        buys on the training tasks, for the record)."""
        if sorted(calibration.model_ids) != sorted(self.pool):
            raise ValueError(f"calibration is over {calibration.model_ids}, the router's pool is {self.pool}")
        cost = dict(zip(calibration.model_ids, calibration.model_costs, strict=True))
        self.dial, self.dial_costs, self.operating = dial, np.asarray([cost[m] for m in self.pool]), point

    def scores(self, tasks: Sequence[RouteTask]) -> np.ndarray | None:
        """Per task and pool model, the router's score, shape (len(tasks), len(pool)); the route is the
        argmax (first of ties). None for routers that do not score models (an LLM endpoint)."""
        return None

    def route(self, task: RouteTask, *, explain: bool = True) -> Decision:
        """Route one task."""
        return self.route_many([task], explain=explain)[0]

    def route_many(
        self, tasks: Sequence[RouteTask], *, explain: bool = True, progress: bool = False
    ) -> list[Decision]:
        """Route every task, in order (`router-train route` runs this). `explain`: keep scores / replies
        in the decisions; `progress`: a progress bar on stderr for more than a few tasks."""
        out: list[Decision] = []
        if self.only is not None:  # the safe default point: no score can move it
            reason = "safe default point: always the cheapest model on the training tasks"
            return [
                Decision(instance_id=t.instance_id, model=self.only, router=self.name, reason=reason)
                for batch in _batches(tasks, BATCH, progress)
                for t in batch
            ]
        for batch in _batches(tasks, BATCH, progress):
            if self.dial is None:
                s = self.scores(batch)
                assert s is not None, "a router without scores overrides route_many"
                picks, shown = np.argmax(s, axis=1), s
            else:
                raw = self.dial_scores(batch)
                assert raw is not None and self.dial_costs is not None, "set_dial needs dial scores"
                picks = apply_dial(raw, self.dial_costs, self.dial)
                shown = raw - self.dial * self.dial_costs  # what the argmax reads (-inf stays -inf)
            for task, row, pick in zip(batch, shown, picks, strict=True):
                scores = {m: float(v) for m, v in zip(self.pool, row, strict=True) if np.isfinite(v)}
                out.append(
                    Decision(
                        instance_id=task.instance_id,
                        model=self.pool[int(pick)],
                        router=self.name,
                        scores=scores if explain else None,
                        dial=self.dial,
                    )
                )
        return out
