"""What a router may see of a task -> its IRT parameters (a_i, b_i): kernel ridge in its dual form.

Features (fitted on train tasks only): the project's TF-IDF (`router_train.text_features`), a one-hot of the
repository, the log length of the issue, optionally a pre-pass's task features (`--task-features`,
standardised on the train tasks; a task without them is refused), and optionally a block of pretrained
text embeddings (any instance id -> vector map; a task without one gets zeros). The dual form solves an
(n x n) system, n the train tasks, so 400 tasks x 5,000 words cost a few milliseconds. The residual
variance of each target on held-out tasks (measured by the caller's inner folds) says how much the text
leaves unknown; the router integrates it out (`router.resolve_probabilities`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.table import TaskRecord
from router_oracle.task_input import TaskInput
from router_train.task_features import FeatureScaling
from router_train.text_features import fit_tfidf, tfidf_matrix

REPO_WEIGHT = 1.0
"""Scale of the repository one-hot against the l2-normalised TF-IDF row."""


@dataclass(frozen=True)
class FeatureSpace:
    """How tasks become feature rows: fitted on train tasks, plain data."""

    vocabulary: tuple[str, ...]
    idf: tuple[float, ...]
    repos: tuple[str, ...]
    embeddings: Mapping[str, np.ndarray] | None = None
    """Optional instance id -> vector block (l2-normalised on use)."""
    task_features: FeatureScaling | None = None
    """A pre-pass's task features, standardised on the train tasks (`--task-features`), or None."""
    task_features_source: str | None = None
    """Where routed tasks' features are read (None: the file they were fitted on)."""

    @classmethod
    def fit(
        cls,
        tasks: Sequence[TaskRecord],
        embeddings: Mapping[str, np.ndarray] | None = None,
        task_features: str | None = None,
    ) -> FeatureSpace:
        vocab, idf = fit_tfidf(tasks)
        ids = [t.instance_id for t in tasks]
        scaling = None if task_features is None else FeatureScaling.fit_source(task_features, ids)
        repos = tuple(sorted({t.repo for t in tasks}))
        return cls(tuple(vocab), tuple(idf), repos, embeddings, scaling, task_features)

    def matrix(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        """Dense (tasks, features) rows."""
        blocks = [tfidf_matrix(tasks, self.vocabulary, self.idf).toarray()]
        index = {r: j for j, r in enumerate(self.repos)}
        onehot = np.zeros((len(tasks), len(self.repos)))
        for i, t in enumerate(tasks):
            if t.repo in index:
                onehot[i, index[t.repo]] = REPO_WEIGHT
        blocks.append(onehot)
        blocks.append(np.asarray([[math.log1p(len(t.problem_statement)) / 10] for t in tasks]))
        if self.task_features is not None:
            z = self.task_features.read([t.instance_id for t in tasks], self.task_features_source)
            # z-scores over c columns have a squared norm of about c; scaled to about 1, the l2-normalised
            # TF-IDF row's, so that one ridge penalty weighs the text and the features alike.
            blocks.append(z / math.sqrt(len(self.task_features.columns)))
        if self.embeddings is not None:
            dim = len(next(iter(self.embeddings.values())))
            emb = np.zeros((len(tasks), dim))
            for i, t in enumerate(tasks):
                v = self.embeddings.get(t.instance_id)
                if v is not None:
                    emb[i] = v / max(float(np.linalg.norm(v)), 1e-12)
            blocks.append(emb)
        return np.hstack(blocks)


@dataclass(frozen=True)
class TaskRegressor:
    """Ridge from features to targets (tasks, d): predict = (x - x_mean) @ w + y_mean."""

    x_mean: np.ndarray
    w: np.ndarray
    y_mean: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, alpha: float) -> TaskRegressor:
        """Ridge with penalty `alpha`, solved in the dual ((n x n) system), intercept unpenalised."""
        return DualRidge.of(x).regressor(y, alpha)

    def predict(self, x: np.ndarray) -> np.ndarray:
        out: np.ndarray = (x - self.x_mean) @ self.w + self.y_mean
        return out


@dataclass(frozen=True)
class DualRidge:
    """One feature matrix's centred Gram eigendecomposition: ridge for any targets and alpha in O(n^2)."""

    x_mean: np.ndarray
    xc: np.ndarray
    eigvals: np.ndarray
    eigvecs: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray) -> DualRidge:
        xm = x.mean(axis=0)
        xc = x - xm
        vals, vecs = np.linalg.eigh(xc @ xc.T)
        return cls(xm, xc, np.clip(vals, 0.0, None), vecs)

    def regressor(self, y: np.ndarray, alpha: float) -> TaskRegressor:
        """The ridge regressor of targets `y` (tasks, d) with penalty `alpha` > 0."""
        ym = y.mean(axis=0)
        dual = self.eigvecs @ ((self.eigvecs.T @ (y - ym)) / (self.eigvals + alpha)[:, None])
        return TaskRegressor(x_mean=self.x_mean, w=self.xc.T @ dual, y_mean=ym)
