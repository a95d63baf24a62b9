"""The local router: a softmax over the pool's model ids, linear in the task's features."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from router_oracle.table import TaskRecord
from router_train.local.config import FeatureConfig
from router_train.local.features import FeatureState, feature_dim, featurize


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return out


class RouterPolicy:
    """pi(model | task) = softmax(features(task) @ weights + bias), columns in `pool_ids` order."""

    def __init__(
        self,
        pool_ids: Sequence[str],
        features: FeatureConfig,
        feature_state: FeatureState,
        weights: np.ndarray,
        bias: np.ndarray,
    ) -> None:
        dim = feature_dim(features, feature_state)
        if weights.shape != (dim, len(pool_ids)) or bias.shape != (len(pool_ids),):
            raise ValueError(
                f"policy shapes do not match: weights {weights.shape}, bias {bias.shape}, "
                f"expected ({dim}, {len(pool_ids)}) and ({len(pool_ids)},)"
            )
        self.pool_ids: list[str] = list(pool_ids)
        self.features = features
        self.feature_state = feature_state
        self.weights = weights
        self.bias = bias

    def featurize(self, tasks: Sequence[TaskRecord]) -> sp.csr_matrix:
        return featurize(self.features, self.feature_state, tasks)

    def probabilities_from_features(self, x: sp.csr_matrix) -> np.ndarray:
        return softmax(np.asarray(x @ self.weights) + self.bias)

    def logits(self, tasks: Sequence[TaskRecord]) -> np.ndarray:
        """Unnormalised log-probabilities, shape (len(tasks), len(pool_ids))."""
        out: np.ndarray = np.asarray(self.featurize(tasks) @ self.weights) + self.bias
        return out

    def probabilities(self, tasks: Sequence[TaskRecord]) -> np.ndarray:
        """Routing distribution, shape (len(tasks), len(pool_ids)); rows sum to 1."""
        if not tasks:
            return np.zeros((0, len(self.pool_ids)))
        return self.probabilities_from_features(self.featurize(tasks))

    def route(self, tasks: Sequence[TaskRecord]) -> list[str]:
        """Greedy routes: the most probable model id per task (ties go to the earlier pool model)."""
        return self._greedy(self.probabilities(tasks))

    def route_from_features(self, x: sp.csr_matrix) -> list[str]:
        """`route` of tasks featurised already (`featurize`)."""
        return self._greedy(self.probabilities_from_features(x))

    def _greedy(self, probs: np.ndarray) -> list[str]:
        return [self.pool_ids[int(i)] for i in probs.argmax(axis=1)]
