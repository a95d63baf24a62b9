"""Built-in routers every trained router must beat, each fitted (where it learns) on train tasks only."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from router_oracle.table import TaskRecord
from router_train.evaluate.decisions import Decisions, EvaluateError, from_distributions, from_labels


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


def cheapest_model(train_tasks: Sequence[TaskRecord], model_ids: Sequence[str]) -> str:
    """The model with the lowest mean cost per task on the train tasks (ties: smallest id)."""
    if not train_tasks:
        raise EvaluateError("always-cheapest needs train tasks to measure costs on; the train split is empty")
    mean = {m: sum(t.per_model[m].cost for t in train_tasks) / len(train_tasks) for m in model_ids}
    return min(sorted(mean), key=lambda m: mean[m])


def always_cheapest(
    train_tasks: Sequence[TaskRecord], tasks: Sequence[TaskRecord], model_ids: Sequence[str]
) -> Decisions:
    """Route everything to the model that was cheapest on the train split."""
    m = cheapest_model(train_tasks, model_ids)
    return from_labels(f"cheapest:{m}", "baseline", {t.instance_id: [m] for t in tasks})


def task_text(task: TaskRecord) -> str:
    """What the text classifiers read: the repository and the issue (never outcomes)."""
    return f"{task.repo}\n{task.problem_statement}"


def _fit_vectorizer(train_tasks: Sequence[TaskRecord]) -> tuple[Any, Any]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    # Unigrams, 5000 terms: bigrams and more terms cost 4x the time here and changed no prediction.
    vec = TfidfVectorizer(sublinear_tf=True, min_df=2, max_features=5000)
    x = vec.fit_transform([task_text(t) for t in train_tasks])
    return vec, x


def _check_train(train_tasks: Sequence[TaskRecord], name: str) -> None:
    if len(train_tasks) < 2:
        raise EvaluateError(f"{name} needs at least 2 train tasks, got {len(train_tasks)}")


def tfidf_logreg(
    train_tasks: Sequence[TaskRecord], tasks: Sequence[TaskRecord], seed: int, *, balanced: bool = False
) -> Decisions:
    """TF-IDF + logistic regression predicting the oracle label, fitted on `train_tasks` only.

    `balanced` weighs classes inversely to their frequency: with one dominant oracle label the plain
    classifier predicts only that label, and the balanced one shows whether the text says anything more.
    """
    from sklearn.linear_model import LogisticRegression

    name = "tfidf-logreg(balanced)" if balanced else "tfidf-logreg"

    _check_train(train_tasks, name)
    vec, x = _fit_vectorizer(train_tasks)
    y = [t.oracle for t in train_tasks]
    picks: dict[str, list[str | None]]
    if len(set(y)) == 1:  # one class in train: the classifier can only predict it
        picks = {t.instance_id: [y[0]] for t in tasks}
    else:
        clf = LogisticRegression(
            C=1.0, max_iter=2000, random_state=seed, class_weight="balanced" if balanced else None
        )
        clf.fit(x, y)
        pred = clf.predict(vec.transform([task_text(t) for t in tasks]))
        picks = {t.instance_id: [str(p)] for t, p in zip(tasks, pred, strict=True)}
    return from_labels(name, "baseline", picks)


def tfidf_knn(train_tasks: Sequence[TaskRecord], tasks: Sequence[TaskRecord], k: int = 10) -> Decisions:
    """k nearest train tasks by TF-IDF cosine similarity vote for their oracle labels (ties: smallest id)."""
    _check_train(train_tasks, "tfidf-knn")
    vec, x = _fit_vectorizer(train_tasks)
    y = [t.oracle for t in train_tasks]
    sims = (vec.transform([task_text(t) for t in tasks]) @ x.T).toarray()
    k = min(k, len(train_tasks))
    picks: dict[str, list[str | None]] = {}
    for t, row in zip(tasks, sims, strict=True):
        # Stable sort on -similarity: equal similarities keep train order, which is deterministic.
        nearest = np.argsort(-row, kind="stable")[:k]
        votes: dict[str, float] = {}
        for i in nearest:
            votes[y[i]] = votes.get(y[i], 0.0) + 1.0
        picks[t.instance_id] = [min(sorted(votes), key=lambda m: -votes[m])]
    return from_labels(f"tfidf-knn(k={k})", "baseline", picks)
