"""What a router may see of a task -> its IRT parameters (a_i, b_i): kernel ridge in its dual form.

Features (fitted on train tasks only): the project's TF-IDF (`router_train.text_features`), a one-hot of the
repository, the log length of the issue, and optionally a block of pretrained text embeddings (any
instance id -> vector map; a task without one gets zeros). The dual form solves an (n x n) system, n the
train tasks, so 400 tasks x 5,000 words cost a few milliseconds. The residual variance of each target on
held-out tasks (measured by the caller's inner folds) says how much the text leaves unknown; the router
integrates it out (`router.resolve_probabilities`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.table import TaskRecord
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

    @classmethod
    def fit(
        cls, tasks: Sequence[TaskRecord], embeddings: Mapping[str, np.ndarray] | None = None
    ) -> FeatureSpace:
        vocab, idf = fit_tfidf(tasks)
        return cls(tuple(vocab), tuple(idf), tuple(sorted({t.repo for t in tasks})), embeddings)

    def matrix(self, tasks: Sequence[TaskRecord]) -> np.ndarray:
        """Dense (tasks, features) rows."""
        blocks = [tfidf_matrix(tasks, self.vocabulary, self.idf).toarray()]
        index = {r: j for j, r in enumerate(self.repos)}
        onehot = np.zeros((len(tasks), len(self.repos)))
        for i, t in enumerate(tasks):
            if t.repo in index:
                onehot[i, index[t.repo]] = REPO_WEIGHT
        blocks.append(onehot)
        blocks.append(np.asarray([[math.log1p(len(t.problem_statement)) / 10] for t in tasks]))
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
