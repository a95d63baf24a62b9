"""The `baseline` kind: a `router-train fit` checkpoint (`route.baseline_checkpoint.BaselineCheckpoint`),
one of evaluate's learned baselines fitted on a fixed pool; it routes a task as evaluate's row of the same
name does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from router_oracle.task_input import TaskInput
from router_train.route.baseline_checkpoint import (
    BaselineCheckpoint,
    baseline_calibration,
    dial_scores,
    read_baseline,
)
from router_train.route.deploy import Scorer
from router_train.route.kinds.kind import (
    Judged,
    Loaded,
    RouterKind,
    check_fixed,
    refuse_candidates,
    routing_task_features,
)
from router_train.route.operating_point import stored_point, training_tasks
from router_train.route.router import ScoringRouter
from router_train.route.spec import CheckpointSpec
from router_train.scoring.baseline_scores import in_pool
from router_train.scoring.baselines import with_task_features
from router_train.scoring.dial import DialCalibration
from router_train.text_features import tfidf_matrix

KIND_NAME = "baseline"
"""This kind's name: its messages' word and its key of a fitting request's `KindOptions`."""


class BaselineRouter(Scorer):
    """A saved baseline (`router-train fit`): scores are its fit's (minus mean cost, logistic decision
    values, kNN votes), columns the pool's ids sorted, so that argmax's first-of-ties is the smallest
    id, as in evaluate. A pool model the fit never saw as a label scores -inf (omitted in `--explain`)."""

    def __init__(self, ckpt: BaselineCheckpoint, name: str, task_features: str | None = None) -> None:
        self.ckpt = ckpt
        self.name = name
        self.pool = sorted(ckpt.pool_ids)
        self.task_features = task_features
        """Where the task features of the routed tasks come from (None: the file it was fitted with)."""

    def inputs(self, tasks: Sequence[TaskInput]) -> object:
        """The fit's inputs: the TF-IDF, then the task features it was fitted with (standardised)."""
        x = tfidf_matrix(tasks, self.ckpt.vocabulary, self.ckpt.idf)
        return with_task_features(x, self.ckpt.task_features, tasks, self.task_features)

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        fit = self.ckpt.fit
        raw = fit.scores(len(tasks)) if fit.method == "cheapest" else fit.scores(self.inputs(tasks))
        return in_pool(raw, fit.classes, self.pool, -np.inf)

    def dial_scores(self, tasks: Sequence[TaskInput]) -> np.ndarray | None:
        x = self.inputs(tasks)
        return dial_scores(self.ckpt.fit, x, self.pool, on_train=False)


def load(path: Path, spec: CheckpointSpec) -> Loaded:
    """The saved baseline; its dial table is the stored one (v2), else recomputed on its training tasks
    from the training table when at hand (v1). `cheapest-on-train` has no dial."""
    refuse_candidates(spec, path, "baseline")
    baseline = read_baseline(path)
    check_fixed(spec, path, baseline.pool_ids, baseline.table, baseline.table_sha256)
    features = routing_task_features(spec, path, baseline.task_features)
    router = BaselineRouter(baseline, f"{baseline.name}:{path}", features)
    if baseline.fit.method == "cheapest":
        return Loaded(router, None)

    def calibration() -> DialCalibration:
        if baseline.calibration is not None:
            return baseline.calibration
        tasks = training_tasks(path, spec, baseline.table, baseline.table_sha256, baseline.train_task_ids)
        cal = baseline_calibration(baseline.fit, router.inputs(tasks), tasks, baseline.pool_ids)
        assert cal is not None
        return cal

    return Loaded(router, calibration, baseline.safe_point)


def judge(path: Path, pool: Sequence[str]) -> Judged:
    """The saved baseline over its own pool (evaluate checks its routes are the table's models)."""
    baseline = read_baseline(path)
    scorer = BaselineRouter(baseline, f"{baseline.name}:{path}")
    point = stored_point(scorer, baseline.safe_point, baseline.calibration)
    return Judged(ScoringRouter(scorer, point), list(baseline.train_task_ids))


KIND = RouterKind(name=KIND_NAME, checkpoint=BaselineCheckpoint, load=load, judge=judge)
"""The `baseline` kind's routing entry (`route.kinds.KINDS`); its fitting entry is `fitting.baseline.FIT`."""
