"""`router-train fit`'s fit of a supervised baseline into its checkpoint (`route.baseline_checkpoint`):
evaluate's own fits on the train tasks, its dial table and its safe default point. Here, above the
fitters, so that the checkpoint module routing reads imports none."""

from __future__ import annotations

from collections.abc import Sequence

from router_oracle.table import TaskRecord
from router_train.fit_source import FitSource
from router_train.route.baseline_checkpoint import (
    BASELINE_NAMES,
    BaselineCheckpoint,
    baseline_calibration,
    dial_scores,
)
from router_train.route.spec import RouteError
from router_train.scoring.baseline_fitter import BaselineFitter
from router_train.scoring.baselines import CHEAPEST_NAME, CheapestFit, KnnFit, LogregFit, TfidfFeatures
from router_train.scoring.safe_point import CLASSIFIER_MARGINS, SafePoint, checkpoint_safe_point
from router_train.task_features import FeatureScaling

DEFAULT_KNN_K = 10
"""Neighbours of `tfidf-knn`, as in evaluate."""


def fit_baseline(
    name: str,
    train_tasks: Sequence[TaskRecord],
    pool_ids: Sequence[str],
    seed: int,
    source: FitSource,
    task_features: str | None = None,
) -> BaselineCheckpoint:
    """Fit baseline `name` on `train_tasks` (the tasks `source` names) as evaluate does (tasks in
    instance-id order; `task_features`: the logistic regressions' extra inputs, as evaluate's)."""
    if name not in BASELINE_NAMES:
        raise RouteError(f"unknown baseline {name!r}; one of: {', '.join(BASELINE_NAMES)}")
    train = sorted(train_tasks, key=lambda t: t.instance_id)
    vocabulary: list[str] = []
    idf: list[float] = []
    fit: CheapestFit | LogregFit | KnnFit
    scaling: FeatureScaling | None = None
    row_name = name
    calibration = None
    safe: SafePoint | None = None
    if name == CHEAPEST_NAME:
        fit = CheapestFit.fit(train, pool_ids)
    else:
        logreg = name != "tfidf-knn"
        features = TfidfFeatures(train, name, task_features if logreg else None)
        vocabulary, idf = features.vocabulary, features.idf
        if not logreg:
            fit = KnnFit.fit(features, DEFAULT_KNN_K)
            row_name = f"tfidf-knn(k={fit.k})"
        else:
            fit = LogregFit.fit(features, seed, balanced=name.endswith("(balanced)"))
            scaling = features.scaling
        calibration = baseline_calibration(fit, features.x_train, train, pool_ids)
        scores = dial_scores(fit, features.x_train, list(pool_ids), on_train=True)
        assert scores is not None
        safe = checkpoint_safe_point(
            BaselineFitter(list(pool_ids), task_features).fit_scored,
            row_name,
            train,
            pool_ids,
            scores,
            seed,
            CLASSIFIER_MARGINS,
        )
    return BaselineCheckpoint(
        name=row_name,
        pool_ids=list(pool_ids),
        **source.model_dump(),
        seed=seed,
        train_task_ids=[t.instance_id for t in train],
        vocabulary=vocabulary,
        idf=idf,
        fit=fit,
        task_features=scaling,
        calibration=calibration,
        safe_point=safe,
    )
