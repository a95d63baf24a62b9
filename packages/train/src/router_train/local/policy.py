"""The local router: a softmax over the pool's model ids, linear in the task's features; and the linear
task part (`LinearTaskModel`), softmax and greedy pick the any-pool router shares."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from router_oracle.task_input import TaskInput
from router_train.local.config import FeatureConfig
from router_train.local.features import FeatureState, feature_dim, featurize


def softmax(logits: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Row-wise softmax; with `mask`, over its True entries only (the others get probability 0)."""
    z = logits if mask is None else np.where(mask, logits, -np.inf)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    out: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return out


def greedy(ids: Sequence[str], probs: np.ndarray) -> list[str]:
    """The most probable id per row (ties go to the earlier id)."""
    return [ids[int(i)] for i in probs.argmax(axis=1)]


class LinearTaskModel:
    """x(task) @ weights + bias, with `columns` weight columns: the part of a router linear in the task."""

    def __init__(
        self,
        features: FeatureConfig,
        feature_state: FeatureState,
        weights: np.ndarray,
        bias: np.ndarray,
        columns: int,
    ) -> None:
        dim = feature_dim(features, feature_state)
        if weights.shape != (dim, columns) or bias.shape != (columns,):
            raise ValueError(
                f"policy shapes do not match: weights {weights.shape}, bias {bias.shape}, "
                f"expected ({dim}, {columns}) and ({columns},)"
            )
        self.features = features
        self.feature_state = feature_state
        self.weights = weights
        self.bias = bias

    def featurize(self, tasks: Sequence[TaskInput]) -> sp.csr_matrix:
        """Task features (reads each task's repo and issue text only)."""
        return featurize(self.features, self.feature_state, tasks)

    def task_vectors(self, x: sp.csr_matrix) -> np.ndarray:
        """x @ weights + bias, shape (tasks, columns)."""
        out: np.ndarray = np.asarray(x @ self.weights) + self.bias
        return out


class RouterPolicy(LinearTaskModel):
    """pi(model | task) = softmax(features(task) @ weights + bias), columns in `pool_ids` order."""

    def __init__(
        self,
        pool_ids: Sequence[str],
        features: FeatureConfig,
        feature_state: FeatureState,
        weights: np.ndarray,
        bias: np.ndarray,
    ) -> None:
        super().__init__(features, feature_state, weights, bias, len(pool_ids))
        self.pool_ids: list[str] = list(pool_ids)

    def probabilities_from_features(self, x: sp.csr_matrix) -> np.ndarray:
        return softmax(self.task_vectors(x))

    def logits(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        """Unnormalised log-probabilities, shape (len(tasks), len(pool_ids))."""
        return self.task_vectors(self.featurize(tasks))

    def probabilities(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        """Routing distribution, shape (len(tasks), len(pool_ids)); rows sum to 1."""
        if not tasks:
            return np.zeros((0, len(self.pool_ids)))
        return self.probabilities_from_features(self.featurize(tasks))

    def route(self, tasks: Sequence[TaskInput]) -> list[str]:
        """Greedy routes: the most probable model id per task (ties go to the earlier pool model)."""
        return greedy(self.pool_ids, self.probabilities(tasks))

    def route_from_features(self, x: sp.csr_matrix) -> list[str]:
        """`route` of tasks featurised already (`featurize`)."""
        return greedy(self.pool_ids, self.probabilities_from_features(x))
