"""What a learned router is to cross-validation: a fitter, `(train_tasks, test_tasks, seed) -> [Decisions]`.

A fitter returns one single-choice decision per test task for each router it fits, having read the train
tasks only (features, idf, vocabularies, the cheapest model and every other statistic come from them).
One that also has `fit_scored(train, test, seed) -> ([Decisions], [RouterScores])` gives its per-model
scores too: `router-train evaluate`'s cost-dial curves and calibration. Each kind of router with a
fitter says how to make it in its registry entry (`fitting.FITS`, `Fit.fitters`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from router_oracle.table import TaskRecord
from router_train.scoring.decisions import Decisions

Fitter = Callable[[Sequence[TaskRecord], Sequence[TaskRecord], int], list[Decisions]]
"""(train tasks, test tasks, seed) -> one Decisions per router it fits, covering every test task."""
