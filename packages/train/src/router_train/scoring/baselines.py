"""Built-in routers every trained router must beat, each fitted (where it learns) on train tasks only."""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import TaskRecord
from router_oracle.task_input import TaskInput
from router_train.scoring.decisions import Decisions, EvaluateError, from_distributions, from_labels
from router_train.task_features import FeatureScaling
from router_train.text_features import fit_tfidf, tfidf_matrix


def always(model_id: str, tasks: Sequence[TaskRecord]) -> Decisions:
    """Route every task to one model."""
    return from_labels(f"always:{model_id}", "baseline", {t.instance_id: [model_id] for t in tasks})


def oracle(tasks: Sequence[TaskRecord]) -> Decisions:
    """The table's oracle label: the upper bound of any router on these tasks."""
    return from_labels("oracle", "baseline", {t.instance_id: [t.oracle] for t in tasks})


def uniform_random(tasks: Sequence[TaskRecord], model_ids: Sequence[str], seed: int) -> Decisions:
    """One uniform draw per task from a seeded generator (tasks in instance-id order)."""
    rng = random.Random(seed)
    ids = sorted(model_ids)
    picks = {t.instance_id: [rng.choice(ids)] for t in sorted(tasks, key=lambda t: t.instance_id)}
    return from_labels(f"random(seed={seed})", "baseline", picks)


def uniform_random_expected(tasks: Sequence[TaskRecord], model_ids: Sequence[str]) -> Decisions:
    """The exact expectation of the uniform random router (no sampling noise)."""
    dist = {m: 1.0 for m in model_ids}
    return from_distributions("random(expected)", "baseline", {t.instance_id: dist for t in tasks})


CHEAPEST_NAME = "cheapest-on-train"
"""Row name of `always_cheapest` (which model it is can differ between cross-validation folds)."""
LOGREG_NAME = "tfidf-logreg"
"""Row name of `tfidf_logreg`."""
BALANCED_LOGREG_NAME = "tfidf-logreg(balanced)"
"""Row name of `tfidf_logreg(balanced=True)`."""


class CheapestFit(FrozenModel):
    """`cheapest-on-train` once fitted: each model's mean cost per task on the train tasks."""

    method: Literal["cheapest"] = "cheapest"
    """Marks the fit."""
    classes: list[str]
    """The pool's model ids, sorted (the columns of `scores`)."""
    mean_cost: list[float]
    """Mean cost per task of each model of `classes` on the train tasks, USD."""

    @classmethod
    def fit(cls, train_tasks: Sequence[TaskRecord], model_ids: Sequence[str]) -> CheapestFit:
        if not train_tasks:
            raise EvaluateError(
                "always-cheapest needs train tasks to measure costs on; the train split is empty"
            )
        ids = sorted(model_ids)
        mean = [sum(t.per_model[m].cost for t in train_tasks) / len(train_tasks) for m in ids]
        return cls(classes=ids, mean_cost=mean)

    def scores(self, n_tasks: int) -> np.ndarray:
        """Minus the mean cost, the same row for every task: argmax (first of ties: smallest id) is the
        cheapest model."""
        return np.tile(-np.asarray(self.mean_cost, dtype=np.float64), (n_tasks, 1))

    @property
    def model(self) -> str:
        return self.classes[int(self.scores(1)[0].argmax())]


def cheapest_model(train_tasks: Sequence[TaskRecord], model_ids: Sequence[str]) -> str:
    """The model with the lowest mean cost per task on the train tasks (ties: smallest id)."""
    return CheapestFit.fit(train_tasks, model_ids).model


def always_cheapest(
    train_tasks: Sequence[TaskRecord], tasks: Sequence[TaskRecord], model_ids: Sequence[str]
) -> Decisions:
    """Route everything to the model that was cheapest on the train tasks."""
    m = cheapest_model(train_tasks, model_ids)
    return from_labels(CHEAPEST_NAME, "baseline", {t.instance_id: [m] for t in tasks})


class TfidfFeatures:
    """TF-IDF of the task text (`router_train.text_features`), fitted on train tasks only; shared by the
    text classifiers of one fit. With `task_features` (a `--task-features` file or bundled name) the
    logistic regressions' inputs (`transform`) are the TF-IDF and those columns, standardised on the train
    tasks only (`task_features.FeatureScaling`); kNN's similarity stays on the text (`transform_text`)."""

    def __init__(
        self, train_tasks: Sequence[TaskRecord], name: str = "tfidf", task_features: str | None = None
    ) -> None:
        if len(train_tasks) < 2:
            raise EvaluateError(f"{name} needs at least 2 train tasks, got {len(train_tasks)}")
        self.vocabulary, self.idf = fit_tfidf(train_tasks)
        self.scaling = (
            None
            if task_features is None
            else FeatureScaling.fit_source(task_features, [t.instance_id for t in train_tasks])
        )
        self.task_features = task_features
        self.x_text_train = self.transform_text(train_tasks)
        self.x_train = self.transform(train_tasks)
        self.y_train = [t.oracle for t in train_tasks]

    def transform_text(self, tasks: Sequence[TaskInput]) -> Any:
        return tfidf_matrix(tasks, self.vocabulary, self.idf)

    def transform(self, tasks: Sequence[TaskInput]) -> Any:
        return with_task_features(self.transform_text(tasks), self.scaling, tasks, self.task_features)


def with_task_features(
    x_text: Any, scaling: FeatureScaling | None, tasks: Sequence[TaskInput], source: str | None
) -> Any:
    """A logistic regression's inputs: the TF-IDF rows, then the task features standardised as `scaling`
    says, read from `source` (None: the file they were fitted on); the TF-IDF alone without `scaling`."""
    if scaling is None:
        return x_text
    block = sp.csr_matrix(scaling.read([t.instance_id for t in tasks], source))
    return sp.csr_matrix(sp.hstack([sp.csr_matrix(x_text), block], format="csr"))


class LogregFit(FrozenModel):
    """A fitted TF-IDF logistic regression: what scikit-learn's `predict` reads, as plain data."""

    method: Literal["logreg"] = "logreg"
    """Marks the fit."""
    classes: list[str]
    """The oracle labels seen in training, sorted (scikit-learn's `classes_`)."""
    coef: list[list[float]]
    """`coef_`: one row per class (one row in all for two classes), one column per TF-IDF term, then one
    per task-feature column (`TfidfFeatures.scaling`)."""
    intercept: list[float]
    """`intercept_`, one per row of `coef`."""

    @classmethod
    def fit(cls, features: TfidfFeatures, seed: int, balanced: bool) -> LogregFit:
        from sklearn.linear_model import LogisticRegression

        y = features.y_train
        if len(set(y)) == 1:  # one class in train: the classifier can only predict it
            return cls(classes=[y[0]], coef=[[0.0] * features.x_train.shape[1]], intercept=[0.0])
        clf = LogisticRegression(
            C=1.0, max_iter=2000, random_state=seed, class_weight="balanced" if balanced else None
        )
        clf.fit(features.x_train, y)
        return cls(
            classes=[str(c) for c in clf.classes_],
            coef=[[float(v) for v in row] for row in clf.coef_],
            intercept=[float(v) for v in clf.intercept_],
        )

    @functools.cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.coef, dtype=np.float64), np.asarray(self.intercept, dtype=np.float64)

    def scores(self, x: Any) -> np.ndarray:
        """Decision values, one column per class: scikit-learn's `decision_function`, with the two-class
        score s written as [0, s], so that argmax (first of ties) is its `predict`."""
        coef, intercept = self._arrays
        d = np.asarray(sp.csr_matrix(x) @ coef.T) + intercept
        if len(self.classes) == 2:
            d = np.hstack([np.zeros_like(d), d])
        elif len(self.classes) == 1:
            d = np.zeros((d.shape[0], 1))
        return d

    def predict(self, x: Any) -> list[str]:
        return [self.classes[int(i)] for i in self.scores(x).argmax(axis=1)]


class KnnFit(FrozenModel):
    """A fitted TF-IDF kNN: the train tasks' TF-IDF rows (CSR) and their oracle labels."""

    method: Literal["knn"] = "knn"
    """Marks the fit."""
    k: int
    """Neighbours that vote (at most the number of train tasks)."""
    labels: list[str]
    """Oracle label of each train task, in row order."""
    n_terms: int
    """Columns of the TF-IDF rows (the vocabulary's size)."""
    data: list[float]
    """CSR values of the train rows."""
    indices: list[int]
    """CSR column indices."""
    indptr: list[int]
    """CSR row pointers (len(labels) + 1 of them)."""

    @classmethod
    def fit(cls, features: TfidfFeatures, k: int = 10) -> KnnFit:
        x = sp.csr_matrix(features.x_text_train)
        return cls(
            k=min(k, len(features.y_train)),
            labels=list(features.y_train),
            n_terms=x.shape[1],
            data=[float(v) for v in x.data],
            indices=[int(v) for v in x.indices],
            indptr=[int(v) for v in x.indptr],
        )

    @property
    def classes(self) -> list[str]:
        """The labels that can win a vote, sorted (the columns of `scores`)."""
        return sorted(set(self.labels))

    @functools.cached_property
    def _train(self) -> sp.csr_matrix:
        return sp.csr_matrix(
            (self.data, self.indices, self.indptr), shape=(len(self.labels), self.n_terms), dtype=np.float64
        )

    def scores(self, x: Any, *, leave_out: bool = False) -> np.ndarray:
        """Votes of the k nearest train tasks by cosine similarity, one column per class: argmax (first of
        ties: smallest id) is the kNN pick. `leave_out`: `x` are the train rows themselves, in order, and
        none votes for itself (k nearest of the others: `voters(leave_out=True)`)."""
        sims = (sp.csr_matrix(x) @ self._train.T).toarray()
        if leave_out:
            np.fill_diagonal(sims, -np.inf)
        column = {c: j for j, c in enumerate(self.classes)}
        votes = np.zeros((sims.shape[0], len(column)))
        for r, row in enumerate(sims):
            # Stable sort on -similarity: equal similarities keep train order, which is deterministic.
            for i in np.argsort(-row, kind="stable")[: self.voters(leave_out)]:
                votes[r, column[self.labels[i]]] += 1.0
        return votes

    def voters(self, leave_out: bool = False) -> int:
        """How many train tasks vote on each row of `scores`."""
        return min(self.k, len(self.labels) - 1) if leave_out else self.k

    def predict(self, x: Any) -> list[str]:
        return [self.classes[int(i)] for i in self.scores(x).argmax(axis=1)]


def tfidf_logreg(
    train_tasks: Sequence[TaskRecord],
    tasks: Sequence[TaskRecord],
    seed: int,
    *,
    balanced: bool = False,
    features: TfidfFeatures | None = None,
    fit: LogregFit | None = None,
) -> Decisions:
    """TF-IDF + logistic regression predicting the oracle label, fitted on `train_tasks` only.

    `balanced` weighs classes inversely to their frequency: with one dominant oracle label the plain
    classifier predicts only that label, and the balanced one shows whether the text says anything more.
    `fit`: the classifier already fitted on `features` (one fit serves routes and scores).
    """
    name = BALANCED_LOGREG_NAME if balanced else LOGREG_NAME
    f = features or TfidfFeatures(train_tasks, name)
    pred = (fit or LogregFit.fit(f, seed, balanced)).predict(f.transform(tasks))
    picks: dict[str, list[str | None]] = {t.instance_id: [p] for t, p in zip(tasks, pred, strict=True)}
    return from_labels(name, "baseline", picks)


def tfidf_knn(
    train_tasks: Sequence[TaskRecord],
    tasks: Sequence[TaskRecord],
    k: int = 10,
    *,
    features: TfidfFeatures | None = None,
    fit: KnnFit | None = None,
) -> Decisions:
    """k nearest train tasks by TF-IDF cosine similarity vote for their oracle labels (ties: smallest id)."""
    f = features or TfidfFeatures(train_tasks, "tfidf-knn")
    fit = fit or KnnFit.fit(f, k)
    pred = fit.predict(f.transform_text(tasks))
    picks: dict[str, list[str | None]] = {t.instance_id: [p] for t, p in zip(tasks, pred, strict=True)}
    return from_labels(f"tfidf-knn(k={fit.k})", "baseline", picks)


@dataclass(frozen=True)
class TextFits:
    """The text classifiers of one fit on one TF-IDF vocabulary, fitted once for routes and scores."""

    features: TfidfFeatures
    """The TF-IDF of the train tasks."""
    logreg: LogregFit
    """`tfidf-logreg`."""
    logreg_balanced: LogregFit
    """`tfidf-logreg(balanced)`."""
    knn: KnnFit
    """`tfidf-knn`."""

    @classmethod
    def fit(cls, train_tasks: Sequence[TaskRecord], seed: int, task_features: str | None = None) -> TextFits:
        """Fit all three (`task_features`: the logistic regressions' extra inputs, `TfidfFeatures`)."""
        f = TfidfFeatures(train_tasks, task_features=task_features)
        return cls(f, LogregFit.fit(f, seed, False), LogregFit.fit(f, seed, True), KnnFit.fit(f))


def fitted_baselines(
    train_tasks: Sequence[TaskRecord],
    tasks: Sequence[TaskRecord],
    model_ids: Sequence[str],
    seed: int,
    *,
    fits: TextFits | None = None,
    task_features: str | None = None,
) -> list[Decisions]:
    """Every baseline that learns from train tasks, fitted on `train_tasks` and routing `tasks`
    (`fits`: its text classifiers, fitted already on `train_tasks`; else fitted here, the logistic
    regressions reading `task_features` too)."""
    fits = fits or TextFits.fit(train_tasks, seed, task_features)
    f = fits.features
    return [
        always_cheapest(train_tasks, tasks, model_ids),
        tfidf_logreg(train_tasks, tasks, seed, features=f, fit=fits.logreg),
        tfidf_logreg(train_tasks, tasks, seed, balanced=True, features=f, fit=fits.logreg_balanced),
        tfidf_knn(train_tasks, tasks, features=f, fit=fits.knn),
    ]


def fixed_baselines(tasks: Sequence[TaskRecord], model_ids: Sequence[str], seed: int) -> list[Decisions]:
    """Every baseline that learns nothing: each model always, the oracle, uniform random."""
    return [
        *(always(m, tasks) for m in model_ids),
        oracle(tasks),
        uniform_random(tasks, model_ids, seed),
        uniform_random_expected(tasks, model_ids),
    ]
