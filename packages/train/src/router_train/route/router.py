"""The loaded router: `route(task) -> Decision`, `route_many(tasks)`.

A checkpoint's router is a `ScoringRouter`: its kind's scorer (`route.deploy.Scorer`: `LocalRouter`,
`PoolBoundRouter`, `BaselineRouter`, `IrtRouter` in `route.kinds`) and an operating point fixed at
construction (`route.deploy.OperatingPoint`). Natively its route is the argmax of the scores (the first
column of ties), columns in `pool` order: exactly the pick of the policy or fit it wraps
(`RouterPolicy.route`, `LogregFit.predict`, ...), which is what `router-train evaluate` scores; at a cost
dial (`--budget`/`--dial`) evaluate's dial rule (`scoring.dial.apply_dial`) on the dial scores; at a safe
point that fell back, one model. The endpoint's router is in `route.endpoint`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence

import numpy as np
from tqdm import tqdm

from router_oracle.task_input import TaskInput
from router_train.route.decision import Decision
from router_train.route.deploy import NATIVE, OperatingPoint, Scorer, deploy

PROGRESS_MIN_TASKS = 5
"""`route_many(progress=True)` shows a progress bar on stderr for more tasks than this."""
BATCH = 256
"""Tasks scored per batch (rows are independent: batching changes no score, only the progress bar)."""


def progress_bar(total: int, progress: bool) -> tqdm | None:
    """A progress bar on stderr when asked for and there are more than a few tasks, else None."""
    if progress and total > PROGRESS_MIN_TASKS:
        return tqdm(total=total, desc="routing", unit="task", file=sys.stderr)
    return None


def _batches(tasks: Sequence[TaskInput], size: int, progress: bool) -> Iterator[Sequence[TaskInput]]:
    bar = progress_bar(len(tasks), progress)
    for i in range(0, len(tasks), size):
        yield tasks[i : i + size]
        if bar is not None:
            bar.update(min(size, len(tasks) - i))
    if bar is not None:
        bar.close()


class Router:
    """A router of one pool: `.name`, `.pool` (model ids), `.route`, `.route_many`. Built once: its
    operating point is given at construction (`ScoringRouter`) or it has none (`EndpointRouter`)."""

    name: str
    """Router name, written in every decision (kind and source, e.g. `local:checkpoint.json`)."""
    pool: list[str]
    """The pool's model ids."""

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray | None:
        """Per task and pool model, the router's native score (shape (len(tasks), len(pool))); None for
        routers that do not score models (an LLM endpoint)."""
        return None

    def route(self, task: TaskInput, *, explain: bool = True) -> Decision:
        """Route one task."""
        return self.route_many([task], explain=explain)[0]

    def route_many(
        self, tasks: Sequence[TaskInput], *, explain: bool = True, progress: bool = False
    ) -> list[Decision]:
        """Route every task, in order (`router-train route` runs this). `explain`: keep scores / replies
        in the decisions; `progress`: a progress bar on stderr for more than a few tasks."""
        raise NotImplementedError


class ScoringRouter(Router):
    """A checkpoint's scorer (its kind's `Scorer`) at one operating point (`route.deploy.OperatingPoint`):
    every route is `route.deploy.deploy` of the two."""

    def __init__(self, scorer: Scorer, point: OperatingPoint = NATIVE) -> None:
        self.scorer = scorer
        self.point = point
        self.name = scorer.name
        self.pool = list(scorer.pool)

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        """The scorer's scores (the native route's argmax), whatever the operating point."""
        return self.scorer.scores(tasks)

    def route_many(
        self, tasks: Sequence[TaskInput], *, explain: bool = True, progress: bool = False
    ) -> list[Decision]:
        point, out = self.point, []
        for batch in _batches(tasks, BATCH, progress):
            picks, shown = deploy(self.scorer, point, batch)
            for i, (task, pick) in enumerate(zip(batch, picks, strict=True)):
                scores = None
                if explain and shown is not None:
                    row = shown[i]
                    scores = {m: float(v) for m, v in zip(self.pool, row, strict=True) if np.isfinite(v)}
                out.append(
                    Decision(
                        instance_id=task.instance_id,
                        model=self.pool[pick],
                        router=self.name,
                        reason=point.reason,
                        scores=scores,
                        dial=point.dial,
                        chooser=point.chooser,
                    )
                )
        return out
