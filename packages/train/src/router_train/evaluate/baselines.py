"""Built-in routers every trained router must beat, each fitted (where it learns) on train tasks only."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from router_oracle.table import TaskRecord
from router_train.evaluate.decisions import Decisions, EvaluateError, from_distributions, from_labels
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


def cheapest_model(train_tasks: Sequence[TaskRecord], model_ids: Sequence[str]) -> str:
    """The model with the lowest mean cost per task on the train tasks (ties: smallest id)."""
    if not train_tasks:
        raise EvaluateError("always-cheapest needs train tasks to measure costs on; the train split is empty")
    mean = {m: sum(t.per_model[m].cost for t in train_tasks) / len(train_tasks) for m in model_ids}
    return min(sorted(mean), key=lambda m: mean[m])


def always_cheapest(
    train_tasks: Sequence[TaskRecord], tasks: Sequence[TaskRecord], model_ids: Sequence[str]
) -> Decisions:
    """Route everything to the model that was cheapest on the train tasks."""
    m = cheapest_model(train_tasks, model_ids)
    return from_labels(CHEAPEST_NAME, "baseline", {t.instance_id: [m] for t in tasks})


class TfidfFeatures:
    """TF-IDF of the task text (`router_train.text_features`), fitted on train tasks only; shared by the
    text classifiers of one fit."""

    def __init__(self, train_tasks: Sequence[TaskRecord], name: str = "tfidf") -> None:
        if len(train_tasks) < 2:
            raise EvaluateError(f"{name} needs at least 2 train tasks, got {len(train_tasks)}")
        self.vocabulary, self.idf = fit_tfidf(train_tasks)
        self.x_train = self.transform(train_tasks)
        self.y_train = [t.oracle for t in train_tasks]

    def transform(self, tasks: Sequence[TaskRecord]) -> Any:
        return tfidf_matrix(tasks, self.vocabulary, self.idf)


def tfidf_logreg(
    train_tasks: Sequence[TaskRecord],
    tasks: Sequence[TaskRecord],
    seed: int,
    *,
    balanced: bool = False,
    features: TfidfFeatures | None = None,
    classifier: Any = None,
) -> Decisions:
    """TF-IDF + logistic regression predicting the oracle label, fitted on `train_tasks` only.

    `balanced` weighs classes inversely to their frequency: with one dominant oracle label the plain
    classifier predicts only that label, and the balanced one shows whether the text says anything more.
    `classifier`: its `fit_logreg` already fitted on `features` (the curves reuse one fit for scores).
    """
    name = "tfidf-logreg(balanced)" if balanced else "tfidf-logreg"
    f = features or TfidfFeatures(train_tasks, name)
    y = f.y_train
    picks: dict[str, list[str | None]]
    clf = classifier if classifier is not None else fit_logreg(f, seed, balanced=balanced)
    if clf is None:  # one class in train: the classifier can only predict it
        picks = {t.instance_id: [y[0]] for t in tasks}
    else:
        pred = clf.predict(f.transform(tasks))
        picks = {t.instance_id: [str(p)] for t, p in zip(tasks, pred, strict=True)}
    return from_labels(name, "baseline", picks)


def fit_logreg(f: TfidfFeatures, seed: int, *, balanced: bool = False) -> Any:
    """The logistic regression of `tfidf_logreg` fitted on `f`'s train tasks; None with one class."""
    from sklearn.linear_model import LogisticRegression

    if len(set(f.y_train)) == 1:
        return None
    clf = LogisticRegression(
        C=1.0, max_iter=2000, random_state=seed, class_weight="balanced" if balanced else None
    )
    clf.fit(f.x_train, f.y_train)
    return clf


def tfidf_knn(
    train_tasks: Sequence[TaskRecord],
    tasks: Sequence[TaskRecord],
    k: int = 10,
    *,
    features: TfidfFeatures | None = None,
) -> Decisions:
    """k nearest train tasks by TF-IDF cosine similarity vote for their oracle labels (ties: smallest id)."""
    f = features or TfidfFeatures(train_tasks, "tfidf-knn")
    labels = sorted(set(f.y_train))
    votes, k = knn_votes(f, tasks, labels, k)
    picks: dict[str, list[str | None]] = {}
    for t, row in zip(tasks, votes, strict=True):
        picks[t.instance_id] = [labels[int(np.argmax(row))]]  # ties: the smallest id (labels sorted)
    return from_labels(f"tfidf-knn(k={k})", "baseline", picks)


def knn_votes(
    f: TfidfFeatures,
    tasks: Sequence[TaskRecord],
    labels: Sequence[str],
    k: int = 10,
    *,
    leave_out: bool = False,
) -> tuple[np.ndarray, int]:
    """(votes, k): per task, how many of its k nearest train tasks by TF-IDF cosine similarity have each
    of `labels` as oracle label, shape (tasks, labels). `leave_out`: `tasks` are the train tasks, in
    order, and none is its own neighbour."""
    y = f.y_train
    sims = (f.transform(tasks) @ f.x_train.T).toarray()
    if leave_out:
        np.fill_diagonal(sims, -np.inf)
    k = min(k, len(y) - (1 if leave_out else 0))
    col = {m: j for j, m in enumerate(labels)}
    votes = np.zeros((len(tasks), len(labels)))
    for r, row in enumerate(sims):
        # Stable sort on -similarity: equal similarities keep train order, which is deterministic.
        for i in np.argsort(-row, kind="stable")[:k]:
            if y[i] in col:
                votes[r, col[y[i]]] += 1.0
    return votes, k


def fitted_baselines(
    train_tasks: Sequence[TaskRecord],
    tasks: Sequence[TaskRecord],
    model_ids: Sequence[str],
    seed: int,
    *,
    features: TfidfFeatures | None = None,
    classifiers: tuple[Any, Any] = (None, None),
) -> list[Decisions]:
    """Every baseline that learns from train tasks, fitted on `train_tasks` and routing `tasks`.

    `features`, `classifiers` (plain, balanced `fit_logreg`): fitted already on `train_tasks`."""
    features = features or TfidfFeatures(train_tasks)
    return [
        always_cheapest(train_tasks, tasks, model_ids),
        tfidf_logreg(train_tasks, tasks, seed, features=features, classifier=classifiers[0]),
        tfidf_logreg(train_tasks, tasks, seed, balanced=True, features=features, classifier=classifiers[1]),
        tfidf_knn(train_tasks, tasks, features=features),
    ]


def fixed_baselines(tasks: Sequence[TaskRecord], model_ids: Sequence[str], seed: int) -> list[Decisions]:
    """Every baseline that learns nothing: each model always, the oracle, uniform random."""
    return [
        *(always(m, tasks) for m in model_ids),
        oracle(tasks),
        uniform_random(tasks, model_ids, seed),
        uniform_random_expected(tasks, model_ids),
    ]
